import { createHash } from 'node:crypto';
import { createClient, type RedisClientType } from 'redis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_APQ_KEYS } from '../../src/plugins/persisted-operations.ts';
import {
  notification,
  postNotification,
  readHistory,
  type Stack,
  startStack,
  testToken,
} from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';
import { samplesOf, sampleValue } from '../support/telemetry.ts';

/**
 * Issue 20 item 1: one feature filling the shared Redis never stops the card event log. A real
 * redis-server capped at `maxmemory 64mb` (no eviction, so a full Redis refuses writes, as in
 * production), a gateway on it with EVENTS_BACKEND=redis: bursts of 60 KiB APQ registrations,
 * anonymous and authenticated, while signed webhooks keep arriving.
 */

const KIB = 1024;
const MIB = 1024 * KIB;
const APQ_MAX_BYTES = 4 * MIB;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** A distinct, valid document of 60 KiB: the operation and a comment (comments are not tokens). */
const documentOf = (n: number) => {
  const head = `{ viewer { subject } } # registration ${n} `;
  return head + 'x'.repeat(60 * KIB - head.length);
};

describe('a maxmemory-capped Redis shared by APQ and the event log', () => {
  let redis: RedisServer;
  let stack: Stack;
  let client: RedisClientType;
  let token: string;

  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
  /** Registers `query` with its hash over HTTP POST (anonymously when `bearer` is null). */
  const register = async (query: string, bearer: string | null) => {
    const response = await request(`${stack.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      },
      body: JSON.stringify({
        query,
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } },
      }),
    });
    const body = (await response.body.json()) as {
      data?: unknown;
      errors?: { extensions?: { code?: string } }[];
    };
    return { status: response.statusCode, code: body.errors?.[0]?.extensions?.code ?? 'ok' };
  };
  /**
   * Runs `count` registrations 16 at a time, posting a signed notification after every 100th; returns
   * the registrations' `status code` tallies and the notifications' ids and statuses.
   */
  const burst = async (count: number, bearer: string | null) => {
    const outcomes = new Map<string, number>();
    const webhooks: { id: string; status: number }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const n = next++;
        const { status, code } = await register(documentOf(n), bearer);
        outcomes.set(`${status} ${code}`, (outcomes.get(`${status} ${code}`) ?? 0) + 1);
        if (n % 100 === 99) {
          const event = notification({ tenant: 'tntsandbox1' });
          webhooks.push({ id: event.id, status: (await postNotification(stack.url, event)).status });
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    return { outcomes: Object.fromEntries(outcomes), webhooks };
  };

  beforeAll(async () => {
    redis = await startRedisServer({ args: ['--maxmemory', '64mb', '--maxmemory-policy', 'noeviction'] });
    client = createClient({ url: redis.url });
    await client.connect();
    stack = await startStack({
      EVENTS_BACKEND: 'redis',
      REDIS_URL: redis.url,
      APQ_MAX_BYTES: String(APQ_MAX_BYTES),
    });
    token = await testToken({ vaults: ['tntsandbox1'] });
  });

  afterAll(async () => {
    await stack?.stop();
    await client?.close();
    await redis?.stop();
  });

  it('refuses 1,100 anonymous registrations of 60 KiB (Redis memory stays flat) while signed webhooks are acknowledged and stored', async () => {
    const before = await usedMemory();
    const { outcomes, webhooks } = await burst(1_100, null);
    expect(outcomes).toEqual({ '401 persisted-query-registration-unauthenticated': 1_100 });
    expect(await usedMemory()).toBeLessThan(before + MIB);
    expect(await client.exists([REDIS_APQ_KEYS.documents, REDIS_APQ_KEYS.registered])).toBe(0);
    expect(webhooks).toHaveLength(11);
    expect(webhooks.map((webhook) => webhook.status)).toEqual(Array(11).fill(200));
    const stored = new Set((await readHistory(stack.url, token)).map((event) => event.id));
    expect(webhooks.filter((webhook) => !stored.has(webhook.id))).toEqual([]);
  }, 120_000);

  it('keeps an authenticated burst of 300 valid 60 KiB documents within APQ_MAX_BYTES (newest kept) while webhooks are acknowledged and stored', async () => {
    const before = await usedMemory();
    const { outcomes, webhooks } = await burst(300, token);
    expect(outcomes).toEqual({ '200 ok': 300 });
    const bytes = Number(await client.get(REDIS_APQ_KEYS.bytes));
    // 4 MiB hold 68 documents of 60 KiB.
    expect(bytes).toBe(68 * 60 * KIB);
    expect(await client.zCard(REDIS_APQ_KEYS.registered)).toBe(68);
    // Registered 16 at a time: the newest 68 are among the last 68 + 15 started, the first 200 are gone.
    const held = new Set(await client.zRange(REDIS_APQ_KEYS.registered, 0, -1));
    const heldNumbers = Array.from({ length: 300 }, (_, n) => n).filter((n) =>
      held.has(sha256(documentOf(n))),
    );
    expect(heldNumbers).toHaveLength(68);
    expect(heldNumbers[0]).toBeGreaterThanOrEqual(300 - 68 - 15);
    expect(await usedMemory()).toBeLessThan(before + APQ_MAX_BYTES + 2 * MIB);
    expect(webhooks.map((webhook) => webhook.status)).toEqual([200, 200, 200]);
    const stored = new Set((await readHistory(stack.url, token)).map((event) => event.id));
    expect(webhooks.filter((webhook) => !stored.has(webhook.id))).toEqual([]);
  }, 120_000);

  it('a log that cannot append fails readiness (append-failed) and sets cardgraph_event_log_append_failing until an append succeeds', async () => {
    // The full report is on the metrics listener (the public port answers the status only), and
    // readiness results live up to 1 s (src/lib/readiness.ts): each change is polled for.
    const readiness = async () => {
      const response = await request(`${stack.metricsUrl}/readiness`);
      const body = (await response.body.json()) as { checks: Record<string, { code?: string }> };
      return { status: response.statusCode, eventLog: body.checks.eventLog };
    };
    const failing = async () =>
      sampleValue(
        samplesOf(await stack.app.metrics.registry.metrics()),
        'cardgraph_event_log_append_failing',
        {
          log: 'card_events',
        },
      );
    await expect.poll(readiness).toEqual({ status: 200, eventLog: { status: 'ok' } });

    // Something other than the gateway fills Redis to its maxmemory: writes are refused (OOM).
    // Redis refuses a write while used_memory exceeds maxmemory; the write that crosses it succeeds.
    // Large chunks first, then small ones, so the last accepted write leaves Redis above the limit.
    const filler: string[] = [];
    for (const size of [MIB, KIB]) {
      const chunk = 'f'.repeat(size);
      for (;;) {
        const key = `test:filler:${filler.length}`;
        try {
          await client.set(key, chunk);
        } catch (error) {
          expect((error as Error).message).toMatch(/^OOM/);
          break;
        }
        filler.push(key);
      }
    }
    const refused = await postNotification(stack.url, notification({ tenant: 'tntsandbox1' }));
    expect(refused.status).toBeGreaterThanOrEqual(500);
    await expect
      .poll(readiness, { timeout: 3_000 })
      .toEqual({ status: 503, eventLog: { status: 'failed', code: 'append-failed' } });
    expect(await failing()).toBe(1);

    await client.del(filler);
    const accepted = notification({ tenant: 'tntsandbox1' });
    expect((await postNotification(stack.url, accepted)).status).toBe(200);
    await expect.poll(readiness, { timeout: 3_000 }).toEqual({ status: 200, eventLog: { status: 'ok' } });
    expect(await failing()).toBe(0);
  }, 60_000);
});
