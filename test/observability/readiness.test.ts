import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox.ts';
import { leftover, type Stack, startStack } from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

interface ReadinessAnswer {
  status: number;
  body: { status: string; checks: Record<string, { status: string; code?: string }> };
}

async function readiness(baseUrl: string): Promise<ReadinessAnswer> {
  const response = await request(`${baseUrl}/readiness`);
  return { status: response.statusCode, body: (await response.body.json()) as ReadinessAnswer['body'] };
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
      UPSTREAM: 'remote',
      CARD_INTERFACE_URL: `${url}/card-interface`,
      ACCOUNT_UPDATER_URL: `${url}/account-updater`,
      CARD_ATTRIBUTES_URL: `${url}/card-attributes`,
      ACCOUNTS_URL: `${url}/accounts`,
      TOKEN_URL: `${url}/oauth/token`,
      UPSTREAM_CREDENTIALS:
        'tntsandbox1=sandbox-client-1:sandbox-secret-1,tntsandbox2=sandbox-client-2:sandbox-secret-2',
      EVENTS_BACKEND: 'redis',
      REDIS_URL: redis.url,
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await sandbox?.stop();
    await redis?.stop();
  });

  it('is live and ready with every part named', async () => {
    const health = await request(`${stack.url}/health`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toEqual({ status: 'ok' });
    const origin = `http://127.0.0.1:${sandboxPort}`;
    expect(await readiness(stack.url)).toEqual({
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
    const down = await readiness(stack.url);
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
      .poll(async () => (await readiness(stack.url)).body.checks.eventLog)
      .toEqual({
        status: 'failed',
        code: 'disconnected',
      });
    expect((await readiness(stack.url)).status).toBe(503);

    redis = await startRedisServer({ port: redis.port, dir: redis.dir });
    await expect.poll(async () => (await readiness(stack.url)).status, { timeout: 10_000 }).toBe(200);
  });

  it('turns 503 naming a vault whose token cannot be obtained', async () => {
    // A restarted sandbox with a vault the gateway holds no token for yet: a token is fetched once.
    const noVault = leftover(
      await startStack({
        UPSTREAM: 'remote',
        CARD_INTERFACE_URL: `http://127.0.0.1:${sandboxPort}/card-interface`,
        ACCOUNT_UPDATER_URL: `http://127.0.0.1:${sandboxPort}/account-updater`,
        CARD_ATTRIBUTES_URL: `http://127.0.0.1:${sandboxPort}/card-attributes`,
        ACCOUNTS_URL: `http://127.0.0.1:${sandboxPort}/accounts`,
        TOKEN_URL: `http://127.0.0.1:${sandboxPort}/oauth/token`,
        UPSTREAM_CREDENTIALS:
          'tntsandbox1=sandbox-client-1:sandbox-secret-1,tntsandbox2=sandbox-client-2:wrong-secret',
      }),
      (started) => started.stop(),
    );
    const answer = await readiness(noVault.url);
    expect(answer.status).toBe(503);
    expect(answer.body.checks['vault:tntsandbox1']).toEqual({ status: 'ok' });
    expect(answer.body.checks['vault:tntsandbox2']).toEqual({ status: 'failed', code: 'invalid_client' });
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
