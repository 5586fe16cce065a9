import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import fc from 'fast-check';
import { type ExecutionResult, print } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import { SignJWT } from 'jose';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import WebSocket from 'ws';
import type { App } from '../../src/app.ts';
import { issueDevToken } from '../../src/auth/issue-dev-token.ts';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import { type GatewayConfig, loadConfig, type VaultCredentials } from '../../src/config/index.ts';
import type { CardEvent } from '../../src/events/card-event.ts';
import {
  type CardEventBus,
  createInMemoryBus,
  createInMemoryCardEventBus,
  type InMemoryBus,
} from '../../src/events/card-event-bus.ts';
import { encodeCursor } from '../../src/events/event-log.ts';
import type { NetworkTokenEvent } from '../../src/events/network-token-event.ts';
import type {
  UnmappedNotification,
  UnmappedNotificationSink,
} from '../../src/events/unmapped-notification.ts';
import {
  CARD_EVENTS_WEBHOOK_PATH,
  createWebhookReceiver,
  type NetworkTokenEventSink,
} from '../../src/events/webhook-receiver.ts';
import { createLogger, type Logger } from '../../src/lib/logger.ts';
import { isLuhnValid, luhnCheckDigit } from '../../src/lib/pan.ts';
import { signWebhookBody, verifyWebhookSignature } from '../../src/lib/webhook-signature.ts';
import type { Sandbox, SandboxOptions, SandboxRequestRecord } from '../../src/sandbox/sandbox.ts';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import { AccountUpdaterClient } from '../../src/upstream/account-updater/client.ts';
import { CardInterfaceClient } from '../../src/upstream/card-interface/client.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../src/upstream/http.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import { graphql } from '../generated/index.ts';
import { V1_ENROL_STATUS } from './wire.ts';

export {
  CARD_INTERFACE_TEST_CARD_IDS,
  cardEvent,
  cardNotificationBurst,
  DOCUMENTED_V1_DETAILS,
  documentedNetworkTokenNotification,
  documentedV1Notification,
  INTEGRATION_IDS,
  type NetworkTokenNotificationOverrides,
  NOTIFICATION_DETAILS_MEMBERS,
  NOTIFICATION_ENVELOPE_MEMBERS,
  type NotificationBody,
  type NotificationOverrides,
  networkTokenNotification,
  notification,
  randomCardId,
  TEST_CARD_ID,
} from './notifications.ts';

/**
 * The fixtures of the test suite, one module: leftovers disposed after each test, the test cards and
 * secrets, client tokens, the in-process stack (sandbox and gateway of src/dev.ts), a bare sandbox, the
 * upstream clients on a sandbox, the GraphQL helpers (typed results, the shared error fragment,
 * graphql-ws subscribers, the history connection) and signed webhook posts. Child processes live in
 * test/support/processes.ts; Redis, HAProxy, Chromium, SSE and telemetry receivers in their own
 * modules of test/support/.
 *
 * The stack and the sandbox are loaded on first use, so unit tests that import this module for a
 * notification or a token do not load the gateway.
 */

// ─── Leftovers ───────────────────────────────────────────────────────────────────────────────────

/** A teardown step registered with {@link leftover}. */
export type Dispose = () => unknown;

const leftovers: Dispose[] = [];

// As graphql-ws's own tests do: whatever a test opened is closed after it, last opened first, even
// when the test failed half-way.
afterEach(async () => {
  while (leftovers.length > 0) await leftovers.pop()!();
});

/**
 * Registers `dispose` to run after the current test (in reverse order of registration) and returns
 * `resource`, e.g. `const sandbox = leftover(await startSandbox(), (s) => s.stop())`.
 */
export function leftover<T>(resource: T, dispose: (resource: T) => unknown): T {
  leftovers.push(() => dispose(resource));
  return resource;
}

// ─── Secrets, credentials and test cards ────────────────────────────────────────────────────────

/** JWT secret of test stacks and gateway processes (HS256). */
export const TEST_JWT_SECRET = 'test-jwt-secret-0123456789abcdef-0123456789';
/** Webhook signing secret the embedded sandbox and the receiver use in tests. */
export const TEST_WEBHOOK_SECRET = 'whsec_test_0123456789abcdef0123';

/** The sandbox vaults. */
export type Vault = 'tntsandbox1' | 'tntsandbox2';

/** Sandbox vault client credentials of contract §2, written here as the contract writes them. */
export const CREDENTIALS: Record<Vault, VaultCredentials> = {
  tntsandbox1: { clientId: 'sandbox-client-1', clientSecret: 'sandbox-secret-1' },
  tntsandbox2: { clientId: 'sandbox-client-2', clientSecret: 'sandbox-secret-2' },
};

/**
 * The variables of a remote-mode gateway (`UPSTREAM=remote`) whose five upstream addresses are the
 * areas of the sandbox at `sandboxUrl` (contract §1), with both sandbox vaults' client credentials.
 */
export function remoteUpstreamEnv(sandboxUrl: string): Record<string, string> {
  return {
    UPSTREAM: 'remote',
    CARD_INTERFACE_URL: `${sandboxUrl}/card-interface`,
    ACCOUNT_UPDATER_URL: `${sandboxUrl}/account-updater`,
    CARD_ATTRIBUTES_URL: `${sandboxUrl}/card-attributes`,
    ACCOUNTS_URL: `${sandboxUrl}/accounts`,
    TOKEN_URL: `${sandboxUrl}/oauth/token`,
    UPSTREAM_CREDENTIALS: Object.entries(CREDENTIALS)
      .map(([vault, { clientId, clientSecret }]) => `${vault}=${clientId}:${clientSecret}`)
      .join(','),
  };
}

/** Options of {@link testToken}. */
export interface TokenOptions {
  /** Vaults the token grants; tntsandbox1 by default. */
  vaults?: readonly string[];
  /** Scopes; every upstream scope by default. */
  scopes?: readonly string[];
  /** `sub`; `test-user` by default. */
  subject?: string;
  /** Lifetime in seconds; 600 by default. */
  expiresInS?: number;
}

/** A client JWT (HS256, {@link TEST_JWT_SECRET}) for the gateway. */
export function testToken(options: TokenOptions = {}): Promise<string> {
  return issueDevToken({
    secret: TEST_JWT_SECRET,
    subject: options.subject ?? 'test-user',
    vaults: options.vaults ?? ['tntsandbox1'],
    scopes: options.scopes ?? UPSTREAM_SCOPES,
    expiresInS: options.expiresInS ?? 600,
  });
}

/**
 * A client JWT like {@link testToken}'s that expired 60 s ago (past the verifier's 5 s clock skew),
 * issued an hour before: refused with `token-expired`.
 */
export function expiredTestToken(options: Omit<TokenOptions, 'expiresInS'> = {}): Promise<string> {
  const nowS = Math.floor(Date.now() / 1000);
  return new SignJWT({
    scope: (options.scopes ?? UPSTREAM_SCOPES).join(' '),
    vaults: options.vaults ?? ['tntsandbox1'],
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.subject ?? 'test-user')
    .setIssuedAt(nowS - 3_600)
    .setExpirationTime(nowS - 60)
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

/**
 * Card numbers the tests use besides the sandbox test cards: Luhn-valid normal cards of each brand,
 * and the deliberately invalid numbers of the input validation tests (which must not leak either).
 */
export const EXTRA_TEST_PANS = [
  '4111111111111111',
  '5555555555554444',
  '4242424242424242',
  '378282246310005',
  '6011111111111117',
  '36227206271667',
  '3530111333300000',
  // Fails the Luhn check (test/gateway/input-validation.test.ts).
  '4111111111111112',
  // Luhn-valid but of no card family (test/gateway/input-validation.test.ts).
  '9999999999999995',
  // On the 8-digit BIN table rows 45560012, 45560034, 55243390 and 54737215, and on 455600 outside
  // its 8-digit rows (test/gateway/card-attributes.test.ts, test/gateway/joins.test.ts).
  '4556001200000105',
  '4556003400000208',
  '4556007000000302',
  '5524339000000404',
  '5473721500000508',
  // A Visa on 400000, a BIN the sandbox BIN table does not know (test/gateway/joins.test.ts).
  '4000007000000106',
  // The card interface's documented notification test cards (sandbox contract §8) and an Amex
  // failing enrolment (test/sandbox/card-management-notifications.test.ts, card-management-events).
  '5100260000079200',
  '5100260000069201',
  '5100260000059202',
  '5100260000049203',
  '5100260000039204',
  '378200000004002',
] as const;

/**
 * The members most rows of the sandbox BIN table share (src/sandbox/bin-table.json): a personal,
 * unregulated card of the United States with 16-digit numbers. Spread into an expected attributes
 * object; the object still states every member exactly.
 */
export const US_PERSONAL_16_DIGITS = {
  issuingCountryName: 'United States',
  issuingCountryCode: 'US',
  maximumPanLength: 16,
  cardCommercialType: 'PERSONAL',
  regulationStatus: 'UNREGULATED',
} as const;

/**
 * The owner of the sandbox organization (contract §5, the accounts fixture), the members every layer
 * answers alike; each layer adds its own shape of the owner's vaults.
 */
export const SANDBOX_OWNER = {
  id: 'USsandbox000000000000001',
  name: 'Ada Lovelace',
  emailAddress: 'ada.lovelace@example.com',
  role: 'owner' as const,
  permissions: ['read', 'write', 'admin'] as ('read' | 'write' | 'admin')[],
  ssoId: '8d2f4c7e-5b1a-4e3c-9a6d-000000000001',
  createdAt: '2024-01-15T09:30:00.000Z',
};

/** BINs of the sandbox BIN table (src/sandbox/bin-table.json) the bulk cards are spread over, with their PAN length. */
const BULK_BINS: readonly (readonly [bin: string, length: number])[] = [
  ['400021', 16],
  ['510026', 16],
  ['378282', 15],
  ['601100', 16],
  ['411111', 16],
];

/** Brand names of {@link BULK_BINS} in the sandbox BIN table, as the graph answers them. */
export const BULK_BIN_BRANDS: Readonly<Record<string, string>> = {
  '400021': 'VISA',
  '510026': 'MASTERCARD',
  '378282': 'AMERICAN EXPRESS',
  '601100': 'DISCOVER',
  '411111': 'VISA',
};

/**
 * 25 Luhn-valid normal cards, five on each of {@link BULK_BINS} (BIN, `7`, zeros, a three-digit index,
 * the check digit), for the N+1 test of test/gateway/joins.test.ts. Their last four (`00nX`) name no
 * scenario of contract §5, so the sandbox enrols them as normal cards and their network tokens end
 * `ACTIVE`.
 */
export const BULK_TEST_PANS: readonly string[] = BULK_BINS.flatMap(([bin, length]) =>
  Array.from({ length: 5 }, (_, index) => {
    const prefix = `${bin}${'7'.padEnd(length - 10, '0')}${String(index).padStart(3, '0')}`;
    return `${prefix}${luhnCheckDigit(prefix)}`;
  }),
);

/**
 * Luhn-valid 13-19 digit windows of `text`: every card number the text could show, independent of the
 * masker under test. With `joinGroups` (the default) digits grouped by single spaces or hyphens are
 * joined first (`4111 1111 …`, as card numbers are written).
 */
export function luhnWindows(text: string, joinGroups = true): string[] {
  const compact = joinGroups ? text.replace(/(\d{3})[ \-_.x/](?=\d{3})/g, '$1') : text;
  const found: string[] = [];
  for (const run of compact.match(/\d{13,}/g) ?? []) {
    for (let start = 0; start + 13 <= run.length; start++) {
      for (let length = 13; length <= 19 && start + length <= run.length; length++) {
        const window = run.slice(start, start + length);
        // Card numbers start with 1-9 (ISO/IEC 7812).
        if (!window.startsWith('0') && isLuhnValid(window)) found.push(window);
      }
    }
  }
  return found;
}

/**
 * fast-check: a Luhn-valid PAN of 13 to 19 digits starting with `firstDigit`, or with any of 1-9
 * (ISO/IEC 7812) when omitted.
 */
export function panArbitrary(firstDigit?: string): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.integer({ min: 13, max: 19 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 18, maxLength: 18 }),
    )
    .map(([length, digits]) => {
      const prefix = `${firstDigit ?? (digits[0]! % 9) + 1}${digits.slice(1, length - 1).join('')}`;
      return `${prefix}${luhnCheckDigit(prefix)}`;
    });
}

/** Zero of each digit script the PAN spellings use: ASCII, full-width, Arabic-Indic, Extended Arabic-Indic, Devanagari, mathematical bold. */
const DIGIT_ZEROS = [0x30, 0xff10, 0x660, 0x6f0, 0x966, 0x1d7ce] as const;

/**
 * Separators a PAN spelling puts between its digit groups: runs of spaces, tabs and newlines,
 * punctuation, NBSP and zero-width characters (every non-alphanumeric the masker claims to read
 * through), and `x`.
 */
const PAN_SPELLING_SEPARATORS = [
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  ' \t ',
  ',',
  ', ',
  ':',
  ';',
  '.',
  '-',
  ' - ',
  '_',
  '/',
  '|',
  'x',
  '\u00a0',
  '\u200b',
  '\u200c',
  '\u2060',
  '\ufeff',
  '\u3000',
] as const;

/** `digits` (ASCII) cut into groups of the given sizes (cycled), the last group taking the rest. */
function groupsOf(digits: string, sizes: readonly number[]): string[] {
  const groups: string[] = [];
  for (let at = 0, k = 0; at < digits.length; k++) {
    const size = sizes[k % sizes.length]!;
    groups.push(digits.slice(at, at + size));
    at += size;
  }
  return groups;
}

/**
 * fast-check: a PAN ({@link panArbitrary}) and a spelling of it: its digits in one script of
 * {@link DIGIT_ZEROS}, cut into groups of 1-6 digits joined by separators of
 * {@link PAN_SPELLING_SEPARATORS}, sometimes glued to a prefix (`CRD`, `tok_`) or a suffix.
 */
export function panSpellingArbitrary(): fc.Arbitrary<{ pan: string; spelling: string }> {
  return fc
    .record({
      pan: panArbitrary(),
      zero: fc.constantFrom(...DIGIT_ZEROS),
      sizes: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 6 }),
      separators: fc.array(fc.constantFrom(...PAN_SPELLING_SEPARATORS), { minLength: 1, maxLength: 4 }),
      prefix: fc.constantFrom('', 'CRD', 'tok_', 'PAN ', 'card: '),
      suffix: fc.constantFrom('', '.', ' ok', 'Z'),
    })
    .map(({ pan, zero, sizes, separators, prefix, suffix }) => {
      const script = (group: string) =>
        [...group].map((d) => String.fromCodePoint(zero + Number(d))).join('');
      const groups = groupsOf(pan, sizes).map(script);
      const spelling = groups.reduce(
        (text, group, index) =>
          index === 0 ? group : `${text}${separators[index % separators.length]}${group}`,
        '',
      );
      return { pan, spelling: `${prefix}${spelling}${suffix}` };
    });
}

/**
 * fast-check: a PAN cut into 2-8 parts for array items or sibling members: each part a string of its
 * digits (sometimes with a separator inside), or a JSON number when it has no leading zero.
 */
export function splitPanArbitrary(): fc.Arbitrary<{ pan: string; parts: (string | number)[] }> {
  return fc
    .record({
      pan: panArbitrary(),
      sizes: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 2, maxLength: 4 }),
      asNumbers: fc.boolean(),
      inner: fc.constantFrom('', ' ', '-', '\u00a0'),
    })
    .filter(({ pan, sizes }) => groupsOf(pan, sizes).length >= 2)
    .map(({ pan, sizes, asNumbers, inner }) => ({
      pan,
      parts: groupsOf(pan, sizes).map((group) =>
        asNumbers && !group.startsWith('0')
          ? Number(group)
          : group.length > 2
            ? `${group.slice(0, 2)}${inner}${group.slice(2)}`
            : group,
      ),
    }));
}

/**
 * fast-check: a member name of a card security code, spelt any way the masker claims to read
 * (`cvc`, `cvv`, `cvc2`, `cvv2`, `cid`, `csc`, `security code`, `verification value`; lower, upper or
 * capitalised words joined by `_`, `-`, a space, `.` or camelCase; prefixes `card`, `payment`, `x`;
 * suffixes `number`, `code`, `value`), and a 3-4 digit code.
 */
export function cvcSpellingArbitrary(): fc.Arbitrary<{ name: string; code: string }> {
  return fc
    .record({
      prefix: fc.constantFrom([], ['card'], ['payment'], ['x'], ['my', 'card']),
      base: fc.constantFrom(
        ['cvc'],
        ['cvv'],
        ['cvc2'],
        ['cvv2'],
        ['cid'],
        ['csc'],
        ['security', 'code'],
        ['verification', 'value'],
      ),
      suffix: fc.constantFrom([], ['number'], ['code'], ['value']),
      join: fc.constantFrom('_', '-', ' ', '.', ''),
      casing: fc.constantFrom('lower', 'upper', 'capital'),
      code: fc.integer({ min: 100, max: 9999 }).map(String),
    })
    .map(({ prefix, base, suffix, join, casing, code }) => {
      const words = [...prefix, ...base, ...suffix];
      const cased = words.map((word, index) => {
        // Without a separator the words are told apart by camelCase.
        if (join === '') return index === 0 ? word : `${word[0]!.toUpperCase()}${word.slice(1)}`;
        if (casing === 'upper') return word.toUpperCase();
        return casing === 'capital' ? `${word[0]!.toUpperCase()}${word.slice(1)}` : word;
      });
      return { name: cased.join(join), code };
    });
}

/**
 * The digits of `text` in order, every other character dropped: any Unicode decimal digit (NFKC and
 * its value) and `\uXXXX` escapes of digits count. The tests' detector, independent of the masker.
 */
export function digitsOf(text: string): string {
  const unescaped = text.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
  let digits = '';
  for (const char of unescaped) {
    if (char >= '0' && char <= '9') digits += char;
    else if (char.charCodeAt(0) >= 128) digits += digitOfNonAscii(char);
  }
  return digits;
}

/** Digit values of the non-ASCII characters {@link digitsOf} met ('' for a non-digit). */
const nonAsciiDigits = new Map<string, string>();

function digitOfNonAscii(char: string): string {
  let digit = nonAsciiDigits.get(char);
  if (digit === undefined) {
    const compatible = char.normalize('NFKC');
    digit = '';
    if (compatible.length === 1 && compatible >= '0' && compatible <= '9') digit = compatible;
    else if (/\p{Nd}/u.test(char)) {
      const codePoint = char.codePointAt(0)!;
      let offset = 0;
      while (/\p{Nd}/u.test(String.fromCodePoint(codePoint - offset - 1))) offset++;
      digit = String(offset % 10);
    }
    nonAsciiDigits.set(char, digit);
  }
  return digit;
}

/** True when the digits of `pan` stand together in {@link digitsOf} `text`: the PAN leaked, however spelt. */
export function holdsPan(text: string, pan: string): boolean {
  return digitsOf(text).includes(pan);
}

/** A running gateway on the embedded sandbox, on free ports, logging to its own file. */
export interface Stack {
  app: App;
  /** The gateway's configuration, with the sandbox's real addresses in embedded mode. */
  config: GatewayConfig;
  url: string;
  /** Base address of the gateway's metrics listener (`/metrics`, and the full `/readiness` report). */
  metricsUrl: string;
  /** The embedded sandbox; `undefined` with `UPSTREAM=remote`. */
  sandbox: Sandbox | undefined;
  sandboxUrl: string;
  logFile: string;
  /** {@link testToken}: a client JWT (HS256) for the given vaults and scopes (default: tntsandbox1, every scope). */
  token(options?: TokenOptions): Promise<string>;
  /** Runs a typed GraphQL document over HTTP POST /graphql. */
  execute<R, V>(
    document: TypedDocumentNode<R, V>,
    variables: V,
    token?: string | null,
  ): Promise<ExecutionResult<R> & { status: number }>;
  /** A graphql-ws client on `/graphql`, authorized with `token` (none when null). */
  wsClient(token: string | null): Client;
  /**
   * Stops the stack and asserts no test PAN reached its log output and no sandbox answer violated the
   * sandbox's OpenAPI document.
   */
  stop(): Promise<void>;
}

/** Sandbox settings a stack may change besides its defaults (e.g. a slow BIN lookup). */
export type StackSandboxOptions = Pick<SandboxOptions, 'cardAttributesDelayMs'>;

/**
 * Starts the development composition of src/dev.ts (sandbox and gateway) with ports 0, a 100 ms
 * enrolment delay, a compressed retry schedule and response validation in the sandbox. `env`
 * overrides configuration variables; `sandboxOptions` adds sandbox settings.
 */
export async function startStack(
  env: Record<string, string> = {},
  sandboxOptions: StackSandboxOptions = {},
): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'cardgraph-'));
  const logFile = join(dir, 'log.jsonl');
  const destination = pino.destination({ dest: logFile, sync: true });
  const config = loadConfig({
    UPSTREAM: 'embedded',
    PORT: '0',
    HOST: '127.0.0.1',
    SANDBOX_PORT: '0',
    METRICS_PORT: '0',
    SANDBOX_WEBHOOK_DELAY_MS: '100',
    LOG_LEVEL: 'debug',
    WEBHOOK_SECRETS: TEST_WEBHOOK_SECRET,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    UPSTREAM_TIMEOUT_MS: '2000',
    DATA_DIR: join(dir, 'data'),
    // `SANDBOX_WIRE=specification npm test` runs the stacks' sandboxes in the specification's readings too.
    ...(process.env.SANDBOX_WIRE ? { SANDBOX_WIRE: process.env.SANDBOX_WIRE } : {}),
    ...env,
  });
  const { startDevelopment } = await import('../../src/dev.ts');
  const development = await startDevelopment(config, {
    logDestination: destination,
    sandbox: { retryScheduleMs: [0, 100, 300], validateResponses: true, ...sandboxOptions },
  });
  const { app, url, metricsUrl, sandbox } = development;
  const clients: Client[] = [];

  return {
    app,
    config: development.config,
    url,
    metricsUrl,
    sandbox,
    sandboxUrl: development.sandboxUrl!,
    logFile,
    token: testToken,
    async execute(document, variables, token) {
      const answer = await postGraphql(
        url,
        { query: print(document), variables: variables as Record<string, unknown> },
        token ?? null,
      );
      return { ...(answer.body as ExecutionResult<never>), status: answer.status };
    },
    wsClient(token) {
      const client = createClient({
        url: `${url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: token ? { authorization: `Bearer ${token}` } : {},
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.map((c) => c.dispose()));
      await development.stop();
      destination.flushSync();
      assertNoTestPanIn(readFileSync(logFile, 'utf8'));
      // Every answer the embedded sandbox gave this stack must match its OpenAPI document.
      if (sandbox) assertNoResponseViolations(sandbox);
    },
  };
}

/** What {@link useStack} gives the tests of its `describe` once its `beforeAll` has run. */
/**
 * Runs `work` and returns its result with the requests `stack`'s embedded sandbox answered meanwhile,
 * token requests (`/oauth/token`) left out: the upstream calls an operation made.
 * @throws Error when the stack runs without an embedded sandbox (`UPSTREAM=remote`).
 */
export async function sandboxRequestsDuring<T>(
  stack: Stack,
  work: () => Promise<T>,
): Promise<{ result: T; requests: SandboxRequestRecord[] }> {
  if (!stack.sandbox) throw new Error('sandboxRequestsDuring needs the embedded sandbox');
  const before = stack.sandbox.requests().length;
  const result = await work();
  const requests = stack.sandbox.requests().slice(before);
  return { result, requests: requests.filter((r) => r.path !== '/oauth/token') };
}

export interface StackUse {
  stack: Stack;
  /** A client token for tntsandbox1 with every scope. */
  vault1Token: string;
  /** A client token for tntsandbox2 with every scope. */
  vault2Token: string;
}

/**
 * Starts a stack ({@link startStack} with `env` and `sandbox`) before the tests of the enclosing
 * `describe` (or file) and stops it after them, with a client token per sandbox vault. Read the
 * members inside tests and hooks: they are set by the `beforeAll` this registers.
 */
export function useStack(env: Record<string, string> = {}, sandbox: StackSandboxOptions = {}): StackUse {
  const use = {} as StackUse;
  beforeAll(async () => {
    use.stack = await startStack(env, sandbox);
    [use.vault1Token, use.vault2Token] = await Promise.all([
      testToken({ vaults: ['tntsandbox1'] }),
      testToken({ vaults: ['tntsandbox2'] }),
    ]);
  });
  afterAll(() => use.stack?.stop());
  return use;
}

/**
 * Every PAN the suite uses: the sandbox test cards of contract §5, {@link EXTRA_TEST_PANS} and
 * {@link BULK_TEST_PANS}.
 */
export const ALL_TEST_PANS: readonly string[] = [
  ...SANDBOX_TEST_CARDS.map((c) => c.pan),
  ...EXTRA_TEST_PANS,
  ...BULK_TEST_PANS,
];

/** @throws when `text` holds any test PAN (logs, responses, close reasons). */
export function assertNoTestPanIn(text: string): void {
  const leaked = ALL_TEST_PANS.filter((pan) => text.includes(pan));
  if (leaked.length > 0) {
    throw new Error(
      `card numbers leaked: ${leaked.map((p) => `${p.slice(0, 6)}…${p.slice(-4)}`).join(', ')}`,
    );
  }
}

/** Collects up to `count` results of a graphql-ws subscription, or fails after `timeoutMs`. */
export async function collect<R>(
  client: Client,
  document: TypedDocumentNode<R, Record<string, unknown>> | TypedDocumentNode<R, never>,
  variables: Record<string, unknown>,
  count: number,
  timeoutMs = 5_000,
): Promise<ExecutionResult<R>[]> {
  const results: ExecutionResult<R>[] = [];
  const iterator = client.iterate<R>({ query: print(document), variables });
  const timer = setTimeout(() => void iterator.return?.(), timeoutMs);
  try {
    for await (const result of iterator) {
      results.push(result as ExecutionResult<R>);
      if (results.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return results;
}

/**
 * Waits until exactly `count` live subscriptions of `tenant` are registered on the app's event bus
 * (so `0` waits for every subscription to be gone).
 */
export async function waitForSubscribers(
  app: App,
  tenant: string,
  count: number,
  timeoutMs = 5_000,
): Promise<void> {
  await vi.waitFor(
    () => expect(app.events?.subscriberCount(tenant) ?? 0, `subscribers of ${tenant}`).toBe(count),
    { timeout: timeoutMs, interval: 10 },
  );
}

// ─── Sandbox ─────────────────────────────────────────────────────────────────────────────────────

/** A started sandbox plus request helpers bound to its address. */
export interface TestSandbox {
  sandbox: Sandbox;
  url: string;
  /** Access token of a vault, optionally limited to `scope` (space-separated). */
  token(vault: Vault, scope?: string): Promise<string>;
  /** Sends a request; `body` is JSON-encoded with `contentType` unless it is a string. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; contentType?: string },
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON members and assert on them
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  /**
   * Enrols `pan` (default 4111111111111111, a normal card) in account updater for `vault` (tntsandbox2
   * on behalf of its merchant SMsandbox2merchant00001), expects 201 and returns the card id.
   */
  enrol(vault: Vault, pan?: string): Promise<string>;
  /**
   * Stops the sandbox, then fails when any of its answers violated its OpenAPI document (response
   * validation is on in every test sandbox).
   */
  stop(): Promise<void>;
}

/**
 * @throws Error listing the violations (method, path, status, problem) when there are any.
 */
export function assertNoResponseViolations(sandbox: Pick<Sandbox, 'responseViolations'>): void {
  const violations = sandbox.responseViolations();
  if (violations.length === 0) return;
  const lines = violations.map((v) => `${v.method} ${v.path} → ${v.status}: ${v.problem}`);
  throw new Error(`sandbox answers violate its OpenAPI document:\n${lines.join('\n')}`);
}

/**
 * Starts a sandbox on a free port with a silent logger (unless given one), validating every answer
 * against its OpenAPI document.
 */
export async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const { createSandbox } = await import('../../src/sandbox/sandbox.ts');
  const sandbox = createSandbox({
    port: 0,
    logger: createLogger({ name: 'sandbox', level: 'silent' }),
    webhookDelayMs: 50,
    validateResponses: true,
    // `SANDBOX_WIRE=specification npm test` runs every test against the specification's readings.
    ...(process.env.SANDBOX_WIRE === 'specification' ? { wire: 'specification' as const } : {}),
    ...options,
  });
  const { url } = await sandbox.start();
  const call: TestSandbox['call'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    }
    const response = await fetch(`${url}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      // A 303 (card interface Duplicate Card Check) is an answer to look at, not to follow.
      redirect: 'manual',
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };
  const tokens = new Map<string, string>();
  const testSandbox: TestSandbox = {
    sandbox,
    url,
    call,
    async enrol(vault, pan = '4111111111111111') {
      const response = await call('POST', '/account-updater/cards', {
        token: await testSandbox.token(vault),
        body: {
          name: 'Ada',
          number: pan,
          exp_month: 6,
          exp_year: 30,
          ...(vault === 'tntsandbox2'
            ? { merchant: { vgs_merchant_id: 'SMsandbox2merchant00001', sub_merchant_name: 'Shop' } }
            : {}),
        },
      });
      expect(response.status).toBe(V1_ENROL_STATUS);
      return response.body.data.id as string;
    },
    async token(vault, scope) {
      const key = `${vault} ${scope ?? ''}`;
      const cached = tokens.get(key);
      if (cached) return cached;
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CREDENTIALS[vault].clientId,
        client_secret: CREDENTIALS[vault].clientSecret,
        ...(scope ? { scope } : {}),
      });
      const response = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      if (response.status !== 200) throw new Error(`token request failed: ${response.status}`);
      const { access_token } = (await response.json()) as { access_token: string };
      tokens.set(key, access_token);
      return access_token;
    },
    async stop() {
      await sandbox.stop();
      assertNoResponseViolations(sandbox);
    },
  };
  return testSandbox;
}

/** One member of a sandbox error answer's `errors` (JSON:API style): the status as a string, `code`, `detail`, the pointer when there is one. */
export function sandboxError(status: number, code: string, detail: string, pointer?: string) {
  return { status: String(status), code, detail, ...(pointer === undefined ? {} : { source: { pointer } }) };
}

/**
 * Asserts a sandbox answer of HTTP `status` whose `errors` are exactly one {@link sandboxError}:
 * that status (as a string), `code`, `detail` word for word and `source.pointer` (absent when
 * `pointer` is).
 */
export function expectSandboxErrorAnswer(
  response: Awaited<ReturnType<TestSandbox['call']>>,
  status: number,
  code: string,
  detail: string,
  pointer?: string,
): void {
  expect(response.status).toBe(status);
  expect(response.body.errors).toEqual([sandboxError(status, code, detail, pointer)]);
}

/**
 * Asserts a JSON:API-style error answer of the sandbox: `status`, a JSON content type and exactly one
 * error with that status (as a string), `code`, a string `detail` and `source.pointer` (absent when
 * `pointer` is).
 */
export function expectSandboxError(
  response: Awaited<ReturnType<TestSandbox['call']>>,
  status: number,
  code: string,
  pointer?: string,
): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.body.errors).toHaveLength(1);
  const [error] = response.body.errors;
  expect(error.status).toBe(String(status));
  expect(error.code).toBe(code);
  expect(typeof error.detail).toBe('string');
  if (pointer === undefined) expect(error.source).toBeUndefined();
  else expect(error.source).toEqual({ pointer });
}

/**
 * POSTs the string `body` to `path` of `sandbox` with `token`, declared as `contentType`, and asserts
 * the sandbox's 415 unsupported-media-type answer ({@link expectSandboxError}, no pointer).
 */
export async function expectMediaTypeRefused(
  sandbox: Pick<TestSandbox, 'call'>,
  path: string,
  token: string,
  body: string,
  contentType: string,
): Promise<void> {
  expectSandboxError(
    await sandbox.call('POST', path, { token, body, contentType }),
    415,
    'unsupported-media-type',
  );
}

/** A billing address in the sandbox's wire form (snake_case members), every member filled. */
export const SANDBOX_BILLING_ADDRESS = {
  name: 'Ada Lovelace',
  company: 'Engines Ltd',
  address1: '1 Main St',
  address2: 'Floor 2',
  city: 'London',
  region: 'LND',
  country: 'GB',
  postal_code: 'N1 1AA',
  phone: '+44 20 7946 0000',
};

/** A {@link TestSandbox} whose vaults each notify a {@link Receiver} of their own. */
export interface NotifyingSandbox extends TestSandbox {
  receivers: Record<Vault, Receiver>;
}

/**
 * {@link startSandbox} with `options`, and a receiver per sandbox vault registered as its webhook
 * endpoint, signed with that vault's secret of `secrets`; `stop()` also closes the receivers.
 */
export async function startNotifyingSandbox(
  options: Partial<SandboxOptions>,
  secrets: Record<Vault, string>,
): Promise<NotifyingSandbox> {
  const sandbox = await startSandbox(options);
  const receivers = { tntsandbox1: await startReceiver(), tntsandbox2: await startReceiver() };
  for (const vault of ['tntsandbox1', 'tntsandbox2'] as const) {
    sandbox.sandbox.registerWebhookEndpoint(vault, { url: receivers[vault].url, secret: secrets[vault] });
  }
  return {
    ...sandbox,
    receivers,
    async stop() {
      await sandbox.stop();
      await Promise.all(Object.values(receivers).map((receiver) => receiver.close()));
    },
  };
}

/** A request captured by {@link startReceiver}. */
export interface ReceivedRequest {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** How long the fixtures' waits ({@link vi.waitFor}) give asynchronous work: 5 s, checking every 10 ms. */
export const WAIT = { timeout: 5_000, interval: 10 } as const;

/**
 * The decoded `details` member of a notification request: JSON in a JSON string (contract §4) or a
 * JSON object (the documented network token notification, contract §8).
 */
export function detailsOf(request: ReceivedRequest): Record<string, unknown> {
  const { details } = JSON.parse(request.body.toString('utf8')) as { details: unknown };
  return (typeof details === 'string' ? JSON.parse(details) : details) as Record<string, unknown>;
}

/**
 * The wire reading the test sandboxes answer in ({@link startSandbox}): `specification` under
 * `SANDBOX_WIRE=specification npm test`, else the default `documented`.
 */
export const SANDBOX_WIRE_UNDER_TEST: 'documented' | 'specification' =
  process.env.SANDBOX_WIRE === 'specification' ? 'specification' : 'documented';

/**
 * Asserts that `request` carries a valid `vgs-signature` of its body under `secret` (300 s tolerance,
 * contract §4) and returns the parsed body.
 */
export function verifiedBody(request: ReceivedRequest, secret: string) {
  const verdict = verifyWebhookSignature(
    request.headers['vgs-signature'] as string | undefined,
    request.body,
    [secret],
    300,
    Math.floor(Date.now() / 1000),
  );
  expect(verdict.ok).toBe(true);
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON members and assert on them
  return JSON.parse(request.body.toString('utf8')) as any;
}

/** A webhook receiver started by {@link startReceiver}. */
export interface Receiver {
  /** Where to register it, `http://127.0.0.1:<port>/webhooks`. */
  url: string;
  /** Every request so far, in arrival order. */
  received: ReceivedRequest[];
  /** The requests whose decoded details satisfy `match`. */
  matching(match: (details: Record<string, unknown>) => boolean): ReceivedRequest[];
  /** Waits ({@link WAIT}) for the first request whose decoded details satisfy `match` (any request by default). */
  arrival(match?: (details: Record<string, unknown>) => boolean): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

/**
 * A local webhook receiver. `answer(n)` gives the status for the n-th request (1-based).
 */
export async function startReceiver(answer: (n: number) => number = () => 200): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(answer(received.length)).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const matching: Receiver['matching'] = (match) => received.filter((r) => match(detailsOf(r)));
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    matching,
    arrival: (match = () => true) =>
      vi.waitFor(() => {
        const [first] = matching(match);
        if (!first) throw new Error('no matching webhook request yet');
        return first;
      }, WAIT),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ─── Card-event webhook receiver ─────────────────────────────────────────────────────────────────

/** The receiver of src/events/webhook-receiver.ts alone on a free port, started by {@link startWebhookReceiver}. */
export interface TestWebhookReceiver {
  /** `http://127.0.0.1:<port>/webhooks/card-events`. */
  url: string;
  /** The in-memory bus behind it, for subscribing. */
  inner: CardEventBus;
  /** Events the bus published (not duplicates), in order; cleared by {@link reset}. */
  published: CardEvent[];
  /** The in-memory bus of network token events (subject: PAN alias), for subscribing. */
  networkTokenBus: InMemoryBus<NetworkTokenEvent>;
  /** Network token events published (not duplicates), in order; cleared by {@link reset}. */
  networkTokenEvents: NetworkTokenEvent[];
  /** Unmapped notifications stored (not duplicates), in order; cleared by {@link reset}. */
  unmapped: UnmappedNotification[];
  /** The receiver's JSON log lines; cleared by {@link reset}. */
  logLines: string[];
  reset(): void;
  close(): Promise<void>;
}

/**
 * Starts a webhook receiver over in-memory buses (card events, network token events) and an
 * in-memory unmapped store that record what they received, with a fixed clock (`nowMs`) and a
 * logger kept in memory at `logLevel`; other paths answer 404. `bus`, `networkTokens` and `unmapped`
 * replace the recording ones (e.g. by ones that fail).
 */
export async function startWebhookReceiver(options: {
  secrets: string[];
  nowMs: number;
  toleranceS?: number;
  logLevel?: 'debug' | 'info' | 'silent';
  bus?: CardEventBus;
  networkTokens?: NetworkTokenEventSink;
  unmapped?: UnmappedNotificationSink;
}): Promise<TestWebhookReceiver> {
  const logLines: string[] = [];
  const published: CardEvent[] = [];
  const networkTokenEvents: NetworkTokenEvent[] = [];
  const unmapped: UnmappedNotification[] = [];
  const networkTokenBus = createInMemoryBus<NetworkTokenEvent>({
    subjectOf: (event) => event.panAlias ?? '',
  });
  const unmappedKeys = new Set<string>();
  const inner = createInMemoryCardEventBus();
  // Records what reached subscribers, so "nothing was published" can be asserted directly.
  const recording: CardEventBus = {
    async publish(event) {
      const outcome = await inner.publish(event);
      if (outcome === 'published') published.push(event);
      return outcome;
    },
    subscribe: (filter, signal) => inner.subscribe(filter, signal),
  };
  const receiver = createWebhookReceiver({
    secrets: options.secrets,
    toleranceS: options.toleranceS ?? 300,
    logger: createLogger({
      level: options.logLevel ?? 'info',
      name: 'test',
      destination: { write: (line: string) => logLines.push(line) },
    }),
    bus: options.bus ?? recording,
    networkTokens: options.networkTokens ?? {
      async publish(event) {
        const outcome = await networkTokenBus.publish(event);
        if (outcome === 'published') networkTokenEvents.push(event);
        return outcome;
      },
    },
    unmapped: options.unmapped ?? {
      async record(entry) {
        const key = `${entry.tenant}\u0000${entry.id}`;
        if (unmappedKeys.has(key)) return 'duplicate';
        unmappedKeys.add(key);
        unmapped.push(entry);
        return 'published';
      },
    },
    now: () => options.nowMs,
  });
  const server = createServer((req, res) => {
    if (req.url === CARD_EVENTS_WEBHOOK_PATH) void receiver(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${CARD_EVENTS_WEBHOOK_PATH}`,
    inner,
    published,
    networkTokenBus,
    networkTokenEvents,
    unmapped,
    logLines,
    reset() {
      published.length = 0;
      networkTokenEvents.length = 0;
      unmapped.length = 0;
      unmappedKeys.clear();
      logLines.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

// ─── Upstream clients ────────────────────────────────────────────────────────────────────────────

/** A pino logger at debug level whose JSON lines are kept in `lines` (for "no PAN in logs" checks). */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    name: 'upstream-test',
    destination: { write: (line) => void lines.push(line) },
  });
  return { logger, lines };
}

/** The parsed log lines whose message is `msg`. */
export function logEntries(lines: readonly string[], msg: string): Record<string, unknown>[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.msg === msg);
}

/** The parsed log lines of the upstream clients of `area` (e.g. `accounts`, `network-tokens`). */
export function areaLogEntries(lines: readonly string[], area: string): Record<string, unknown>[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.area === area);
}

/** Everything a test needs: a started sandbox and upstream clients pointed at it. */
export interface UpstreamFixture {
  sandbox: Sandbox;
  url: string;
  http: UpstreamHttp;
  tokens: AccessTokenProvider;
  cardInterface: CardInterfaceClient;
  accountUpdater: AccountUpdaterClient;
  logLines: string[];
  /** Sandbox request log entries for `method path` (path below the sandbox root). */
  requestsTo(method: string, path: string): number;
  /** Options of an upstream client of the area at `path` (e.g. `/accounts`): its base address, the token provider and the HTTP client. */
  clientOptions(path: string): { baseUrl: string; tokens: AccessTokenProvider; http: UpstreamHttp };
  close(): Promise<void>;
}

/** Options of {@link startUpstream} and {@link useUpstream}. */
export interface UpstreamFixtureOptions {
  timeoutMs?: number;
  hangMs?: number;
  wire?: SandboxOptions['wire'];
}

/**
 * Starts the embedded sandbox on a free port and builds the clients of contract §1's addresses.
 * @param options `timeoutMs` of the HTTP client (default 5000), `hangMs` of card 4998 (default 2000),
 *   `wire` the sandbox answers in (default: `SANDBOX_WIRE`, see {@link startSandbox}).
 */
export async function startUpstream(options: UpstreamFixtureOptions = {}): Promise<UpstreamFixture> {
  const { sandbox, url } = await startSandbox({
    hangMs: options.hangMs ?? 2000,
    ...(options.wire ? { wire: options.wire } : {}),
  });
  const { logger, lines } = captureLogger();
  const http = createUpstreamHttp({ timeoutMs: options.timeoutMs ?? 5000, logger });
  const tokens = new AccessTokenProvider({ tokenUrl: `${url}/oauth/token`, credentials: CREDENTIALS, http });
  return {
    sandbox,
    url,
    http,
    tokens,
    cardInterface: new CardInterfaceClient({ baseUrl: `${url}/card-interface`, tokens, http }),
    accountUpdater: new AccountUpdaterClient({ baseUrl: `${url}/account-updater`, tokens, http }),
    logLines: lines,
    clientOptions: (path) => ({ baseUrl: `${url}${path}`, tokens, http }),
    requestsTo: (method, path) =>
      sandbox.requests().filter((r) => r.method === method && r.path === path).length,
    async close() {
      await sandbox.stop();
      await http.close();
      assertNoResponseViolations(sandbox);
    },
  };
}

/**
 * {@link startUpstream} before the tests of the enclosing `describe` (or file), closed after them. The
 * returned object forwards to the started fixture: read its members inside tests and hooks.
 */
export function useUpstream(options: UpstreamFixtureOptions = {}): UpstreamFixture {
  let started: UpstreamFixture | undefined;
  beforeAll(async () => {
    started = await startUpstream(options);
  });
  afterAll(() => started?.close());
  return new Proxy({} as UpstreamFixture, {
    get(_target, member) {
      if (!started)
        throw new Error('useUpstream: the fixture starts in beforeAll; read it inside tests and hooks');
      return Reflect.get(started, member);
    },
  });
}

/**
 * A Luhn-valid PAN of `length` digits starting with `prefix` and ending with `suffix` (the sandbox picks
 * test scenarios by the last four digits), adjusting the digit just before the suffix.
 */
export function panWith(prefix: string, suffix: string, length: number): string {
  const fill = '0'.repeat(length - prefix.length - suffix.length - 1);
  for (let d = 0; d <= 9; d++) {
    const pan = `${prefix}${fill}${d}${suffix}`;
    if (isLuhnValid(pan)) return pan;
  }
  throw new Error('unreachable: one digit always satisfies Luhn');
}

/** Runs `work` and returns what it rejected with; fails when it resolves. */
export async function rejectionOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** True when `text` holds a run of 12 or more consecutive digits (an unmasked card number). */
export function containsDigitRun(text: string): boolean {
  return /\d{12,}/.test(text);
}

// ─── GraphQL ─────────────────────────────────────────────────────────────────────────────────────

/** Narrows a union result to the member named `typename`, failing the test otherwise. */
export function member<T extends { __typename?: string }, N extends NonNullable<T['__typename']>>(
  value: T | null | undefined,
  typename: N,
): Extract<T, { __typename?: N }> {
  expect(value?.__typename, JSON.stringify(value)).toBe(typename);
  return value as Extract<T, { __typename?: N }>;
}

/**
 * The one error fragment of the test operations: the members every `Error` result carries, and those
 * of the two errors with more (an upstream failure's `retryable` and HTTP `status`, the invalid fields
 * of an input). Spread `...ErrorFields` in a result union; the generated documents carry it along.
 */
export const ErrorFields = graphql(`
  fragment ErrorFields on Error {
    code
    message
    ... on UpstreamError { retryable status }
    ... on InputValidationError { issues { path message } }
  }
`);

/** Answer of {@link postGraphql}: status, headers and JSON body. */
export interface GraphqlAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  };
}

/** `data[field].data` of a successful result-union answer; fails the test on anything else. */
export function successData<T>(answer: GraphqlAnswer, field: string): T {
  const value = answer.body.data?.[field] as { __typename?: string; data?: T } | undefined;
  if (!value?.data) throw new Error(`no ${field} data: ${JSON.stringify(answer.body)}`);
  return value.data;
}

/** A GraphQL operation as POST /graphql takes it. */
export interface GraphqlOperation {
  query: string;
  operationName?: string;
  variables?: Record<string, unknown>;
}

/**
 * POSTs `operation` as JSON to `${baseUrl}/graphql` with a bearer token (none when null) and extra
 * `headers` (e.g. `accept`); resolves with undici's response, body unread.
 */
export function requestGraphql(
  baseUrl: string,
  operation: GraphqlOperation,
  token: string | null | undefined,
  headers: Record<string, string> = {},
) {
  return request(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify(operation),
  });
}

/** {@link requestGraphql}, answering the status, headers and parsed JSON body. */
export async function postGraphql(
  baseUrl: string,
  operation: GraphqlOperation,
  token: string | null,
  headers: Record<string, string> = {},
): Promise<GraphqlAnswer> {
  const response = await requestGraphql(baseUrl, operation, token, headers);
  return {
    status: response.statusCode,
    headers: response.headers,
    body: (await response.body.json()) as GraphqlAnswer['body'],
  };
}

/**
 * A cursor before every log position: `after` with it replays the whole retained log, then goes live.
 * Tests use it to make a subscription independent of when the server registers it.
 */
export const LOG_START_CURSOR = encodeCursor({ position: 0n, timestampMs: 0 });

/** The fields of a `NetworkTokenEvent` the tests read, named as {@link StreamedCardEvent} names them. */
const NETWORK_TOKEN_EVENT_FIELDS = 'id tenant cardId: panAlias type timestamp outOfOrder cursor';

/** `Subscription.networkTokenEvents`, every argument optional, with the fields {@link StreamedCardEvent} reads. */
export const NETWORK_TOKEN_EVENTS_SUBSCRIPTION = `
  subscription DurabilityNetworkTokenEvents($after: String, $vaultId: String, $panAlias: String) {
    networkTokenEvents(after: $after, vaultId: $vaultId, panAlias: $panAlias) { ${NETWORK_TOKEN_EVENT_FIELDS} }
  }`;

/** Answer of the webhook receiver: HTTP status and parsed JSON body. */
export interface WebhookAnswer {
  status: number;
  body: { data?: { id: string; status: 'accepted' | 'duplicate' }; errors?: { code: string }[] };
}

/**
 * POSTs a notification to `${baseUrl}/webhooks/card-events`, signed with TEST_WEBHOOK_SECRET at
 * `timestampS` (unix seconds; now by default), as the sandbox does (contract §4).
 * @throws the transport error when no answer arrives (refused connection, process killed).
 */
export async function postNotification(
  baseUrl: string,
  body: Record<string, unknown> | string,
  timestampS = Math.floor(Date.now() / 1000),
): Promise<WebhookAnswer> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await request(`${baseUrl}/webhooks/card-events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'vgs-signature': signWebhookBody(raw, TEST_WEBHOOK_SECRET, timestampS),
    },
    body: raw,
  });
  return { status: response.statusCode, body: (await response.body.json()) as WebhookAnswer['body'] };
}

/** Outcome of {@link postBurst}: ids answered 2xx, and ids refused or without an answer. */
export interface BurstOutcome {
  acknowledged: Set<string>;
  unacknowledged: Set<string>;
}

/**
 * Posts `notifications` with at most `concurrency` requests in flight, in order of the array.
 * `onAcknowledged(count)` runs after each 2xx with the number so far (e.g. to SIGKILL the receiver).
 * Transport errors (the receiver died) count as unacknowledged and do not stop the burst.
 */
export async function postBurst(
  baseUrl: string,
  notifications: readonly (Record<string, unknown> & { id: string })[],
  concurrency: number,
  onAcknowledged?: (count: number) => void,
): Promise<BurstOutcome> {
  const outcome: BurstOutcome = { acknowledged: new Set(), unacknowledged: new Set() };
  let next = 0;
  async function worker(): Promise<void> {
    while (next < notifications.length) {
      const body = notifications[next++]!;
      let status = 0;
      try {
        status = (await postNotification(baseUrl, body)).status;
      } catch {
        // No answer: the sender would retry; for the test the id is simply not acknowledged.
      }
      if (status >= 200 && status < 300) {
        outcome.acknowledged.add(body.id);
        onAcknowledged?.(outcome.acknowledged.size);
      } else {
        outcome.unacknowledged.add(body.id);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcome;
}

/** The fields of a `CardEvent` the durability tests read. */
export interface StreamedCardEvent {
  id: string;
  tenant: string;
  cardId: string;
  type: string;
  timestamp: string;
  outOfOrder: boolean;
  cursor: string;
}

const CARD_EVENT_FIELDS = 'id tenant cardId type timestamp outOfOrder cursor';

/** `Subscription.cardEvents`, every argument optional. */
export const CARD_EVENTS_SUBSCRIPTION = `
  subscription DurabilityCardEvents($after: String, $vaultId: String, $cardId: String, $types: [CardEventType!]) {
    cardEvents(after: $after, vaultId: $vaultId, cardId: $cardId, types: $types) { ${CARD_EVENT_FIELDS} }
  }`;

const CARD_EVENTS_HISTORY_QUERY = `
  query DurabilityCardEventHistory($first: Int, $after: String, $vaultId: String, $cardId: String) {
    cardEvents(first: $first, after: $after, vaultId: $vaultId, cardId: $cardId) {
      __typename
      ... on QueryCardEventsSuccess {
        data {
          edges { cursor node { ${CARD_EVENT_FIELDS} } }
          pageInfo { hasNextPage endCursor }
        }
      }
      ...ErrorFields
    }
  }
  ${print(ErrorFields)}`;

const NETWORK_TOKEN_EVENTS_HISTORY_QUERY = `
  query DurabilityNetworkTokenHistory($first: Int, $after: String, $vaultId: String, $panAlias: String) {
    networkTokenEvents(first: $first, after: $after, vaultId: $vaultId, panAlias: $panAlias) {
      __typename
      ... on QueryNetworkTokenEventsSuccess {
        data { edges { cursor node { ${NETWORK_TOKEN_EVENT_FIELDS} } } pageInfo { hasNextPage endCursor } }
      }
      ...ErrorFields
    }
  }
  ${print(ErrorFields)}`;

/** One page of a history connection as {@link readConnection} reads it. */
type HistoryPage = {
  data?: Record<
    string,
    {
      __typename: string;
      data?: {
        edges: { cursor: string; node: StreamedCardEvent }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
    }
  >;
  errors?: unknown[];
};

/**
 * Reads the whole history connection `field` (`cardEvents` or `networkTokenEvents`) over HTTP with
 * `query`, `pageSize` at a time (oldest first by timestamp, then acceptance), following `endCursor`
 * until `hasNextPage` is false; every edge cursor must equal its node's.
 * @throws Error when a page answers errors or a typed error result.
 */
async function readConnection(
  baseUrl: string,
  token: string,
  [query, field]: readonly [query: string, field: string],
  filter: Record<string, string>,
  pageSize: number,
): Promise<StreamedCardEvent[]> {
  const events: StreamedCardEvent[] = [];
  let after: string | null = null;
  for (;;) {
    const response = await postGraphql(
      baseUrl,
      { query, variables: { first: pageSize, after, ...filter } },
      token,
    );
    const page = response.body as HistoryPage;
    const result = page.data?.[field];
    if (page.errors || !result?.__typename.endsWith('Success') || !result.data) {
      throw new Error(`history page failed (${response.status}): ${JSON.stringify(page)}`);
    }
    for (const edge of result.data.edges) {
      if (edge.cursor !== edge.node.cursor) throw new Error(`edge cursor differs from node cursor`);
      events.push(edge.node);
    }
    if (!result.data.pageInfo.hasNextPage) return events;
    after = result.data.pageInfo.endCursor;
  }
}

const HISTORY_QUERIES = {
  cardEvents: CARD_EVENTS_HISTORY_QUERY,
  networkTokenEvents: NETWORK_TOKEN_EVENTS_HISTORY_QUERY,
} as const;

/**
 * The whole history of `Query.cardEvents` (or, with `of`, of `Query.networkTokenEvents`, whose events
 * carry their `panAlias` as `cardId`), 100 a page by default ({@link readConnection}).
 */
export function readHistory(
  baseUrl: string,
  token: string,
  filter: { vaultId?: string; cardId?: string; panAlias?: string } = {},
  pageSize = 100,
  of: keyof typeof HISTORY_QUERIES = 'cardEvents',
): Promise<StreamedCardEvent[]> {
  return readConnection(baseUrl, token, [HISTORY_QUERIES[of], of], filter, pageSize);
}

/** Variables of {@link CARD_EVENTS_SUBSCRIPTION}. */
export interface CardEventsVariables {
  after?: string;
  vaultId?: string;
  cardId?: string;
  types?: string[];
}

/**
 * A graphql-ws client of `${baseUrl}/graphql` (lazy: the socket opens with the first operation; no
 * retries) sending `token` as `connectionParams.authorization`; `onClosed` gets the close code.
 */
export function graphqlWsClient(baseUrl: string, token: string, onClosed?: (code: number) => void): Client {
  return createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
    on: { closed: (event) => onClosed?.((event as { code: number }).code) },
  });
}

/** One graphql-ws connection holding one `Subscription.cardEvents`, recording what it receives. */
export interface CardEventSubscriber {
  readonly client: Client;
  /** Events received, in arrival order. */
  readonly events: readonly StreamedCardEvent[];
  /** Errors received (`next` payload errors and the `error` message, or the close event). */
  readonly errors: readonly unknown[];
  /** Close code of the socket once closed by either side. */
  readonly closeCode: number | undefined;
  /** Ids of {@link events}, in arrival order. */
  ids(): string[];
  /**
   * Resolves once `condition()` holds (checked on every message and close).
   * @throws Error naming `what` and what was received when `timeoutMs` (default 10,000) passes first.
   */
  waitUntil(condition: () => boolean, what: string | (() => string), timeoutMs?: number): Promise<void>;
  /** {@link waitUntil} every id of `ids` has arrived. */
  waitForIds(ids: Iterable<string>, timeoutMs?: number): Promise<void>;
  /** {@link waitUntil} the socket has closed; resolves to its close code. */
  waitForClose(timeoutMs?: number): Promise<number>;
  /** Closes the connection (client side, 1000) and waits for it. */
  close(): Promise<void>;
}

/**
 * Opens a graphql-ws connection to `${baseUrl}/graphql` with `token` in
 * `connectionParams.authorization` and subscribes to `cardEvents(variables)` at once.
 * `query` replaces the subscription document (e.g. to send an oversized message).
 */
export function subscribeCardEvents(
  baseUrl: string,
  token: string,
  variables: CardEventsVariables = {},
  query: string = CARD_EVENTS_SUBSCRIPTION,
  field: 'cardEvents' | 'networkTokenEvents' = 'cardEvents',
): CardEventSubscriber {
  const events: StreamedCardEvent[] = [];
  const errors: unknown[] = [];
  const checks = new Set<() => void>();
  let closeCode: number | undefined;
  const changed = () => {
    for (const check of [...checks]) check();
  };
  const client = graphqlWsClient(baseUrl, token, (code) => {
    closeCode = code;
    changed();
  });
  client.subscribe<Record<string, StreamedCardEvent>>(
    { query, variables: { ...variables } },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        const event = result.data?.[field];
        if (event) events.push(event);
        changed();
      },
      error: (error) => {
        errors.push(error);
        changed();
      },
      complete: changed,
    },
  );

  const subscriber: CardEventSubscriber = {
    client,
    events,
    errors,
    get closeCode() {
      return closeCode;
    },
    ids: () => events.map((event) => event.id),
    waitUntil(condition, what, timeoutMs = 10_000) {
      if (condition()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!condition()) return;
          checks.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          checks.delete(check);
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}; received ${events.length} events, ` +
                `errors ${JSON.stringify(errors)}, close code ${closeCode}`,
            ),
          );
        }, timeoutMs);
        checks.add(check);
      });
    },
    waitForIds(ids, timeoutMs) {
      const wanted = [...ids];
      const received = new Set<string>();
      let scanned = 0;
      return subscriber.waitUntil(
        () => {
          for (; scanned < events.length; scanned++) received.add(events[scanned]!.id);
          return wanted.every((id) => received.has(id));
        },
        () =>
          `${wanted.length} ids (${wanted.filter((id) => !received.has(id)).length} missing, e.g. ${wanted.find((id) => !received.has(id))})`,
        timeoutMs,
      );
    },
    async waitForClose(timeoutMs) {
      await subscriber.waitUntil(() => closeCode !== undefined, 'the socket to close', timeoutMs);
      return closeCode!;
    },
    async close() {
      await client.dispose();
    },
  };
  return subscriber;
}

/** Ids that occur more than once in `ids`. */
export function duplicatesOf(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) repeated.add(id);
    seen.add(id);
  }
  return [...repeated];
}
