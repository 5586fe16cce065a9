import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCardEventStream } from '../../src/events/card-event-stream.ts';
import { type CardEventLog, type RetentionPolicy, receiptPeriodMs } from '../../src/events/event-log.ts';
import { createRedisEventLog, seenKey } from '../../src/events/redis-event-log.ts';
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import {
  cardEvent,
  notification,
  postNotification,
  readHistory,
  startWebhookReceiver,
  subscribeCardEvents,
  TEST_WEBHOOK_SECRET,
  useStack,
  WAIT,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { freePort } from '../support/local.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

// A port known before the stacks' configuration is read; the server starts before their hooks run.
const redisPort = await freePort();
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer({ port: redisPort });
});
afterAll(() => redis.stop());

describe.each([
  ['sqlite', {}],
  ['redis', { EVENTS_BACKEND: 'redis', REDIS_URL: `redis://127.0.0.1:${redisPort}` }],
] as const)('dedupe keys on %s: ids that spell another vault are other events', (_backend, env) => {
  const use = useStack(env);

  it("stores and delivers vault 2's `tntsandbox1:coll-1` after vault 1's `coll-1`", async () => {
    const { stack, vault1Token, vault2Token } = use;
    const vault1 = subscribeCardEvents(stack.url, vault1Token);
    const vault2 = subscribeCardEvents(stack.url, vault2Token);
    try {
      await waitForSubscribers(stack.app, 'tntsandbox1', 1);
      await waitForSubscribers(stack.app, 'tntsandbox2', 1);
      const first = notification({ tenant: 'tntsandbox1', envelope: { id: 'coll-1' } });
      const second = notification({ tenant: 'tntsandbox2', envelope: { id: 'tntsandbox1:coll-1' } });
      expect(await postNotification(stack.url, first)).toEqual({
        status: 200,
        body: { data: { id: 'coll-1', status: 'accepted' } },
      });
      expect(await postNotification(stack.url, second)).toEqual({
        status: 200,
        body: { data: { id: 'tntsandbox1:coll-1', status: 'accepted' } },
      });
      // And each again is that vault's duplicate.
      expect((await postNotification(stack.url, second)).body.data?.status).toBe('duplicate');
      expect((await postNotification(stack.url, first)).body.data?.status).toBe('duplicate');

      await vault1.waitForIds(['coll-1']);
      await vault2.waitForIds(['tntsandbox1:coll-1']);
      expect(vault1.events.map((e) => [e.id, e.tenant])).toEqual([['coll-1', 'tntsandbox1']]);
      expect(vault2.events.map((e) => [e.id, e.tenant])).toEqual([['tntsandbox1:coll-1', 'tntsandbox2']]);
      expect((await readHistory(stack.url, vault1Token)).map((e) => e.id)).toEqual(['coll-1']);
      expect((await readHistory(stack.url, vault2Token)).map((e) => e.id)).toEqual(['tntsandbox1:coll-1']);
    } finally {
      await Promise.all([vault1.close(), vault2.close()]);
    }
  });
});

describe('Redis dedupe markers of earlier versions', () => {
  const retention = { maxAgeMs: 3_600_000, maxCount: 1_000 };

  it('count only for the very (tenant, id) whose entry they point at', async () => {
    const prefix = `test:{${randomUUID()}}`;
    const log = await createRedisEventLog({
      url: redis.url,
      logger: pino({ level: 'silent' }),
      prefix,
      retention,
    });
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const original = await log.append(cardEvent({ id: 'coll-1', tenant: 'tntsandbox1' }));
      if (original.outcome !== 'appended') throw new Error('first append was a duplicate');
      // What the previous version wrote for that append, in place of the length-prefixed marker.
      const streamId = await client.get(seenKey(prefix, 'tntsandbox1', 'coll-1'));
      expect(streamId).toMatch(/^\d+-\d+$/);
      await client.del(seenKey(prefix, 'tntsandbox1', 'coll-1'));
      await client.set(`${prefix}:id:tntsandbox1:coll-1`, streamId!);
      await client.set(`${prefix}:id:coll-1`, streamId!);

      // The legacy key `id:tntsandbox1:coll-1` also spells the oldest form of id `tntsandbox1:coll-1`.
      const other = await log.append(cardEvent({ id: 'tntsandbox1:coll-1', tenant: 'tntsandbox2' }));
      expect(other.outcome).toBe('appended');
      // `id:coll-1` is the oldest form of any vault's `coll-1`: vault 2's is another event.
      expect((await log.append(cardEvent({ id: 'coll-1', tenant: 'tntsandbox2' }))).outcome).toBe('appended');
      // The redelivery the legacy marker was written for is still recognised.
      expect(await log.append(cardEvent({ id: 'coll-1', tenant: 'tntsandbox1' }))).toEqual({
        outcome: 'duplicate',
        position: original.event.position,
      });
      expect(
        (await log.byIds('tntsandbox2', ['tntsandbox1:coll-1', 'coll-1'])).map((e) => e.id).sort(),
      ).toEqual(['coll-1', 'tntsandbox1:coll-1']);
      expect((await log.byIds('tntsandbox1', ['coll-1'])).map((e) => e.position)).toEqual([
        original.event.position,
      ]);
    } finally {
      await client.close();
      await log.close();
    }
  });

  it('whose entry left the stream count only for events stamped before the first length-prefixed append', async () => {
    const prefix = `test:{${randomUUID()}}`;
    const client = createClient({ url: redis.url });
    await client.connect();
    // An earlier version's marker whose entry retention already dropped.
    await client.set(`${prefix}:id:tntsandbox1:old-1`, '1000-0');
    const log = await createRedisEventLog({
      url: redis.url,
      logger: pino({ level: 'silent' }),
      prefix,
      retention,
    });
    try {
      const earlier = cardEvent({
        id: 'old-1',
        tenant: 'tntsandbox1',
        timestamp: '2020-01-01T00:00:00.000Z',
      });
      expect(await log.append(earlier)).toEqual({ outcome: 'duplicate', position: 1000n << 20n });
      const later = cardEvent({
        id: 'old-1',
        tenant: 'tntsandbox1',
        timestamp: new Date(Date.now() + 60_000).toISOString(),
      });
      expect((await log.append(later)).outcome).toBe('appended');
    } finally {
      await client.close();
      await log.close();
    }
  });
});

const TOLERANCE_S = 300;
const NOW_MS = Date.UTC(2026, 10, 21, 5, 1, 4);

/** A log of the backend with `retention` and a clock; `markerTtlS` reads the TTL of a Redis dedupe marker. */
type OpenLog = (
  retention: RetentionPolicy,
  now: () => number,
) => Promise<{ log: CardEventLog; markerTtlS?: (tenant: string, id: string) => Promise<number> }>;

const openSqlite: OpenLog = async (retention, now) => ({
  log: createSqliteEventLog({ dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-log-')), retention, now }),
});

const openRedis: OpenLog = async (retention, now) => {
  const prefix = `test:{${randomUUID()}}`;
  const log = await createRedisEventLog({
    url: redis.url,
    logger: pino({ level: 'silent' }),
    prefix,
    retention,
    now,
    blockMs: 200,
  });
  return {
    log,
    async markerTtlS(tenant, id) {
      const client = createClient({ url: redis.url });
      await client.connect();
      try {
        return await client.ttl(seenKey(prefix, tenant, id));
      } finally {
        await client.close();
      }
    },
  };
};

// Redis trims by count approximately (whole stream nodes), so a one-entry limit trims nothing there.
describe.each([
  ['sqlite', 'age', openSqlite, { maxAgeMs: 1_000, maxCount: 100 }],
  ['sqlite', 'count', openSqlite, { maxAgeMs: 3_600_000, maxCount: 1 }],
  ['redis', 'age', openRedis, { maxAgeMs: 1_000, maxCount: 100 }],
] as const)('a replay after its event left the %s log (by %s)', (_backend, _by, open, limits) => {
  it('is a duplicate: 3 posts of one signed notification, 1 delivery', async () => {
    let clock = Date.now();
    // Retention far shorter than the signature tolerance: the receipts outlive the events.
    const { log, markerTtlS } = await open(
      { ...limits, receiptMs: receiptPeriodMs(TOLERANCE_S) },
      () => clock,
    );
    const stream = await createCardEventStream({
      log,
      logger: pino({ level: 'silent' }),
      trimIntervalMs: 3_600_000,
    });
    const receiver = await startWebhookReceiver({
      secrets: [TEST_WEBHOOK_SECRET],
      nowMs: NOW_MS,
      toleranceS: TOLERANCE_S,
      bus: stream,
    });
    const delivered = stream.subscribe({ tenants: ['tntsandbox1'] });
    try {
      const raw = JSON.stringify(notification());
      const { id } = JSON.parse(raw) as { id: string };
      // One signed request, posted three times as captured (same bytes, same signature).
      const signature = signWebhookBody(raw, TEST_WEBHOOK_SECRET, Math.floor(NOW_MS / 1000));
      const post = async () => {
        const response = await fetch(receiver.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'vgs-signature': signature },
          body: raw,
        });
        return ((await response.json()) as { data: { status: string } }).data.status;
      };
      expect(await post()).toBe('accepted');
      expect((await delivered.next()).value?.id).toBe(id);

      // The event leaves the log: older than the age limit, or pushed out by a newer one.
      clock += 2_000;
      if (limits.maxCount === 1) {
        await log.append(cardEvent({ tenant: 'tntsandbox2' }));
        clock = Date.now() + 2_000;
      }
      await log.trim();
      await expect.poll(() => log.byIds('tntsandbox1', [id]), WAIT).toEqual([]);
      // Redis expires markers on its own clock: the marker lives the receipt period, not the 1 s retention.
      if (markerTtlS) expect(await markerTtlS('tntsandbox1', id)).toBeGreaterThan(2 * TOLERANCE_S);

      expect([await post(), await post()]).toEqual(['duplicate', 'duplicate']);
      // A later notification arrives next: the replays delivered nothing in between.
      const sentinel = notification();
      const answer = await fetch(receiver.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'vgs-signature': signWebhookBody(
            JSON.stringify(sentinel),
            TEST_WEBHOOK_SECRET,
            Math.floor(NOW_MS / 1000),
          ),
        },
        body: JSON.stringify(sentinel),
      });
      expect(answer.status).toBe(200);
      expect((await delivered.next()).value?.id).toBe(sentinel.id);
    } finally {
      await delivered.return?.();
      await receiver.close();
      await stream.close();
    }
  });
});
