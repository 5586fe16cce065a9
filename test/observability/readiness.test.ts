import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox.ts';
import {
  leftover,
  postGraphql,
  remoteUpstreamEnv,
  type Stack,
  startStack,
  testToken,
} from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

interface ReadinessAnswer {
  status: number;
  body: { status: string; checks: Record<string, { status: string; code?: string }> };
}

/** `GET /readiness` on the public port: what an anonymous caller (a load balancer) learns. */
async function readiness(baseUrl: string): Promise<{ status: number; text: string; body: unknown }> {
  const response = await request(`${baseUrl}/readiness`);
  const text = await response.body.text();
  return { status: response.statusCode, text, body: JSON.parse(text) };
}

/** `GET /readiness` on the metrics listener: the full report, every check by name. */
async function readinessDetails(stack: Stack): Promise<ReadinessAnswer> {
  const response = await request(`${stack.metricsUrl}/readiness`);
  return { status: response.statusCode, body: (await response.body.json()) as ReadinessAnswer['body'] };
}

/**
 * The most token requests a vault whose token endpoint keeps failing can send within `elapsedMs` of
 * its first failure: one, then one more after each backoff wait, each at least half its ceiling
 * (ceilings 1 s, 2 s, 4 s … 30 s; src/upstream/oauth/access-token-provider.ts).
 */
function maxTokenRequests(elapsedMs: number): number {
  let requests = 1;
  let waited = 0;
  for (let ceiling = 1_000; ; ceiling = Math.min(ceiling * 2, 30_000)) {
    waited += ceiling / 2;
    if (waited > elapsedMs) return requests;
    requests += 1;
  }
}

function startSandbox(port: number): Sandbox {
  return createSandbox({
    port,
    logger: createLogger({ name: 'sandbox', level: 'silent' }),
    webhookDelayMs: 100,
  });
}

describe('GET /health and GET /readiness', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let sandboxPort: number;
  let stack: Stack;

  beforeAll(async () => {
    redis = await startRedisServer();
    sandbox = startSandbox(0);
    const { url } = await sandbox.start();
    sandboxPort = Number(new URL(url).port);
    stack = await startStack({
      ...remoteUpstreamEnv(url),
      EVENTS_BACKEND: 'redis',
      REDIS_URL: redis.url,
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await sandbox?.stop();
    await redis?.stop();
  });

  it('is live and ready; anonymous callers get the status only, the metrics listener every part named', async () => {
    const health = await request(`${stack.url}/health`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toEqual({ status: 'ok' });
    const origin = `http://127.0.0.1:${sandboxPort}`;
    expect(await readiness(stack.url)).toEqual({
      status: 200,
      text: '{"status":"ready"}',
      body: { status: 'ready' },
    });
    expect(await readinessDetails(stack)).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: {
          shutdown: { status: 'ok' },
          eventLog: { status: 'ok' },
          [`upstream:${origin}`]: { status: 'ok' },
          'vault:tntsandbox1': { status: 'ok' },
          'vault:tntsandbox2': { status: 'ok' },
        },
      },
    });
  });

  it('uses the cached upstream token: probes fetch no token while it is fresh', async () => {
    await readiness(stack.url);
    const before = sandbox.requests().filter((r) => r.path === '/oauth/token').length;
    for (let i = 0; i < 5; i++) expect((await readiness(stack.url)).status).toBe(200);
    expect(sandbox.requests().filter((r) => r.path === '/oauth/token').length).toBe(before);
  });

  it('turns 503 naming the upstream when the sandbox stops, and 200 when it is back', async () => {
    const origin = `http://127.0.0.1:${sandboxPort}`;
    await sandbox.stop();
    // Within a second (the cached result's lifetime) the next run fails.
    await expect.poll(async () => (await readiness(stack.url)).status).toBe(503);
    expect((await readiness(stack.url)).body).toEqual({ status: 'unavailable' });
    const down = await readinessDetails(stack);
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('unavailable');
    expect(down.body.checks[`upstream:${origin}`]).toEqual({ status: 'failed', code: 'ECONNREFUSED' });
    expect(down.body.checks.eventLog).toEqual({ status: 'ok' });

    sandbox = startSandbox(sandboxPort);
    await sandbox.start();
    await expect.poll(async () => (await readiness(stack.url)).status).toBe(200);
  });

  it('turns 503 naming the event log when Redis stops, and 200 when it is back', async () => {
    await redis.stop();
    await expect
      .poll(async () => (await readinessDetails(stack)).body.checks.eventLog)
      .toEqual({
        status: 'failed',
        code: 'disconnected',
      });
    expect((await readiness(stack.url)).status).toBe(503);

    redis = await startRedisServer({ port: redis.port, dir: redis.dir });
    await expect.poll(async () => (await readiness(stack.url)).status, { timeout: 10_000 }).toBe(200);
  });

  it('turns 503 naming a vault whose token cannot be obtained; 50 concurrent probes send one token request and open one connection', async () => {
    // Card attributes at a TCP listener that counts the connections readiness opens to it.
    let connections = 0;
    const counter = leftover(
      createNetServer((socket) => {
        connections += 1;
        socket.destroy();
      }),
      (server) => new Promise((resolve) => server.close(resolve)),
    );
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
    const counterOrigin = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
    const noVault = leftover(
      await startStack({
        UPSTREAM: 'remote',
        CARD_INTERFACE_URL: `http://127.0.0.1:${sandboxPort}/card-interface`,
        ACCOUNT_UPDATER_URL: `http://127.0.0.1:${sandboxPort}/account-updater`,
        CARD_ATTRIBUTES_URL: `${counterOrigin}/card-attributes`,
        ACCOUNTS_URL: `http://127.0.0.1:${sandboxPort}/accounts`,
        TOKEN_URL: `http://127.0.0.1:${sandboxPort}/oauth/token`,
        UPSTREAM_CREDENTIALS:
          'tntsandbox1=sandbox-client-1:sandbox-secret-1,tntsandbox2=sandbox-client-2:wrong-secret',
      }),
      (started) => started.stop(),
    );
    const refusedTokenRequests = () =>
      sandbox.requests().filter((r) => r.path === '/oauth/token' && r.status === 401).length;
    const before = refusedTokenRequests();

    const answers = await Promise.all(Array.from({ length: 50 }, () => readiness(noVault.url)));
    const firstFailureAt = Date.now();
    for (const answer of answers) {
      expect(answer).toEqual({
        status: 503,
        text: '{"status":"unavailable"}',
        body: { status: 'unavailable' },
      });
    }
    expect(refusedTokenRequests() - before).toBe(1);
    expect(connections).toBe(1);

    const details = await readinessDetails(noVault);
    expect(details.status).toBe(503);
    expect(details.body.checks['vault:tntsandbox1']).toEqual({ status: 'ok' });
    expect(details.body.checks['vault:tntsandbox2']).toEqual({ status: 'failed', code: 'invalid_client' });
    expect(details.body.checks[`upstream:${counterOrigin}`]).toEqual({ status: 'ok' });

    // 50 more probes one after another, 50 at once on the app and 50 concurrent operations of the
    // vault: the cached result and the vault's backoff bound what reaches the token endpoint.
    for (let i = 0; i < 50; i++) expect((await readiness(noVault.url)).status).toBe(503);
    await Promise.all(Array.from({ length: 50 }, () => noVault.app.readiness()));
    const token = await testToken({ vaults: ['tntsandbox2'] });
    const operations = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postGraphql(
          noVault.url,
          {
            query: `query Read($cardId: String!) { accountUpdaterCard(cardId: $cardId) { __typename ... on UpstreamError { code } } }`,
            variables: { cardId: `CRDmissing${String(i).padStart(15, '0')}` },
          },
          token,
        ),
      ),
    );
    for (const operation of operations) {
      expect(operation.body).toEqual({
        data: { accountUpdaterCard: { __typename: 'UpstreamError', code: 'invalid_client' } },
      });
    }
    const elapsedMs = Date.now() - firstFailureAt;
    expect(refusedTokenRequests() - before).toBeLessThanOrEqual(maxTokenRequests(elapsedMs));
    expect(connections).toBeLessThanOrEqual(1 + Math.ceil(elapsedMs / 1_000));
  });

  it('turns readiness 503 first when shutdown begins', async () => {
    expect((await stack.app.readiness()).status).toBe('ready');
    const stopping = stack.app.stop();
    const report = await stack.app.readiness();
    expect(report.status).toBe('unavailable');
    expect(report.checks.shutdown).toEqual({ status: 'failed', code: 'shutting-down' });
    await stopping;
  });
});
