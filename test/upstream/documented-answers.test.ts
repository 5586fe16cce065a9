import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BinNotDiscernedError,
  CardAttributesNotFoundError,
  OrganizationNotFoundError,
} from '../../src/errors.ts';
import { AccountsClient } from '../../src/upstream/accounts/client.ts';
import { ACCOUNTS_ERRORS } from '../../src/upstream/accounts/error-table.ts';
import { CardAttributesClient } from '../../src/upstream/card-attributes/client.ts';
import { CARD_ATTRIBUTES_ERRORS } from '../../src/upstream/card-attributes/error-table.ts';
import { CardInterfaceClient } from '../../src/upstream/card-interface/client.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { withGatewayErrors } from '../../src/upstream/gateway-errors.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../src/upstream/http.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import { CREDENTIALS, captureLogger, rejectionOf } from '../support/fixtures.ts';

/**
 * The card interface, card attributes and organization members clients against a replay upstream
 * answering exactly the provider's documented examples (`../shared/provider-docs/examples.json`,
 * copied below with their source addresses; sandbox contract §8): the tolerant reader of issue 19.
 */

/** examples.json, card-interface `POST /cards` 201 (https://docs.verygoodsecurity.com/card-management/api/card-management-cmp); the stored copy ends before the expiry. */
const CREATED_CARD = {
  data: {
    id: 'CRDecqZp3xRgXU3TFmtcDdzQs',
    type: 'cards',
    attributes: {
      pan: '4111111111111111',
      cvc_status: 'active',
      pan_alias: 'tok_sandbox_hhyPgvvdFfFGBnyi73TfFu',
      cvc: '123',
      cvc_alias: 'tok_sandbox_5XK62B8G2i1mTwoGR5o4tL',
      bin: '411111',
      first8: '41111111',
      last4: '1111',
    },
  },
};

/** examples.json, card-interface `POST /cards/{card_id}/card-update-subscriptions` 200 (https://docs.verygoodsecurity.com/card-management/api/account-updater). */
const SUBSCRIPTION = {
  data: {
    type: 'card_update_subscriptions',
    id: 'CUS9ecrtBiwFpyT4qCtStYp4e',
    attributes: {
      created_at: '2025-01-10T18:23:48.96686',
      state: 'enrolled',
      updated_at: '2025-01-10T18:23:48.966869',
    },
  },
};

/** examples.json, card-attributes `POST /attributes/attributes` 200 (https://docs.verygoodsecurity.com/vault/card-attributes-service/api-reference/default). */
const ATTRIBUTES = {
  bin: 4111111,
  brand: 'Visa',
  issuing_organization: 'J.P. Morgan',
  card_type: 'DEBIT',
  card_category: 'PREPAID',
  issuing_country_name: 'United Kingdom',
  issuing_country_code: 'USA',
  maximum_pan_length: 16,
  card_commercial_type: 'PERSONAL',
  regulation_status: 'UNREGULATED',
  version: 20240105,
  prepaid_type: 'RELOADABLE',
  cobadged_brands: 'BANCONTACT',
};

/** examples.json, accounts `GET /organizations/ACsUNAGQN3Lv875yyqZiLQ2s/members` 200 (https://docs.verygoodsecurity.com/enterprise-platform/developer-resources/api-reference/useraccess). */
const MEMBERS = {
  data: [
    {
      id: 'IDvafeqcnYSvHLxtqAhur7MX',
      type: 'users',
      attributes: {
        created_at: '2021-06-15T12:30:45.625Z',
        id: 'IDoaR2JBZdw7KzXUTNcTbp16',
        name: 'John Wick',
        email_address: '[email protected]',
        vaults: [{ id: 'tnto1wfx2gp', name: 'vault', role: 'admin', env_identifier: 'LIVE' }],
        role: 'admin',
        permissions: ['read', 'write', 'admin'],
        sso_id: 'MK2323',
      },
    },
  ],
};

/** A card id of the card interface's test table (examples.json, card-interface notifications): 52 characters. */
const LONG_CARD_ID = 'CRDnKQt89XXFRQVBEzcRvkhvmhs5rpBvxkv3PbeAFPB52zFFqjCR';
const ORGANIZATION = 'ACsUNAGQN3Lv875yyqZiLQ2s';
const VAULT = 'tntsandbox1';

/** The stored card the replay upstream answers to `GET /cards/{id}` (the specification's record). */
function storedCard(id: string) {
  return {
    data: {
      type: 'cards',
      id,
      attributes: {
        pan_alias: 'tok_sandbox_hhyPgvvdFfFGBnyi73TfFu',
        bin: '411111',
        last4: '1111',
        brand: 'visa',
        exp_month: 4,
        exp_year: 28,
        created_at: '2025-01-10T18:23:48.96686',
        updated_at: '2025-01-10T18:23:48.966869',
      },
      meta: {},
    },
  };
}

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return (_req, res) => {
    res
      .writeHead(status, { 'content-type': 'application/vnd.api+json', ...headers })
      .end(JSON.stringify(body));
  };
}

/** The replay upstream's answers by `METHOD path`; tests replace entries. */
const routes = new Map<string, Answer>();
const hits: string[] = [];
let server: Server;
let base: string;
let http: UpstreamHttp;
const { logger, lines } = captureLogger();
let cardInterface: CardInterfaceClient;
let cardAttributes: CardAttributesClient;
let accounts: AccountsClient;

function resetRoutes(): void {
  routes.clear();
  routes.set('POST /oauth/token', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: 'replay-token', token_type: 'Bearer', expires_in: 1200 }));
  });
  routes.set('POST /ci/cards', json(201, CREATED_CARD));
  routes.set(`GET /ci/cards/${LONG_CARD_ID}`, json(200, storedCard(LONG_CARD_ID)));
  routes.set(`POST /ci/cards/${LONG_CARD_ID}/card-update-subscriptions`, json(200, SUBSCRIPTION));
  routes.set('POST /ca/attributes/attributes', json(200, ATTRIBUTES));
  routes.set(`GET /acc/organizations/${ORGANIZATION}/members`, json(200, MEMBERS));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://replay.invalid').pathname;
    hits.push(`${req.method} ${path}`);
    req.resume();
    req.on('end', () => {
      const answer = routes.get(`${req.method} ${path}`);
      if (answer) answer(req, res);
      else json(404, { errors: [{ status: '404', code: 'not-found', detail: 'no such path' }] })(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  http = createUpstreamHttp({ timeoutMs: 2000, logger });
  const tokens = new AccessTokenProvider({ tokenUrl: `${base}/oauth/token`, credentials: CREDENTIALS, http });
  cardInterface = new CardInterfaceClient({ baseUrl: `${base}/ci`, tokens, http });
  cardAttributes = new CardAttributesClient({ baseUrl: `${base}/ca`, tokens, http });
  accounts = new AccountsClient({ baseUrl: `${base}/acc`, tokens, http });
});
afterEach(() => {
  hits.length = 0;
  resetRoutes();
});
afterAll(async () => {
  await http.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  // No PAN or CVC of an answer reached a log line.
  expect(lines.join('\n')).not.toMatch(/4111111111111111|"123"/);
});
resetRoutes();

describe('card interface, documented answers', () => {
  it('reads the documented 201: pan and cvc dropped, brand from the BIN, expiry from the request, no timestamps', async () => {
    const card = await cardInterface.createCard(VAULT, {
      pan: '4111111111111111',
      cvc: '123',
      expMonth: 4,
      expYear: 28,
    });
    expect(card).toEqual({
      id: 'CRDecqZp3xRgXU3TFmtcDdzQs',
      panAlias: 'tok_sandbox_hhyPgvvdFfFGBnyi73TfFu',
      cvcAlias: 'tok_sandbox_5XK62B8G2i1mTwoGR5o4tL',
      cvcStatus: 'active',
      bin: '411111',
      last4: '1111',
      brand: 'visa',
      expMonth: 4,
      expYear: 28,
      meta: {},
      duplicate: false,
    });
    expect(JSON.stringify(card)).not.toMatch(/4111111111111111|"123"|first8/);
  });

  it('reads a 303 naming the existing card in Location: the card is read and flagged a duplicate', async () => {
    routes.set('POST /ci/cards', (_req, res) => {
      res.writeHead(303, { location: `/ci/cards/${LONG_CARD_ID}`, 'content-length': '0' }).end();
    });
    const card = await cardInterface.createCard(VAULT, { pan: '4111111111111111', expMonth: 4, expYear: 28 });
    expect(card).toMatchObject({ id: LONG_CARD_ID, bin: '411111', duplicate: true });
    expect(card.createdAt).toBe('2025-01-10T18:23:48.966Z');
    // The token is cached from the first test; the 303 is not followed by the HTTP client itself.
    expect(hits).toEqual(['POST /ci/cards', `GET /ci/cards/${LONG_CARD_ID}`]);
  });

  it('reads a 303 whose body names the card (data.id), without a Location', async () => {
    routes.set('POST /ci/cards', json(303, { data: { type: 'cards', id: LONG_CARD_ID } }));
    const card = await cardInterface.createCard(VAULT, { pan: '4111111111111111', expMonth: 4, expYear: 28 });
    expect(card).toMatchObject({ id: LONG_CARD_ID, duplicate: true });
    expect(hits.filter((hit) => hit.startsWith('GET'))).toEqual([`GET /ci/cards/${LONG_CARD_ID}`]);
  });

  it('takes a 303 that carries the whole card record as it is, without another call', async () => {
    routes.set(
      'POST /ci/cards',
      json(303, CREATED_CARD, { location: '/ci/cards/CRDecqZp3xRgXU3TFmtcDdzQs' }),
    );
    const card = await cardInterface.createCard(VAULT, { pan: '4111111111111111', expMonth: 4, expYear: 28 });
    expect(card).toMatchObject({ id: 'CRDecqZp3xRgXU3TFmtcDdzQs', duplicate: true });
    expect(JSON.stringify(card)).not.toContain('4111111111111111');
    expect(hits.filter((hit) => hit.startsWith('GET'))).toEqual([]);
  });

  it('refuses a 303 naming no card as invalid-response, and a Location outside cards/{card_id}', async () => {
    for (const location of [undefined, '/ci/elsewhere', '/ci/cards/not-a-card-id']) {
      routes.set('POST /ci/cards', (_req, res) => {
        res.writeHead(303, location ? { location } : {}).end('See Other');
      });
      const error = await rejectionOf(
        cardInterface.createCard(VAULT, { pan: '4111111111111111', expMonth: 4, expYear: 28 }),
      );
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ area: 'card-interface', status: 303, code: 'invalid-response' });
    }
  });

  it('reads the documented subscription (zone-less microseconds) of a 52-character card id', async () => {
    expect(await cardInterface.subscribe(VAULT, LONG_CARD_ID)).toEqual({
      id: 'CUS9ecrtBiwFpyT4qCtStYp4e',
      cardId: LONG_CARD_ID,
      state: 'enrolled',
      createdAt: '2025-01-10T18:23:48.966Z',
      updatedAt: '2025-01-10T18:23:48.966Z',
    });
  });

  it('ignores members it does not know and passes new states through', async () => {
    routes.set(
      `POST /ci/cards/${LONG_CARD_ID}/card-update-subscriptions`,
      json(200, {
        data: {
          ...SUBSCRIPTION.data,
          attributes: { ...SUBSCRIPTION.data.attributes, state: 'pending_network', bin: '411111' },
          links: { self: '/x' },
        },
        meta: { request_id: 'r1' },
      }),
    );
    expect(await cardInterface.subscribe(VAULT, LONG_CARD_ID)).toMatchObject({ state: 'pending_network' });
    routes.set(
      `POST /ci/cards/${LONG_CARD_ID}/check`,
      json(200, {
        data: { type: 'card_updates', attributes: { event: 'reissued', updated_values: [], extra: 1 } },
      }),
    );
    expect(await cardInterface.check(VAULT, LONG_CARD_ID)).toEqual({
      cardId: LONG_CARD_ID,
      event: 'reissued',
      updatedValues: [],
    });
  });
});

describe('card attributes, documented answers', () => {
  it('reads the documented answer: a 7-digit bin number, mixed-case brand, alpha-3 country, extra members', async () => {
    expect(await cardAttributes.lookup(VAULT, '4111-1111-1111-1111')).toEqual({
      bin: 4111111,
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
    });
  });

  it('sends what the documented pattern takes: a trailing separator and whitespace between digits', async () => {
    for (const number of ['411111-', '4111\t1111 1111-1111']) {
      await expect(cardAttributes.lookup(VAULT, number)).resolves.toMatchObject({ bin: 4111111 });
    }
  });

  it('maps the documented 422 ("could not discern a bin") to BinNotDiscernedError, a 404 to not-found', async () => {
    const mapped = withGatewayErrors(cardAttributes, CARD_ATTRIBUTES_ERRORS);
    routes.set(
      'POST /ca/attributes/attributes',
      json(422, {
        errors: [
          {
            status: '422',
            code: 'unprocessable',
            detail: 'We could not discern a bin from the input provided',
          },
        ],
      }),
    );
    const error = await rejectionOf(mapped.lookup(VAULT, '999999'));
    expect(error).toBeInstanceOf(BinNotDiscernedError);
    expect(error).toMatchObject({ code: 'bin-not-discerned' });
    routes.set('POST /ca/attributes/attributes', (_req, res) => {
      res
        .writeHead(422, { 'content-type': 'text/plain' })
        .end('We could not discern a bin from the input provided');
    });
    expect(await rejectionOf(mapped.lookup(VAULT, '999999'))).toBeInstanceOf(BinNotDiscernedError);
    routes.set(
      'POST /ca/attributes/attributes',
      json(404, { errors: [{ status: '404', code: 'not-found', detail: 'no attributes' }] }),
    );
    expect(await rejectionOf(mapped.lookup(VAULT, '999999'))).toBeInstanceOf(CardAttributesNotFoundError);
  });
});

describe('organization members, documented answers', () => {
  it('reads the documented unpaged list as the whole list, ignoring members it does not use', async () => {
    expect(await accounts.listMembers(VAULT, ORGANIZATION, { number: 1, size: 100 })).toEqual({
      whole: true,
      items: [
        {
          id: 'IDvafeqcnYSvHLxtqAhur7MX',
          name: 'John Wick',
          emailAddress: '[email protected]',
          role: 'admin',
          permissions: ['read', 'write', 'admin'],
          ssoId: 'MK2323',
          createdAt: '2021-06-15T12:30:45.625Z',
          vaults: [{ id: 'tnto1wfx2gp', name: 'vault', role: 'admin', envIdentifier: 'LIVE' }],
        },
      ],
    });
  });

  it('tolerates a member without permissions and with attributes it does not know', async () => {
    const [user] = MEMBERS.data;
    const { permissions: _permissions, ...attributes } = user!.attributes;
    routes.set(
      `GET /acc/organizations/${ORGANIZATION}/members`,
      json(200, {
        data: [{ ...user, attributes: { ...attributes, mfa_enabled: true, last_login_at: null } }],
      }),
    );
    const page = await accounts.listMembers(VAULT, ORGANIZATION);
    expect(page.items[0]).toMatchObject({ id: 'IDvafeqcnYSvHLxtqAhur7MX', permissions: [] });
    expect(page.items[0]).not.toHaveProperty('mfaEnabled');
  });

  it('tells a 404 of the invites endpoint from an unknown organization', async () => {
    const mapped = withGatewayErrors(accounts, ACCOUNTS_ERRORS);
    // The replay upstream has no invites route: its 404 is the endpoint's, not the organization's.
    const invites = await rejectionOf(mapped.listInvites(VAULT, ORGANIZATION));
    expect(invites).not.toBeInstanceOf(OrganizationNotFoundError);
    expect(invites).toMatchObject({ code: 'not-found', status: 404, retryable: false });
    expect((invites as Error).constructor.name).toBe('UpstreamServiceError');
    // An invites 404 that says the organization is unknown, and any members 404, are.
    routes.set(
      `GET /acc/organizations/${ORGANIZATION}/invites`,
      json(404, {
        errors: [{ status: '404', code: 'organization-not-found', detail: 'no such organization' }],
      }),
    );
    expect(await rejectionOf(mapped.listInvites(VAULT, ORGANIZATION))).toBeInstanceOf(
      OrganizationNotFoundError,
    );
    expect(await rejectionOf(mapped.listMembers(VAULT, 'ACunknown0000000000000000'))).toBeInstanceOf(
      OrganizationNotFoundError,
    );
  });
});
