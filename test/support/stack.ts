import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type ExecutionResult, print } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import { pino } from 'pino';
import { request } from 'undici';
import WebSocket from 'ws';
import type { App } from '../../src/app.ts';
import { issueDevToken } from '../../src/auth/issue-dev-token.ts';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import { type GatewayConfig, loadConfig } from '../../src/config.ts';
import { startDevelopment } from '../../src/dev.ts';
import { luhnCheckDigit } from '../../src/lib/pan.ts';
import type { Sandbox } from '../../src/sandbox/sandbox.ts';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import { assertNoResponseViolations } from '../sandbox/helpers.ts';

/** JWT secret of test stacks (HS256). */
export const TEST_JWT_SECRET = 'test-jwt-secret-0123456789abcdef-0123456789';
/** Webhook signing secret the embedded sandbox uses in test stacks. */
export const TEST_WEBHOOK_SECRET = 'whsec_test_0123456789abcdef0123';

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
] as const;

/** BINs of the sandbox BIN table (src/sandbox/bin-table.json) the bulk cards are spread over, with their PAN length. */
const BULK_BINS: readonly (readonly [bin: string, length: number])[] = [
  ['400021', 16],
  ['510026', 16],
  ['378282', 15],
  ['601100', 16],
  ['411111', 16],
];

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

/** A running gateway on the embedded sandbox, on free ports, logging to its own file. */
export interface Stack {
  app: App;
  /** The gateway's configuration, with the sandbox's real addresses in embedded mode. */
  config: GatewayConfig;
  url: string;
  /** The embedded sandbox; `undefined` with `UPSTREAM=remote`. */
  sandbox: Sandbox | undefined;
  sandboxUrl: string;
  logFile: string;
  /** A client JWT (HS256) for the given vaults and scopes (default: tntsandbox1, every scope). */
  token(options?: {
    vaults?: string[];
    scopes?: readonly string[];
    subject?: string;
    expiresInS?: number;
  }): Promise<string>;
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

/**
 * Starts the development composition of src/dev.ts (sandbox and gateway) with ports 0, a 100 ms
 * enrolment delay, a compressed retry schedule and response validation in the sandbox. `env`
 * overrides configuration variables.
 */
export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
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
    ...env,
  });
  const development = await startDevelopment(config, {
    logDestination: destination,
    sandbox: { retryScheduleMs: [0, 100, 300], validateResponses: true },
  });
  const { app, url, sandbox } = development;
  const clients: Client[] = [];

  return {
    app,
    config: development.config,
    url,
    sandbox,
    sandboxUrl: development.sandboxUrl!,
    logFile,
    token: (options = {}) =>
      issueDevToken({
        secret: TEST_JWT_SECRET,
        subject: options.subject ?? 'test-user',
        vaults: options.vaults ?? ['tntsandbox1'],
        scopes: options.scopes ?? UPSTREAM_SCOPES,
        expiresInS: options.expiresInS ?? 600,
      }),
    async execute(document, variables, token) {
      const response = await request(`${url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query: print(document), variables }),
      });
      const body = (await response.body.json()) as ExecutionResult<never>;
      return { ...body, status: response.statusCode };
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

/** Waits until `count` live subscriptions of `tenant` are registered on the app's event bus. */
export async function waitForSubscribers(
  app: App,
  tenant: string,
  count: number,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((app.events?.subscriberCount(tenant) ?? 0) < count) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} subscribers of ${tenant}`);
    await sleep(10);
  }
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
