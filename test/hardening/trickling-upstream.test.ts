import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { graphqlWsClient, testToken } from '../support/fixtures.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/processes.ts';

/**
 * Issue 10, class 6 ("upstream that trickles"): a real HTTP server on a free port answers the OAuth
 * token endpoint at once and every other call with headers and then one byte every 2 s, forever.
 * The gateway (`node src/main.ts`, UPSTREAM=remote) must cut each call off at its total deadline
 * with the retryable `upstream-timeout` (undici's per-chunk body timeout never fires), must not
 * memoize the pending BIN lookup, and must exit on SIGTERM within SHUTDOWN_TIMEOUT_MS.
 */

const VAULT = 'tntsandbox1';
const TRICKLE_INTERVAL_MS = 2_000;

let upstream: Server;
let upstreamUrl: string;
/** Paths of the calls the fake upstream received besides the token endpoint. */
const calls: string[] = [];

function trickle(req: IncomingMessage, res: ServerResponse) {
  calls.push(`${req.method} ${req.url}`);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(' ');
  const timer = setInterval(() => res.write(' '), TRICKLE_INTERVAL_MS);
  res.on('close', () => clearInterval(timer));
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/oauth/token') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'fake-token', token_type: 'Bearer', expires_in: 1200 }));
        return;
      }
      trickle(req, res);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

afterEach(() => {
  calls.length = 0;
});

/** Variables pointing every area of a remote-mode gateway at the fake upstream. */
function remoteEnv(extra: Record<string, string>): Record<string, string> {
  return {
    UPSTREAM: 'remote',
    CARD_INTERFACE_URL: `${upstreamUrl}/card-interface`,
    ACCOUNT_UPDATER_URL: `${upstreamUrl}/account-updater`,
    CARD_ATTRIBUTES_URL: `${upstreamUrl}/card-attributes`,
    ACCOUNTS_URL: `${upstreamUrl}/accounts`,
    TOKEN_URL: `${upstreamUrl}/oauth/token`,
    UPSTREAM_CREDENTIALS: `${VAULT}=client:secret`,
    ...extra,
  };
}

const CARD_QUERY = `query HD_TU_Card { card(cardId: "CRDtrickle000000000000001") {
  __typename ... on UpstreamError { code retryable status } } }`;
const BIN_QUERY = `query HD_TU_Bin { cardAttributes(number: "510026") {
  __typename ... on UpstreamError { code retryable status } } }`;

async function post(gateway: GatewayProcess, token: string, query: string) {
  const response = await request(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  return {
    status: response.statusCode,
    body: (await response.body.json()) as { data?: Record<string, unknown> },
  };
}

const TIMEOUT_ANSWER = {
  __typename: 'UpstreamError',
  code: 'upstream-timeout',
  retryable: true,
  status: null,
};

describe('a trickling upstream, UPSTREAM_TIMEOUT_MS=1500', () => {
  const deadlineMs = 1_500;
  let gateway: GatewayProcess;
  let token: string;

  beforeAll(async () => {
    gateway = await startGatewayProcess({ env: remoteEnv({ UPSTREAM_TIMEOUT_MS: String(deadlineMs) }) });
    token = await testToken({ vaults: [VAULT] });
  });
  afterAll(() => gateway?.stop());

  it('answers a typed retryable upstream-timeout within the deadline over HTTP', async () => {
    const started = performance.now();
    const { status, body } = await post(gateway, token, CARD_QUERY);
    const elapsed = performance.now() - started;
    expect(status).toBe(200);
    expect(body.data?.card).toEqual(TIMEOUT_ANSWER);
    // The deadline, not the 2 s chunk interval (nor a per-chunk timer), ends the call.
    expect(elapsed).toBeGreaterThanOrEqual(deadlineMs - 50);
    expect(elapsed).toBeLessThan(deadlineMs + 1_000);
    expect(calls).toEqual(['GET /card-interface/cards/CRDtrickle000000000000001']);
  });

  it('answers the same over graphql-ws', async () => {
    const client = graphqlWsClient(gateway.url, token);
    try {
      const started = performance.now();
      const result = await new Promise<{ data?: Record<string, unknown> | null }>((resolve, reject) => {
        let value: { data?: Record<string, unknown> | null } = {};
        client.subscribe(
          { query: CARD_QUERY },
          { next: (next) => (value = next), error: reject, complete: () => resolve(value) },
        );
      });
      expect(result.data?.card).toEqual(TIMEOUT_ANSWER);
      expect(performance.now() - started).toBeLessThan(deadlineMs + 1_000);
    } finally {
      await client.dispose();
    }
  });

  it('does not memoize the pending BIN lookup: waiters give up at the deadline, the next request asks again', async () => {
    const started = performance.now();
    const concurrent = await Promise.all([post(gateway, token, BIN_QUERY), post(gateway, token, BIN_QUERY)]);
    expect(performance.now() - started).toBeLessThan(deadlineMs + 1_000);
    for (const { body } of concurrent) expect(body.data?.cardAttributes).toEqual(TIMEOUT_ANSWER);
    // Concurrent misses shared one lookup.
    expect(calls).toEqual(['POST /card-attributes/attributes/attributes']);

    const later = await post(gateway, token, BIN_QUERY);
    expect(later.body.data?.cardAttributes).toEqual(TIMEOUT_ANSWER);
    expect(calls).toEqual([
      'POST /card-attributes/attributes/attributes',
      'POST /card-attributes/attributes/attributes',
    ]);
  });
});

describe('SIGTERM while an upstream call trickles, SHUTDOWN_TIMEOUT_MS=3000', () => {
  it('aborts the call and exits 0 within SHUTDOWN_TIMEOUT_MS', async () => {
    const shutdownTimeoutMs = 3_000;
    // A deadline far beyond the shutdown limit: only the bounded shutdown can end the call in time.
    const gateway = await startGatewayProcess({
      env: remoteEnv({ UPSTREAM_TIMEOUT_MS: '120000', SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) }),
    });
    try {
      const token = await testToken({ vaults: [VAULT] });
      const inFlight = post(gateway, token, CARD_QUERY).catch((error: unknown) => error);
      await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
      const signalled = performance.now();
      const exit = await gateway.kill('SIGTERM');
      const elapsed = performance.now() - signalled;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(elapsed).toBeLessThan(shutdownTimeoutMs);
      // The request was cut off (answered or its connection closed), not left hanging.
      await inFlight;
    } finally {
      await gateway.stop(1_000);
    }
  });
});
