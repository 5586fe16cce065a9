import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import { CARD_EVENTS_WEBHOOK_PATH } from '../../src/events/webhook-receiver.ts';
import { redactPans } from '../../src/lib/pan.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import {
  assertNoTestPanIn,
  LOG_START_CURSOR,
  notification,
  postGraphql,
  postNotification,
  SANDBOX_OWNER,
  type Stack,
  startStack,
  subscribeCardEvents,
  TEST_WEBHOOK_SECRET,
  testToken,
} from '../support/fixtures.ts';
import {
  loadProviderExamples,
  type ProviderExample,
  REPLAY_CLIENT,
  REPLAY_TOKEN_PATH,
  REPLAY_VAULT,
  type ReplayRequest,
  type ReplayUpstream,
  startReplayUpstream,
} from '../support/replay-upstream.ts';

/**
 * The provider's documented examples as contract tests (issue 19 item 5). Every example of
 * `shared/provider-docs/examples.json` has a row below, keyed by area, method and path: a GraphQL
 * operation sent through the gateway (`UPSTREAM=remote`) in front of a replay upstream that answers
 * exactly the documented bodies and statuses (test/support/replay-upstream.ts), the values the graph
 * must give for them, field by field, and what the gateway must have sent. Documented notifications
 * are signed as the sandbox signs them (contract §4), posted to the gateway's receiver and read back
 * from a live subscription and from the history. The same operations then run against the embedded
 * sandbox in both wires.
 *
 * An example is *rejected* when the operation answers an error (GraphQL error or typed error result)
 * and *lossy* when a documented member the graph has a field for comes back null or different.
 */

// ─── The examples and how values are compared ────────────────────────────────────────────────────

const EXAMPLES = loadProviderExamples();

/** `area method path`, with ` #2` (…) for a later example of the same key (two `GET /cards/{id}`). */
const KEYED: readonly { key: string; example: ProviderExample }[] = EXAMPLES.map((example, index) => {
  const key = `${example.area} ${example.method} ${example.path}`;
  const earlier = EXAMPLES.slice(0, index).filter((e) => `${e.area} ${e.method} ${e.path}` === key).length;
  return { key: earlier === 0 ? key : `${key} #${earlier + 1}`, example };
});

function exampleOf(key: string): ProviderExample {
  const found = KEYED.find((k) => k.key === key);
  if (!found) throw new Error(`no documented example ${key}`);
  return found.example;
}

/** An expected date-time: equal when it names the same instant (a zone-less time is UTC, gap decisions). */
class Instant {
  readonly iso: string;
  readonly ms: number;
  constructor(iso: string) {
    this.iso = iso;
    this.ms = instantMs(iso);
  }
}
const at = (iso: string) => new Instant(iso);

/** An expected value the sandbox generates (ids, aliases): any string matching `pattern`. */
class Matching {
  readonly pattern: RegExp;
  constructor(pattern: RegExp) {
    this.pattern = pattern;
  }
}
const matching = (pattern: RegExp) => new Matching(pattern);

function instantMs(iso: string): number {
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/.test(iso) ? iso : `${iso}Z`;
  // Date.parse reads at most milliseconds; longer fractions (microseconds) are cut, not rounded.
  return Date.parse(zoned.replace(/(\.\d{3})\d+/, '$1'));
}

/** JSON for a failure message, with any card number masked (a leak must not be re-printed). */
function shown(value: unknown): string {
  return redactPans(JSON.stringify(value) ?? 'undefined');
}

/**
 * Every member of `expected` that `actual` does not give: `path: documented …, got …`. Only the
 * members of `expected` are compared (the operation selects exactly those).
 */
function differences(expected: unknown, actual: unknown, path: string): string[] {
  if (expected instanceof Instant) {
    return typeof actual === 'string' && instantMs(actual) === expected.ms
      ? []
      : [`${path}: documented ${expected.iso}, got ${shown(actual)}`];
  }
  if (expected instanceof Matching) {
    return typeof actual === 'string' && expected.pattern.test(actual)
      ? []
      : [`${path}: expected ${expected.pattern}, got ${shown(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return [`${path}: documented ${shown(expected)}, got ${shown(actual)}`];
    }
    return expected.flatMap((item, i) => differences(item, actual[i], `${path}[${i}]`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') {
      return [`${path}: documented ${shown(expected)}, got ${shown(actual)}`];
    }
    return Object.entries(expected).flatMap(([member, value]) =>
      differences(value, (actual as Record<string, unknown>)[member], `${path}.${member}`),
    );
  }
  return Object.is(expected, actual) ? [] : [`${path}: documented ${shown(expected)}, got ${shown(actual)}`];
}

// ─── GraphQL operations ──────────────────────────────────────────────────────────────────────────

const ERROR_FIELDS = '... on Error { __typename code message } ... on UpstreamError { status retryable }';

const V1_CARD = `cardId name number maskedNumber expMonth expYear capabilities createdAt updatedAt state event vaultId
  billingAddress { name company address1 address2 city region country postalCode phone }`;

const NETWORK_TOKEN = `panAlias networkTokenLast4 expiresAt state usable createdAt updatedAt cardLast4 cardBin
  cardExpiresAt vaultId holderInfo { name email phoneNumber
    billingAddress { name company address1 address2 city region country postalCode phone } }`;

/** One GraphQL operation: its text and the root field whose result union it reads. */
interface Operation {
  query: string;
  /** Root field whose `Success.data` is compared. */
  field: string;
}

function operation(
  kind: 'query' | 'mutation',
  signature: string,
  field: string,
  call: string,
  selection: string,
) {
  return {
    field,
    query: `${kind} ${signature} { ${field}${call} { __typename ... on ${successType(kind, field)} { data { ${selection} } } ${ERROR_FIELDS} } }`,
  } satisfies Operation;
}

function successType(kind: 'query' | 'mutation', field: string): string {
  return `${kind === 'query' ? 'Query' : 'Mutation'}${field[0]!.toUpperCase()}${field.slice(1)}Success`;
}

const OPERATIONS = {
  enrol: operation(
    'mutation',
    'ReplayEnrol($input: EnrollAccountUpdaterCardInput!)',
    'enrollAccountUpdaterCard',
    '(input: $input)',
    V1_CARD,
  ),
  v1Card: operation(
    'query',
    'ReplayV1Card($cardId: String!)',
    'accountUpdaterCard',
    '(cardId: $cardId)',
    V1_CARD,
  ),
  cardCheck: operation(
    'mutation',
    'ReplayCardCheck($input: CheckAccountUpdaterCardInput!)',
    'checkAccountUpdaterCard',
    '(input: $input)',
    'name number maskedNumber expMonth expYear failureCode event merchant { serviceMerchantId subMerchantName subMerchantMid }',
  ),
  provision: operation(
    'mutation',
    'ReplayProvision($input: ProvisionNetworkTokenInput!)',
    'provisionNetworkToken',
    '(input: $input)',
    NETWORK_TOKEN,
  ),
  networkToken: operation(
    'query',
    'ReplayNetworkToken($panAlias: String!)',
    'networkToken',
    '(panAlias: $panAlias)',
    NETWORK_TOKEN,
  ),
  deleteNetworkToken: operation(
    'mutation',
    'ReplayDeleteNetworkToken($panAlias: String!)',
    'deleteNetworkToken',
    '(panAlias: $panAlias)',
    NETWORK_TOKEN,
  ),
  cardAttributes: operation(
    'query',
    'ReplayCardAttributes($number: String!)',
    'cardAttributes',
    '(number: $number)',
    `bin brand issuingOrganization cardType cardCategory issuingCountryName issuingCountryCode maximumPanLength
     cardCommercialType regulationStatus version prepaidType cobadgedBrands`,
  ),
  members: operation(
    'query',
    'ReplayMembers($id: String!, $first: Int)',
    'organization',
    '(id: $id)',
    `id members(first: $first) { edges { node { id name emailAddress role permissions ssoId createdAt
       vaults { role vault { id name environment } } } } pageInfo { hasNextPage } }`,
  ),
  createCard: operation(
    'mutation',
    'ReplayCreateCard($input: CreateCardInput!)',
    'createCard',
    '(input: $input)',
    'cardId panAlias cvcAlias cvcStatus bin last4 expMonth expYear vaultId',
  ),
  subscribe: operation(
    'mutation',
    'ReplaySubscribe($cardId: String!)',
    'subscribeCardUpdates',
    '(cardId: $cardId)',
    'subscriptionId state createdAt updatedAt',
  ),
  unsubscribe: operation(
    'mutation',
    'ReplayUnsubscribe($cardId: String!)',
    'unsubscribeCardUpdates',
    '(cardId: $cardId)',
    'cardId panAlias cvcStatus bin last4 updateSubscription { subscriptionId state }',
  ),
  check: operation(
    'mutation',
    'ReplayCheck($cardId: String!)',
    'checkCardUpdates',
    '(cardId: $cardId)',
    'event updatedValues { fieldName oldValue newValue }',
  ),
  viewer: { field: 'viewer', query: 'query ReplayViewer { viewer { scopes } }' },
} as const satisfies Record<string, Operation>;

// ─── The table: one row per documented example ───────────────────────────────────────────────────

/** An example answered by a REST call of the gateway: what to send and what must come back. */
interface CallRow {
  kind: 'call';
  operation: Operation;
  variables: Record<string, unknown>;
  /** `data` of the Success result, exact documented values (null: the example does not show it). */
  expected: unknown;
  /**
   * The upstream requests the operation must make: method, path below the replay root, and the exact
   * JSON body (nothing more, nothing less), or a `check` of the body answering what differs.
   */
  sent: readonly { method: string; path: string; body?: unknown; check?: (body: unknown) => string[] }[];
  /** The same operation on the embedded sandbox: variables from sandbox-made resources, values it gives. */
  sandbox: (run: SandboxRun) => Promise<{ variables: Record<string, unknown>; expected: unknown }>;
}

/** A documented notification shape: checked by the notification cases of the same key. */
interface NotificationRow {
  kind: 'notification';
}

/** A documented fact that is no REST call of its own (token request, scope names, signature header). */
interface FactRow {
  kind: 'fact';
  check: (context: ReplayContext) => Promise<void>;
}

type Row = CallRow | NotificationRow | FactRow;

const V1_CARD_ID = 'CRDuVQCsenqj6dbHFQq9gen2E';
const CMP_CARD_ID = 'CRDecqZp3xRgXU3TFmtcDdzQs';
const DOCUMENTED_ALIAS = '9914040119524512000';
const ORGANIZATION_ID = 'ACsUNAGQN3Lv875yyqZiLQ2s';
/** Card numbers and security code the documented answers and requests carry. */
const DOCUMENTED_PANS = ['4111111111111111', '5573491171027312', '4111-1111-1111-1111'];

const DOCUMENTED_BILLING_ADDRESS = {
  name: 'John Doe',
  company: 'John Doe Company',
  address1: '555 Example St',
  address2: 'M13 9PL',
  city: 'New York',
  region: 'NY',
  country: 'US',
  postalCode: '12301',
  phone: '+14842634673',
};

const DOCUMENTED_V1_CARD = {
  cardId: V1_CARD_ID,
  name: 'John Doe',
  number: '5573495XTjZP21V7312',
  maskedNumber: '557349******7312',
  expMonth: 7,
  expYear: 24,
  capabilities: ['ACCOUNT_UPDATER'],
  createdAt: at('2019-05-15T12:30:45Z'),
  updatedAt: at('2019-05-15T12:30:45Z'),
  state: 'ENROLLED',
  event: 'ENROLLED',
  vaultId: REPLAY_VAULT,
  billingAddress: DOCUMENTED_BILLING_ADDRESS,
};

/** The documented network token (`GET`), the holder's billing address complete. */
const DOCUMENTED_TOKEN = {
  panAlias: DOCUMENTED_ALIAS,
  networkTokenLast4: '2345',
  expiresAt: '2023-12',
  state: 'ACTIVE',
  usable: true,
  createdAt: at('2019-05-15T12:30:45Z'),
  updatedAt: at('2019-05-15T12:30:45Z'),
  cardLast4: '0010',
  cardBin: '489537',
  cardExpiresAt: '2023-12',
  vaultId: REPLAY_VAULT,
  holderInfo: {
    name: 'Jane Doe',
    email: '[email protected]',
    phoneNumber: '+1415-123-4567',
    billingAddress: {
      name: 'John Doe',
      company: 'John Doe Company',
      address1: '555 Unblock Us St',
      address2: 'M13 9PL',
      city: 'New York',
      region: 'CA',
      country: 'US',
      postalCode: '12301',
      phone: '+14842634673',
    },
  },
};

const DOCUMENTED_CARD_RECORD = {
  cardId: CMP_CARD_ID,
  panAlias: 'tok_sandbox_hhyPgvvdFfFGBnyi73TfFu',
  cvcStatus: 'active',
  bin: '411111',
  last4: '1111',
};

/** The card interface card the graph creates, as the documented request names its attributes. */
const CREATE_CARD_SENT = {
  pan: '4111111111111111',
  cvc: '123',
  cvc_status: 'active',
  exp_month: 4,
  exp_year: 28,
};

const ROWS: Record<string, Row> = {
  'oauth POST https://auth.verygoodsecurity.com/auth/realms/vgs/protocol/openid-connect/token': {
    kind: 'fact',
    // The documented token request: form fields client_id, client_secret and
    // grant_type=client_credentials, no scope (§8); every area call then carries an issued token.
    async check({ stack, replay, token }) {
      await postGraphql(stack.url, { query: OPERATIONS.viewer.query }, token);
      await postGraphql(
        stack.url,
        { query: OPERATIONS.members.query, variables: { id: ORGANIZATION_ID } },
        token,
      );
      const tokenRequests = replay.requestsTo('POST', REPLAY_TOKEN_PATH);
      expect(tokenRequests.length).toBeGreaterThan(0);
      for (const sent of tokenRequests) {
        expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded');
        expect(sent.headers.authorization, 'credentials as form fields, not HTTP Basic').toBeUndefined();
        expect(Object.fromEntries(new URLSearchParams(sent.body))).toEqual({
          client_id: REPLAY_CLIENT.clientId,
          client_secret: REPLAY_CLIENT.clientSecret,
          grant_type: 'client_credentials',
        });
      }
      const areaCalls = replay.requests.filter((r) => r.path !== REPLAY_TOKEN_PATH);
      expect(areaCalls.length).toBeGreaterThan(0);
      for (const call of areaCalls) {
        expect(replay.issuedTokens).toContain(/^Bearer (.+)$/.exec(call.headers.authorization ?? '')?.[1]);
      }
    },
  },
  'oauth N/A scopes': {
    kind: 'fact',
    // Every scope the graph asks client tokens for is a documented scope name, and the viewer shows them.
    async check({ stack, token }) {
      const documented = Object.keys(exampleOf('oauth N/A scopes').response as object);
      expect(UPSTREAM_SCOPES.filter((scope) => !documented.includes(scope))).toEqual([]);
      const answer = await postGraphql(stack.url, { query: OPERATIONS.viewer.query }, token);
      const scopes = (answer.body.data?.viewer as { scopes: string[] } | undefined)?.scopes;
      expect(scopes?.toSorted()).toEqual([...UPSTREAM_SCOPES].sort());
    },
  },
  'account-updater-v1 POST /cards': {
    kind: 'call',
    operation: OPERATIONS.enrol,
    variables: {
      input: {
        name: 'John Doe',
        number: '5573495XTjZP21V7312',
        expMonth: 7,
        expYear: 24,
        merchant: { serviceMerchantId: 'MCq7GWCbtVXaNt8b4k2xraTw', subMerchantName: 'John' },
      },
    },
    expected: DOCUMENTED_V1_CARD,
    // The documented request, plus the merchant object as the enrol page names its members.
    sent: [
      {
        method: 'POST',
        path: '/account-updater/cards',
        body: {
          name: 'John Doe',
          number: '5573495XTjZP21V7312',
          exp_month: 7,
          exp_year: 24,
          merchant: { vgs_merchant_id: 'MCq7GWCbtVXaNt8b4k2xraTw', sub_merchant_name: 'John' },
        },
      },
    ],
    // 5100260000291003: contract §5 scenario 1003, enrolled at once with au_card.enrolled.
    sandbox: async () => ({
      variables: { input: { name: 'John Doe', number: '5100260000291003', expMonth: 7, expYear: 30 } },
      expected: {
        cardId: matching(/^CRD[A-Za-z0-9]{22}$/),
        name: 'John Doe',
        number: matching(/^510026[A-Za-z0-9]{7}1003$/),
        maskedNumber: '510026******1003',
        expMonth: 7,
        expYear: 30,
        capabilities: ['ACCOUNT_UPDATER'],
        state: 'ENROLLED',
        event: 'ENROLLED',
        vaultId: 'tntsandbox1',
        billingAddress: null,
      },
    }),
  },
  'account-updater-v1 GET /cards/CRDuVQCsenqj6dbHFQq9gen2E': {
    kind: 'call',
    operation: OPERATIONS.v1Card,
    variables: { cardId: V1_CARD_ID },
    expected: DOCUMENTED_V1_CARD,
    sent: [{ method: 'GET', path: `/account-updater/cards/${V1_CARD_ID}` }],
    sandbox: async (run) => {
      const cardId = await run.enrolledCard(DOCUMENTED_BILLING_ADDRESS);
      return {
        variables: { cardId },
        expected: { ...run.enrolledCardValues(cardId), billingAddress: DOCUMENTED_BILLING_ADDRESS },
      };
    },
  },
  'account-updater-v1 GET /cards/CRDuVQCsenqj6dbHFQq9gen2E #2': {
    kind: 'call',
    operation: OPERATIONS.v1Card,
    variables: { cardId: V1_CARD_ID },
    // A `tok_` alias shows no BIN or last four: no masked number.
    expected: {
      ...DOCUMENTED_V1_CARD,
      number: 'tok_svzgzzX8SDJMRjk93GVKG6b',
      maskedNumber: null,
      billingAddress: null,
    },
    sent: [{ method: 'GET', path: `/account-updater/cards/${V1_CARD_ID}` }],
    sandbox: async (run) => {
      const cardId = await run.enrolledCard();
      return { variables: { cardId }, expected: { ...run.enrolledCardValues(cardId), billingAddress: null } };
    },
  },
  'account-updater-v1 POST /card-check': {
    kind: 'call',
    operation: OPERATIONS.cardCheck,
    variables: {
      input: {
        name: 'John Doe',
        number: '5573495XTjZP21V7312',
        expMonth: 7,
        expYear: 24,
        cvv: '123',
        merchant: { serviceMerchantId: 'MCq7GWCbtVXaNt8b4k2xraTw', subMerchantName: 'John' },
      },
    },
    // The answer's `number` is the plain PAN (a JSON number): no alias to show, the PAN only masked.
    expected: {
      name: 'John Doe',
      number: null,
      maskedNumber: '557349******7312',
      expMonth: 7,
      expYear: 24,
      failureCode: 'account-updater-not-supported',
      event: 'VALID',
      merchant: {
        serviceMerchantId: 'MCq7GWCbtVXaNt8b4k2xraTw',
        subMerchantName: 'John',
        subMerchantMid: '345643355',
      },
    },
    sent: [
      {
        method: 'POST',
        path: '/account-updater/card-check',
        body: {
          name: 'John Doe',
          number: '5573495XTjZP21V7312',
          exp_month: 7,
          exp_year: 24,
          cvv: '123',
          // The merchant members a request documents (enrol page, §8); `sub_merchant_mid` is an
          // answer member only.
          merchant: { vgs_merchant_id: 'MCq7GWCbtVXaNt8b4k2xraTw', sub_merchant_name: 'John' },
        },
      },
    ],
    // 5100260000093003: contract §5 scenario 3003, valid and unchanged.
    sandbox: async () => ({
      variables: {
        input: { name: 'John Doe', number: '5100260000093003', expMonth: 7, expYear: 30, cvv: '123' },
      },
      expected: {
        name: 'John Doe',
        maskedNumber: '510026******3003',
        expMonth: 7,
        expYear: 30,
        event: 'VALID',
      },
    }),
  },
  'account-updater-v1 WEBHOOK au_card.* notification': { kind: 'notification' },
  'network-tokens POST /network-tokens': {
    kind: 'call',
    operation: OPERATIONS.provision,
    variables: { input: { panAlias: '5573495XKjDP28V7312', expMonth: 7, expYear: 24 } },
    // The stored answer ends after the holder's address2: the members after it are not documented.
    expected: {
      ...DOCUMENTED_TOKEN,
      holderInfo: {
        ...DOCUMENTED_TOKEN.holderInfo,
        billingAddress: {
          name: 'John Doe',
          company: 'John Doe Company',
          address1: '555 Unblock Us St',
          address2: 'M13 9PL',
          city: null,
          region: null,
          country: null,
          postalCode: null,
          phone: null,
        },
      },
    },
    sent: [
      {
        method: 'POST',
        path: '/account-updater/network-tokens',
        body: { pan_alias: '5573495XKjDP28V7312', exp_month: 7, exp_year: 24 },
      },
    ],
    sandbox: async (run) => {
      const panAlias = await run.networkTokenAlias('provision');
      return {
        variables: { input: { panAlias, expMonth: 7, expYear: 30 } },
        expected: { panAlias, cardLast4: '5001', cardBin: '510026', vaultId: 'tntsandbox1' },
      };
    },
  },
  'network-tokens GET /network-tokens/9914040119524512000': {
    kind: 'call',
    operation: OPERATIONS.networkToken,
    variables: { panAlias: DOCUMENTED_ALIAS },
    expected: DOCUMENTED_TOKEN,
    sent: [{ method: 'GET', path: `/account-updater/network-tokens/${DOCUMENTED_ALIAS}` }],
    sandbox: async (run) => {
      const panAlias = await run.networkTokenAlias('active');
      return {
        variables: { panAlias },
        expected: {
          panAlias,
          state: 'ACTIVE',
          usable: true,
          cardLast4: '5001',
          cardBin: '510026',
          vaultId: 'tntsandbox1',
        },
      };
    },
  },
  'network-tokens DELETE /network-tokens/9914040119524512000': {
    kind: 'call',
    operation: OPERATIONS.deleteNetworkToken,
    variables: { panAlias: DOCUMENTED_ALIAS },
    expected: {
      panAlias: DOCUMENTED_ALIAS,
      createdAt: at('2019-05-15T12:30:45Z'),
      updatedAt: at('2019-05-15T12:30:45Z'),
      networkTokenLast4: '2345',
      state: 'DELETED',
      usable: false,
      expiresAt: '2027-01',
      cardLast4: '1234',
      cardBin: '123456',
      cardExpiresAt: '2027-01',
      vaultId: REPLAY_VAULT,
      holderInfo: null,
    },
    sent: [{ method: 'DELETE', path: `/account-updater/network-tokens/${DOCUMENTED_ALIAS}` }],
    sandbox: async (run) => {
      const panAlias = await run.networkTokenAlias('active');
      return {
        variables: { panAlias },
        expected: { panAlias, state: 'DELETED', usable: false, cardLast4: '5001', cardBin: '510026' },
      };
    },
  },
  'network-tokens WEBHOOK network_token.updated notification': { kind: 'notification' },
  'card-attributes POST /attributes/attributes': {
    kind: 'call',
    operation: OPERATIONS.cardAttributes,
    variables: { number: '4111-1111-1111-1111' },
    expected: {
      bin: '4111111',
      // Mapped, not lost: the graph names known brands in the specification's upper case whatever case
      // the provider wrote (docs/gap-decisions.md "Card attributes"), so clients compare one spelling.
      brand: 'VISA',
      issuingOrganization: 'J.P. Morgan',
      cardType: 'DEBIT',
      cardCategory: 'PREPAID',
      issuingCountryName: 'United Kingdom',
      issuingCountryCode: 'USA',
      maximumPanLength: 16,
      cardCommercialType: 'PERSONAL',
      regulationStatus: 'UNREGULATED',
      version: 20240105,
      prepaidType: 'RELOADABLE',
      cobadgedBrands: 'BANCONTACT',
    },
    // The documented pattern takes the number with its hyphens or as plain digits.
    sent: [
      {
        method: 'POST',
        path: '/card-attributes/attributes/attributes',
        check: (body) => {
          const { number, ...rest } = body as { number?: unknown };
          return [
            ...(number === '4111-1111-1111-1111' || number === '4111111111111111'
              ? []
              : [`sent.number: not the documented number (${shown(number)})`]),
            ...Object.keys(rest).map((member) => `sent.${member}: not documented`),
          ];
        },
      },
    ],
    sandbox: async () => ({
      variables: { number: '4111-1111-1111-1111' },
      expected: { bin: matching(/^411111\d{0,2}$/), maximumPanLength: 16 },
    }),
  },
  [`accounts GET /organizations/${ORGANIZATION_ID}/members`]: {
    kind: 'call',
    operation: OPERATIONS.members,
    variables: { id: ORGANIZATION_ID },
    expected: {
      id: ORGANIZATION_ID,
      members: {
        edges: [
          {
            node: {
              id: 'IDvafeqcnYSvHLxtqAhur7MX',
              name: 'John Wick',
              emailAddress: '[email protected]',
              role: 'admin',
              permissions: ['read', 'write', 'admin'],
              ssoId: 'MK2323',
              createdAt: at('2021-06-15T12:30:45.625Z'),
              vaults: [{ role: 'admin', vault: { id: 'tnto1wfx2gp', name: 'vault', environment: 'LIVE' } }],
            },
          },
        ],
        pageInfo: { hasNextPage: false },
      },
    },
    sent: [{ method: 'GET', path: `/accounts/organizations/${ORGANIZATION_ID}/members` }],
    // The sandbox organization's first member, its owner (test/support/fixtures.ts SANDBOX_OWNER).
    sandbox: async () => ({
      variables: { id: 'ACsandbox000000000000001', first: 1 },
      expected: {
        id: 'ACsandbox000000000000001',
        members: {
          edges: [
            {
              node: {
                ...SANDBOX_OWNER,
                createdAt: at(SANDBOX_OWNER.createdAt),
                vaults: [
                  {
                    role: 'admin',
                    vault: { id: 'tntsandbox1', name: 'Sandbox vault 1', environment: 'SANDBOX' },
                  },
                  {
                    role: 'admin',
                    vault: { id: 'tntsandbox2', name: 'Sandbox vault 2', environment: 'LIVE' },
                  },
                ],
              },
            },
          ],
          pageInfo: { hasNextPage: true },
        },
      },
    }),
  },
  'card-interface POST /cards': {
    kind: 'call',
    operation: OPERATIONS.createCard,
    // The documented request sends both `pan` and `pan_alias`; the graph takes exactly one of them.
    variables: {
      input: { pan: '4111111111111111', cvc: '123', cvcStatus: 'active', expMonth: 4, expYear: 28 },
    },
    expected: {
      ...DOCUMENTED_CARD_RECORD,
      cvcAlias: 'tok_sandbox_5XK62B8G2i1mTwoGR5o4tL',
      expMonth: 4,
      expYear: 28,
      vaultId: REPLAY_VAULT,
    },
    // A JSON:API document (`data.type` optional, `cards` when sent) with the given attributes only.
    sent: [
      {
        method: 'POST',
        path: '/card-interface/cards',
        check: (body) => {
          const { type, attributes, ...rest } = (body as { data: Record<string, unknown> }).data;
          return [
            ...(type === undefined || type === 'cards' ? [] : [`sent.data.type: ${shown(type)}`]),
            ...Object.keys(rest).map((member) => `sent.data.${member}: not documented`),
            ...differences(CREATE_CARD_SENT, attributes, 'sent.data.attributes'),
            ...extraMembers(CREATE_CARD_SENT, attributes, 'sent.data.attributes'),
          ];
        },
      },
    ],
    sandbox: async () => ({
      variables: {
        input: { pan: '4111111111111111', cvc: '123', cvcStatus: 'active', expMonth: 4, expYear: 28 },
      },
      expected: {
        cardId: matching(/^CRD[A-Za-z0-9]+$/),
        panAlias: matching(/^tok_sandbox_[A-Za-z0-9]{22}$/),
        cvcAlias: matching(/^tok_sandbox_[A-Za-z0-9]{22}$/),
        cvcStatus: 'active',
        bin: '411111',
        last4: '1111',
        expMonth: 4,
        expYear: 28,
        vaultId: 'tntsandbox1',
      },
    }),
  },
  'card-interface POST /cards/{card_id}/card-update-subscriptions': {
    kind: 'call',
    operation: OPERATIONS.subscribe,
    variables: { cardId: CMP_CARD_ID },
    expected: {
      subscriptionId: 'CUS9ecrtBiwFpyT4qCtStYp4e',
      state: 'enrolled',
      createdAt: at('2025-01-10T18:23:48.96686'),
      updatedAt: at('2025-01-10T18:23:48.966869'),
    },
    sent: [{ method: 'POST', path: `/card-interface/cards/${CMP_CARD_ID}/card-update-subscriptions` }],
    sandbox: async (run) => ({
      variables: { cardId: await run.cardInterfaceCard() },
      expected: { subscriptionId: matching(/^CUS[A-Za-z0-9]{22}$/), state: 'enrolled' },
    }),
  },
  'card-interface DELETE /cards/{card_id}/card-update-subscriptions': {
    kind: 'call',
    operation: OPERATIONS.unsubscribe,
    variables: { cardId: CMP_CARD_ID },
    // 204 with no body; the graph answers the card, read after the unsubscription.
    expected: { ...DOCUMENTED_CARD_RECORD, updateSubscription: null },
    sent: [{ method: 'DELETE', path: `/card-interface/cards/${CMP_CARD_ID}/card-update-subscriptions` }],
    sandbox: async (run) => {
      const cardId = await run.cardInterfaceCard({ subscribed: true });
      return {
        variables: { cardId },
        expected: { cardId, bin: '411111', last4: '1111', cvcStatus: 'active', updateSubscription: null },
      };
    },
  },
  'card-interface POST /cards/{card_id}/check': {
    kind: 'call',
    operation: OPERATIONS.check,
    variables: { cardId: CMP_CARD_ID },
    // Body not shown: the replay answers the specification's card updates document (exp_year 28 → 31).
    expected: {
      event: 'updated',
      updatedValues: [{ fieldName: 'exp_year', oldValue: '28', newValue: '31' }],
    },
    sent: [{ method: 'POST', path: `/card-interface/cards/${CMP_CARD_ID}/check` }],
    // 4111111111111111 is a normal card: valid, nothing changed.
    sandbox: async (run) => ({
      variables: { cardId: await run.cardInterfaceCard() },
      expected: { event: 'valid', updatedValues: [] },
    }),
  },
  'card-interface WEBHOOK cmp_au_card.* / cmp_network_token.updated': { kind: 'notification' },
  'webhooks N/A signature': {
    kind: 'fact',
    // `vgs-signature` (§8), scheme of contract §4: a signed body is accepted, a wrong signature refused.
    async check({ stack }) {
      // A notification of the specification's full shape (test/support/notifications.ts), so this row
      // checks the signature alone; the documented shapes are the notification cases'.
      const body = JSON.stringify(notification({ tenant: REPLAY_VAULT, cardId: V1_CARD_ID }));
      const post = (signature: string) =>
        request(`${stack.url}${CARD_EVENTS_WEBHOOK_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'vgs-signature': signature },
          body,
        });
      const nowS = Math.floor(Date.now() / 1000);
      const refused = await post(signWebhookBody(body, 'whsec_not_the_configured_secret_0', nowS));
      await refused.body.dump();
      expect(refused.statusCode).toBe(401);
      const accepted = await post(signWebhookBody(body, TEST_WEBHOOK_SECRET, nowS));
      await accepted.body.dump();
      expect(accepted.statusCode).toBe(200);
    },
  },
};

const CALL_ROWS = Object.entries(ROWS).filter(
  (entry): entry is [string, CallRow] => entry[1].kind === 'call',
);
const FACT_ROWS = Object.entries(ROWS).filter(
  (entry): entry is [string, FactRow] => entry[1].kind === 'fact',
);

// ─── Notifications ───────────────────────────────────────────────────────────────────────────────

/** The card of a v1 notification: the documented v1 card id and values of its documented card. */
const V1_DETAILS: Record<string, unknown> = {
  card_id: V1_CARD_ID,
  old_account_number: '557349******7312',
  old_expiration_date: '0724',
  new_expiration_date: '0727',
  occurred_at: '2026-11-20T10:00:00.000Z',
};

/** What the graph must show of {@link V1_DETAILS} member by member (null where a member is not sent). */
const V1_VALUES: Record<string, [member: string, value: unknown]> = {
  card_id: ['cardId', V1_CARD_ID],
  old_account_number: ['oldAccountNumber', '557349******7312'],
  old_expiration_date: ['oldExpiry', { month: 7, year: 2024 }],
  new_expiration_date: ['newExpiry', { month: 7, year: 2027 }],
  occurred_at: ['occurredAt', at('2026-11-20T10:00:00.000Z')],
};

/** A notification to post, and what a subscriber and the history must show of it. */
interface NotificationCase {
  /** The example's key this case belongs to. */
  key: string;
  name: string;
  body: Record<string, unknown> & { id: string };
  stream: 'cardEvents' | 'networkTokenEvents';
  /** Subscription filter (the card or PAN alias of the notification). */
  filter: Record<string, string>;
  expected: Record<string, unknown>;
}

/** A contract §4 envelope around `details` (an object, or the JSON-encoded string of it). */
function envelope(
  event: string,
  details: Record<string, unknown>,
  form: 'object' | 'string',
  timestamp: string,
) {
  return {
    id: randomUUID(),
    event,
    timestamp,
    description: 'Card account updater event sent',
    summary: `Card ${String(details.card_id)} ${event}`,
    details: form === 'object' ? details : JSON.stringify(details),
    fingerprint: 'a'.repeat(64),
    grouping: 'every_single',
    integration_id: 'INcBi2ziCXeweqC6VvDx6keX',
    occurrence: 1,
    org_id: 'ACgzdqxQb4RyPyWsw97DVDDD',
    producer: { application_name: 'account-updater', application_protocol: 'https' },
    scope: 'vault',
    tenant: REPLAY_VAULT,
  };
}

/** Per-event `timestamp`s rise, so no case is flagged out of order against an earlier one. */
let notificationClock = Date.parse('2026-11-20T10:00:00.000Z');
function nextTimestamp(): string {
  notificationClock += 1_000;
  return new Date(notificationClock).toISOString();
}

/** A documented `au_card.*` notification: exactly the members of its event's "Details" row. */
function v1Notification(event: string, form: 'object' | 'string') {
  const shown = (
    exampleOf('account-updater-v1 WEBHOOK au_card.* notification').response as Record<string, string[]>
  )[event]!;
  // `au_card.unknown` shows card_id only (the rest of its row is cut in the stored copy).
  const members = shown.filter((member) => member in V1_DETAILS);
  const details = Object.fromEntries(members.map((member) => [member, V1_DETAILS[member]]));
  const timestamp = nextTimestamp();
  const expected: Record<string, unknown> = {
    tenant: REPLAY_VAULT,
    source: 'ACCOUNT_UPDATER',
    event,
    type: event.slice(event.indexOf('.') + 1).toUpperCase(),
    timestamp: at(timestamp),
    // No documented v1 event's details carry a new account number.
    newAccountNumber: null,
  };
  for (const [member, [field, value]] of Object.entries(V1_VALUES)) {
    expected[field] = members.includes(member) ? value : null;
  }
  return { body: envelope(event, details, form, timestamp), expected };
}

const CARD_EVENT_FIELDS = `id tenant source event type cardId timestamp occurredAt oldAccountNumber newAccountNumber
  oldExpiry { month year } newExpiry { month year }`;
const NETWORK_TOKEN_EVENT_FIELDS = `id tenant source event type panAlias state stateName networkTokenId networkTokenLast4
  expiresAt cardBin cardLast4 cardExpMonth cardExpYear paymentAccountReference timestamp createdAt updatedAt occurredAt`;

/**
 * What the graph must show of the documented `network_token.updated` details, member by member:
 * `state` `CARD_UPDATED` is no token state, so `state` is null and `stateName` carries it; the empty
 * `payment_account_reference` is none; `network_token` (the token number) is never shown; the
 * example sends no `occurred_at`.
 */
const DOCUMENTED_NETWORK_TOKEN_DETAILS = {
  tenant: 'tntt0fzksdr',
  type: 'UPDATED',
  panAlias: '5114103XX3542293',
  state: null,
  stateName: 'CARD_UPDATED',
  networkTokenId: '0e28d9f6-d8a3-43ca-9bd8-b99c477c2b4c',
  networkTokenLast4: '5022',
  expiresAt: '2027-10',
  cardBin: '511410',
  cardLast4: '2293',
  cardExpMonth: 12,
  cardExpYear: 2025,
  paymentAccountReference: null,
  createdAt: at('2024-12-12T09:59:44.667670'),
  updatedAt: at('2024-12-12T09:59:44.667670'),
  occurredAt: null,
};

/** The documented `network_token.updated` example, posted literally. */
function documentedNetworkTokenNotification(): NotificationCase {
  const body = structuredClone(
    exampleOf('network-tokens WEBHOOK network_token.updated notification').response,
  ) as NotificationCase['body'];
  return {
    key: 'network-tokens WEBHOOK network_token.updated notification',
    name: 'network_token.updated (the documented example, literally)',
    body,
    stream: 'networkTokenEvents',
    filter: { panAlias: '5114103XX3542293' },
    expected: {
      ...DOCUMENTED_NETWORK_TOKEN_DETAILS,
      id: 'd82e56a0-3b6e-417a-a7cb-674f84d806e3',
      source: 'NETWORK_TOKENS',
      event: 'network_token.updated',
      timestamp: at('2024-12-16T18:30:25.383Z'),
    },
  };
}

/** The card interface's notification test cards and their events (sandbox contract §8). */
const CMP_TEST_CARD_EVENTS: Record<string, string> = {
  '5100260000079200': 'cmp_au_card.enrolled',
  '5100260000069201': 'cmp_au_card.updated',
  '5100260000059202': 'cmp_au_card.expired',
  '5100260000049203': 'cmp_au_card.closed',
  '5100260000039204': 'cmp_au_card.non_participating',
};

/** Card interface notifications: each documented event, on the documented 52-character test card ids. */
function cmpNotifications(): NotificationCase[] {
  const example = exampleOf('card-interface WEBHOOK cmp_au_card.* / cmp_network_token.updated').response as {
    events: string[];
    test_card_ids: Record<string, string>;
  };
  const key = 'card-interface WEBHOOK cmp_au_card.* / cmp_network_token.updated';
  return example.events.map((event): NotificationCase => {
    const timestamp = nextTimestamp();
    if (event === 'cmp_network_token.updated') {
      // No body of its own is documented: the network token area's documented details, re-sent
      // under the card interface's event name.
      const { body } = documentedNetworkTokenNotification();
      return {
        key,
        name: event,
        body: { ...body, id: randomUUID(), event, timestamp },
        stream: 'networkTokenEvents',
        filter: { panAlias: '5114103XX3542293' },
        expected: {
          ...DOCUMENTED_NETWORK_TOKEN_DETAILS,
          source: 'CARD_MANAGEMENT',
          event,
          timestamp: at(timestamp),
        },
      };
    }
    // Details: the card id is all the card interface's pages show (§4's occurred_at added). Each
    // event of a §8 test card goes out on that card's id; the others on the enrolled card's.
    const pan = Object.entries(CMP_TEST_CARD_EVENTS).find(([, e]) => e === event)?.[0] ?? '5100260000079200';
    const cardId = example.test_card_ids[pan]!;
    const occurredAt = '2026-11-20T11:00:00.000Z';
    return {
      key,
      name: `${event} on ${cardId.slice(0, 8)}… (${cardId.length} characters)`,
      body: envelope(event, { card_id: cardId, occurred_at: occurredAt }, 'object', timestamp),
      stream: 'cardEvents',
      filter: { cardId },
      expected: {
        tenant: REPLAY_VAULT,
        source: 'CARD_MANAGEMENT',
        event,
        type: event.slice(event.indexOf('.') + 1).toUpperCase(),
        cardId,
        occurredAt: at(occurredAt),
        timestamp: at(timestamp),
        oldAccountNumber: null,
        newAccountNumber: null,
        oldExpiry: null,
        newExpiry: null,
      },
    };
  });
}

const V1_EVENTS = Object.keys(
  exampleOf('account-updater-v1 WEBHOOK au_card.* notification').response as Record<string, unknown>,
);

const NOTIFICATION_CASES: NotificationCase[] = [
  ...V1_EVENTS.flatMap((event) =>
    (['object', 'string'] as const).map((form): NotificationCase => {
      const { body, expected } = v1Notification(event, form);
      return {
        key: 'account-updater-v1 WEBHOOK au_card.* notification',
        name: `${event} (details as a JSON ${form})`,
        body,
        stream: 'cardEvents',
        filter: { cardId: V1_CARD_ID },
        expected: { id: body.id, ...expected },
      };
    }),
  ),
  documentedNetworkTokenNotification(),
  ...cmpNotifications(),
];

// ─── Running a row ───────────────────────────────────────────────────────────────────────────────

/** What a row's check needs of the replay run. */
interface ReplayContext {
  stack: Stack;
  replay: ReplayUpstream;
  token: string;
}

/** Outcome of one operation: why it was rejected, or which documented members came back lossy. */
interface Outcome {
  rejected?: string;
  lossy: string[];
  data?: unknown;
}

/** Every GraphQL answer body of this file's gateways, for the PAN and CVC check. */
const answered: string[] = [];

/**
 * Sends `op` with `variables` to `stack` and classifies the answer: rejected (HTTP status other than
 * 200, GraphQL errors, or a typed error result; with the upstream members the gateway refused), else
 * the members of `expected` it does not give (none are compared when `expected` is undefined).
 */
async function run(
  stack: Stack,
  token: string,
  op: Operation,
  variables: Record<string, unknown>,
  expected?: unknown,
): Promise<Outcome> {
  const logStart = readFileSync(stack.logFile, 'utf8').length;
  const answer = await postGraphql(stack.url, { query: op.query, variables }, token);
  answered.push(JSON.stringify(answer.body));
  const result = answer.body.data?.[op.field] as { __typename?: string; data?: unknown } | undefined;
  if (answer.status !== 200 || answer.body.errors || !result?.__typename?.endsWith('Success')) {
    return {
      rejected: `HTTP ${answer.status}: ${shown(answer.body.errors ?? result)}${validationIssues(stack, logStart)}`,
      lossy: [],
    };
  }
  const lossy = expected === undefined ? [] : differences(expected, result.data, 'data');
  return { lossy, data: result.data };
}

/**
 * The members the gateway's upstream answer validation refused since `logStart` (its
 * `upstream response failed validation` log lines: area, method, path, status, issue pointers).
 */
function validationIssues(stack: Stack, logStart: number): string {
  const lines = readFileSync(stack.logFile, 'utf8').slice(logStart).split('\n').filter(Boolean);
  const refused = lines
    .map(
      (line) =>
        JSON.parse(line) as {
          msg?: string;
          method?: string;
          path?: string;
          status?: number;
          issues?: { path: string; code: string }[];
        },
    )
    .filter((entry) => entry.msg === 'upstream response failed validation')
    .map(
      (entry) =>
        `${entry.method} ${entry.path} ${entry.status}: ${(entry.issues ?? []).map((i) => `${i.path} ${i.code}`).join(', ')}`,
    );
  return refused.length > 0 ? ` (answer refused: ${refused.join('; ')})` : '';
}

/** How the upstream requests of a row differ from the documented ones (missing call, other body). */
function sentProblems(row: CallRow, sent: readonly ReplayRequest[]): string[] {
  return row.sent.flatMap((documented) => {
    const call = sent.find((r) => r.method === documented.method && r.path === documented.path);
    if (!call) {
      const made = sent.map((r) => `${r.method} ${r.path}`).join(', ') || 'none';
      return [`sent: no ${documented.method} ${documented.path} (made: ${made})`];
    }
    const body: unknown = call.body === '' ? undefined : JSON.parse(call.body);
    if (documented.check) return documented.check(body);
    if (documented.body === undefined) return [];
    return [...differences(documented.body, body, 'sent'), ...extraMembers(documented.body, body, 'sent')];
  });
}

/** Members `actual` sends that `documented` does not have (strict in what the gateway sends). */
function extraMembers(documented: unknown, actual: unknown, path: string): string[] {
  if (documented === null || typeof documented !== 'object' || actual === null || typeof actual !== 'object')
    return [];
  return Object.entries(actual).flatMap(([member, value]) =>
    member in documented
      ? extraMembers((documented as Record<string, unknown>)[member], value, `${path}.${member}`)
      : [`${path}.${member}: not documented, sent ${shown(value)}`],
  );
}

function expectAccepted(outcome: Outcome): void {
  expect(outcome.rejected, 'rejected').toBeUndefined();
  expect(outcome.lossy, 'lossy: documented members missing or different').toEqual([]);
}

/** Fails on a `cvc`/`cvv` member carrying the documented security code in `text` (also inside JSON strings). */
function assertNoSecurityCodeIn(text: string, where: string): void {
  expect(/\\*"(?:cvc|cvv)\\*"\s*:\s*\\*"?123\b/i.test(text), `security code in ${where}`).toBe(false);
}

function assertNoDocumentedCardDataIn(text: string, where: string): void {
  assertNoTestPanIn(text);
  for (const pan of DOCUMENTED_PANS) {
    expect(text.includes(pan), `${pan.slice(0, 6)}…${pan.slice(-4)} in ${where}`).toBe(false);
  }
  assertNoSecurityCodeIn(text, where);
}

// ─── The replay ──────────────────────────────────────────────────────────────────────────────────

describe('provider documentation examples, replayed through the gateway (UPSTREAM=remote)', () => {
  const context = {} as ReplayContext;

  beforeAll(async () => {
    context.replay = await startReplayUpstream(EXAMPLES);
    // The card read cache is off: the two documented answers of GET /cards/{id} must each be read.
    context.stack = await startStack({ ...context.replay.gatewayEnv(), CARD_CACHE_TTL_MS: '0' });
    context.token = await testToken({ vaults: [REPLAY_VAULT] });
  });
  afterAll(async () => {
    await context.stack?.stop();
    await context.replay?.close();
  });

  it('has one row for every documented example, and none for an example that is not there', () => {
    expect(Object.keys(ROWS).sort()).toEqual(KEYED.map((k) => k.key).sort());
    const covered = new Set(NOTIFICATION_CASES.map((c) => c.key));
    const notificationRows = Object.entries(ROWS).filter(([, row]) => row.kind === 'notification');
    expect(notificationRows.filter(([key]) => !covered.has(key))).toEqual([]);
  });

  it.each(CALL_ROWS)('%s', async (key, row) => {
    const { stack, replay, token } = context;
    replay.answerWith(exampleOf(key));
    const before = replay.requests.length;
    const outcome = await run(stack, token, row.operation, row.variables, row.expected);
    const sent = replay.requests.slice(before).filter((r) => r.path !== REPLAY_TOKEN_PATH);
    expect(
      [
        ...(outcome.rejected ? [`rejected: ${outcome.rejected}`] : []),
        ...outcome.lossy,
        ...sentProblems(row, sent),
      ],
      'rejected, lossy, or not sent as documented',
    ).toEqual([]);
  });

  it.each(FACT_ROWS)('%s', async (_key, row) => {
    await row.check(context);
  });

  it.each(NOTIFICATION_CASES.map((c) => [c.name, c] as const))('notification %s', async (_name, item) => {
    const { stack, token } = context;
    const fields = item.stream === 'cardEvents' ? CARD_EVENT_FIELDS : NETWORK_TOKEN_EVENT_FIELDS;
    const filterArgument = item.stream === 'cardEvents' ? 'cardId: $cardId' : 'panAlias: $panAlias';
    const variable = item.stream === 'cardEvents' ? '$cardId: String' : '$panAlias: String';
    const subscriber = subscribeCardEvents(
      stack.url,
      token,
      { after: LOG_START_CURSOR, ...item.filter },
      `subscription ReplayLive($after: String, ${variable}) { ${item.stream}(after: $after, ${filterArgument}) { ${fields} } }`,
      item.stream,
    );
    try {
      const posted = await postNotification(stack.url, item.body);
      answered.push(JSON.stringify(posted.body));
      expect(posted, 'the receiver accepts the signed notification').toMatchObject({
        status: 200,
        body: { data: { id: item.body.id, status: 'accepted' } },
      });
      await subscriber.waitForIds([item.body.id]);
      const live = subscriber.events.find((e) => e.id === item.body.id);
      answered.push(JSON.stringify(subscriber.events));
      expect(differences(item.expected, live, 'live')).toEqual([]);

      const history = await postGraphql(
        stack.url,
        {
          query: `query ReplayHistory(${variable}) { ${item.stream}(first: 100, ${filterArgument}) {
            __typename ... on Query${item.stream[0]!.toUpperCase()}${item.stream.slice(1)}Success {
              data { edges { node { ${fields} } } } } ${ERROR_FIELDS} } }`,
          variables: item.filter,
        },
        token,
      );
      answered.push(JSON.stringify(history.body));
      const edges =
        (history.body.data?.[item.stream] as { data?: { edges: { node: { id: string } }[] } } | undefined)
          ?.data?.edges ?? [];
      const stored = edges.find((edge) => edge.node.id === item.body.id)?.node;
      expect(stored, `in the history: ${shown(history.body)}`).toBeDefined();
      expect(differences(item.expected, stored, 'history')).toEqual([]);
    } finally {
      await subscriber.close();
    }
  });

  it('shows no documented card number or security code in any answer or log line (runs last)', () => {
    for (const body of answered) assertNoDocumentedCardDataIn(body, 'a GraphQL answer');
    const log = readFileSync(context.stack.logFile, 'utf8');
    expect(log.length).toBeGreaterThan(0);
    assertNoDocumentedCardDataIn(log, 'the gateway log');
  });

  it('rejects no documented example and loses no documented member (summary)', async () => {
    const { stack, replay, token } = context;
    const rejected: string[] = [];
    const lossy: string[] = [];
    for (const [key, row] of CALL_ROWS) {
      replay.answerWith(exampleOf(key));
      const outcome = await run(stack, token, row.operation, row.variables, row.expected);
      if (outcome.rejected) rejected.push(`${key}: ${outcome.rejected}`);
      lossy.push(...outcome.lossy.map((member) => `${key}: ${member}`));
    }
    expect({ rejected, lossy }).toEqual({ rejected: [], lossy: [] });
  });
});

// ─── The same operations on the embedded sandbox ─────────────────────────────────────────────────

/** Sandbox-made resources the sandbox variants of the rows start from. */
interface SandboxRun {
  /** A normal card enrolled in account updater v1 (optionally with a billing address), once `ENROLLED`. */
  enrolledCard(billingAddress?: Record<string, string>): Promise<string>;
  /** The values the graph gives for a card of {@link enrolledCard}. */
  enrolledCardValues(cardId: string): Record<string, unknown>;
  /**
   * A PAN alias of the card interface for contract §5 card 5100260000895001 (5001: `ACTIVE` after the
   * delay): fresh for `provision`, with an `ACTIVE` network token for `active`.
   */
  networkTokenAlias(use: 'provision' | 'active'): Promise<string>;
  /** A card interface card of 4111111111111111, optionally subscribed to updates. */
  cardInterfaceCard(options?: { subscribed?: boolean }): Promise<string>;
}

/** The normal card the sandbox variants enrol (contract §5: no scenario, enrolling then enrolled). */
const NORMAL_PAN = '4000007000000106';

describe.each(['documented', 'specification'] as const)(
  'the same operations on the embedded sandbox (%s wire)',
  (wire) => {
    let stack: Stack;
    let token: string;

    beforeAll(async () => {
      stack = await startStack({ SANDBOX_WIRE: wire });
      token = await testToken({ vaults: ['tntsandbox1'] });
    });
    afterAll(() => stack?.stop());

    async function data(op: Operation, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
      const outcome = await run(stack, token, op, variables);
      if (outcome.rejected) throw new Error(`${op.field} rejected: ${outcome.rejected}`);
      return outcome.data as Record<string, unknown>;
    }

    const sandboxRun: SandboxRun = {
      async enrolledCard(billingAddress) {
        const enrolled = await data(OPERATIONS.enrol, {
          input: {
            name: 'John Doe',
            number: NORMAL_PAN,
            expMonth: 7,
            expYear: 30,
            ...(billingAddress ? { billingAddress } : {}),
          },
        });
        const cardId = enrolled.cardId as string;
        await expect
          .poll(async () => (await data(OPERATIONS.v1Card, { cardId })).state, {
            timeout: 5_000,
            interval: 50,
          })
          .toBe('ENROLLED');
        return cardId;
      },
      enrolledCardValues: (cardId) => ({
        cardId,
        name: 'John Doe',
        number: matching(/^400000[A-Za-z0-9]{7}0106$/),
        maskedNumber: '400000******0106',
        expMonth: 7,
        expYear: 30,
        capabilities: ['ACCOUNT_UPDATER'],
        state: 'ENROLLED',
        event: 'ENROLLED',
        vaultId: 'tntsandbox1',
      }),
      async networkTokenAlias(use) {
        const card = await data(OPERATIONS.createCard, {
          input: { pan: '5100260000895001', expMonth: 7, expYear: 30 },
        });
        const panAlias = card.panAlias as string;
        if (use === 'active') {
          await data(OPERATIONS.provision, { input: { panAlias, expMonth: 7, expYear: 30 } });
          await expect
            .poll(async () => (await data(OPERATIONS.networkToken, { panAlias })).state, {
              timeout: 5_000,
              interval: 50,
            })
            .toBe('ACTIVE');
        }
        return panAlias;
      },
      async cardInterfaceCard(options = {}) {
        const card = await data(OPERATIONS.createCard, {
          input: { pan: '4111111111111111', cvc: '123', cvcStatus: 'active', expMonth: 4, expYear: 28 },
        });
        const cardId = card.cardId as string;
        if (options.subscribed) await data(OPERATIONS.subscribe, { cardId });
        return cardId;
      },
    };

    it.each(CALL_ROWS)('%s', async (_key, row) => {
      const { variables, expected } = await row.sandbox(sandboxRun);
      expectAccepted(await run(stack, token, row.operation, variables, expected));
    });

    it('shows no card number or security code in any answer or log line (runs last)', () => {
      for (const body of answered) assertNoDocumentedCardDataIn(body, 'a GraphQL answer');
      assertNoDocumentedCardDataIn(readFileSync(stack.logFile, 'utf8'), 'the gateway and sandbox log');
    });
  },
);
