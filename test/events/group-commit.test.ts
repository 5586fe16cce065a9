import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CardEvent, parseCardNotification } from '../../src/events/card-event.ts';
import { type CardEventLog, EventLogAppendError } from '../../src/events/event-log.ts';
import { createRedisEventLog } from '../../src/events/redis-event-log.ts';
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';
import { notification } from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

/**
 * Group commit of both event logs (issue 13 "Event log at scale"): concurrent appends share one
 * commit (Redis: one append script call for up to 256 events), duplicates are recognised exactly by
 * (tenant, id) inside a batch as across batches, every acknowledged append survives a restart of
 * the backend, and a failed Redis batch rejects every append of it with EventLogAppendError.
 */

let redis: RedisServer;
let admin: ReturnType<typeof createClient>;
beforeAll(async () => {
  redis = await startRedisServer();
  admin = createClient({ url: redis.url });
  await admin.connect();
});
afterAll(async () => {
  admin.destroy();
  await redis.stop();
});

const retention = { maxAgeMs: 86_400_000, maxCount: 1_000_000 };
const silent = pino({ level: 'silent' });

/** The card event of a notification with id number `i` (timestamps increase with `i`). */
function event(i: number, overrides: { tenant?: string; event?: string } = {}): CardEvent {
  const parsed = parseCardNotification(
    notification({
      ...overrides,
      envelope: {
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        timestamp: new Date(Date.UTC(2026, 10, 21, 5, 0, 0, i)).toISOString(),
      },
    }),
  );
  if (!parsed.ok) throw new Error(`unmappable test notification: ${parsed.reason}`);
  return parsed.event;
}

/** Calls of the append script Redis answered (EVALSHA and its EVAL fallback). */
async function scriptCalls(): Promise<number> {
  const info = await admin.info('commandstats');
  let calls = 0;
  for (const match of info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+),.*?failed_calls=(\d+)/g)) {
    calls += Number(match[1]) - Number(match[2]);
  }
  return calls;
}

async function allIds(log: CardEventLog, tenant = 'tntsandbox1'): Promise<string[]> {
  const ids: string[] = [];
  for (let after: bigint | null = null; ; ) {
    const page = await log.readAfter({ tenants: [tenant] }, after, 1_000);
    ids.push(...page.map((e) => e.id));
    if (page.length < 1_000) return ids;
    after = page.at(-1)!.position;
  }
}

type Backend = {
  open(): Promise<CardEventLog>;
  /** Closes `log`, restarts the backend where it applies and opens the same log again. */
  reopen(log: CardEventLog): Promise<CardEventLog>;
};

function sqliteBackend(): Backend {
  const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-group-commit-'));
  const open = async () => createSqliteEventLog({ dataDir, retention });
  return {
    open,
    async reopen(log) {
      await log.close();
      return open();
    },
  };
}

function redisBackend(): Backend {
  const prefix = `test:{${randomUUID()}}`;
  const open = () => createRedisEventLog({ url: redis.url, retention, logger: silent, prefix, blockMs: 200 });
  return {
    open,
    async reopen(log) {
      await log.close();
      // Restarted on the same append-only file: what Redis acknowledged was fsynced there.
      admin.destroy();
      await redis.stop();
      redis = await startRedisServer({ port: redis.port, dir: redis.dir });
      admin = createClient({ url: redis.url });
      await admin.connect();
      return open();
    },
  };
}

describe.each([
  ['sqlite', sqliteBackend],
  ['redis', redisBackend],
] as const)('%s event log, 300 concurrent appends', (_name, backend) => {
  it('appends each (tenant, id) once, answers duplicates with the first position, keeps all after a restart', async () => {
    const { open, reopen } = backend();
    let log = await open();
    // 250 distinct ids, then the first 40 again and 10 of them in another vault (other events).
    const events = [
      ...Array.from({ length: 250 }, (_, i) => event(i)),
      ...Array.from({ length: 40 }, (_, i) => event(i)),
      ...Array.from({ length: 10 }, (_, i) => event(i, { tenant: 'tntsandbox2' })),
    ];
    const outcomes = await Promise.all(events.map((e) => log.append(e)));
    expect(outcomes.map((o) => o.outcome)).toEqual([
      ...Array(250).fill('appended'),
      ...Array(40).fill('duplicate'),
      ...Array(10).fill('appended'),
    ]);
    const positions = outcomes.map((o) => (o.outcome === 'appended' ? o.event.position : o.position!));
    expect(positions.slice(250, 290)).toEqual(positions.slice(0, 40));
    const appended = [...positions.slice(0, 250), ...positions.slice(290)];
    expect(new Set(appended).size).toBe(260);
    expect(appended).toEqual([...appended].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));

    log = await reopen(log);
    expect(await allIds(log)).toEqual(events.slice(0, 250).map((e) => e.id));
    expect(await allIds(log, 'tntsandbox2')).toEqual(events.slice(290).map((e) => e.id));
    await log.close();
  }, 30_000);
});

describe('redis event log group commit', () => {
  it('sends concurrent appends in a few script calls of at most 256 events', async () => {
    const log = await redisBackend().open();
    await log.append(event(1_000)); // loads the script
    const before = await scriptCalls();
    const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => log.append(event(i))));
    expect(outcomes.every((o) => o.outcome === 'appended')).toBe(true);
    // The first append goes alone; the 299 queued behind it go as 256 + 43, pipelined.
    expect((await scriptCalls()) - before).toBe(3);
    await log.close();
  });

  it('recognises a duplicate inside one batch exactly: same tenant and id only', async () => {
    const log = await redisBackend().open();
    const before = await scriptCalls();
    const first = log.append(event(1)); // in flight: what follows waits and goes as one batch
    const batch = await Promise.all([
      log.append(event(2)),
      log.append(event(2, { event: 'au_card.closed' })),
      log.append(event(2, { tenant: 'tntsandbox2' })),
      log.append(event(1)),
      log.append(event(3)),
    ]);
    const firstOutcome = await first;
    expect((await scriptCalls()) - before).toBe(2);
    expect(batch.map((o) => o.outcome)).toEqual([
      'appended',
      'duplicate',
      'appended',
      'duplicate',
      'appended',
    ]);
    const position = (o: (typeof batch)[number]) =>
      o.outcome === 'appended' ? o.event.position : o.position;
    expect(position(batch[1]!)).toBe(position(batch[0]!));
    expect(position(batch[3]!)).toBe(position(firstOutcome));
    expect(await allIds(log)).toEqual([event(1).id, event(2).id, event(3).id]);
    expect(await allIds(log, 'tntsandbox2')).toEqual([event(2).id]);
    await log.close();
  });

  it('rejects every append of a failed batch with EventLogAppendError and acknowledges none of it', async () => {
    const log = await redisBackend().open();
    await log.append(event(0));
    // Redis refuses every write while it lacks the replicas this asks for: the script fails.
    await admin.configSet('min-replicas-to-write', '1');
    let outcomes: PromiseSettledResult<unknown>[];
    try {
      outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => log.append(event(i + 1))));
    } finally {
      await admin.configSet('min-replicas-to-write', '0');
    }
    expect(outcomes.map((o) => o.status)).toEqual(Array(20).fill('rejected'));
    for (const outcome of outcomes) {
      const reason = (outcome as PromiseRejectedResult).reason as EventLogAppendError;
      expect(reason).toBeInstanceOf(EventLogAppendError);
      expect(reason.code).toBe('event-log-append-failed');
      expect(reason.message).toMatch(/^event log append failed: NOREPLICAS/);
    }
    expect(await allIds(log)).toEqual([event(0).id]);
    // The sender's retries go through, each once.
    const retried = await Promise.all(Array.from({ length: 20 }, (_, i) => log.append(event(i + 1))));
    expect(retried.map((o) => o.outcome)).toEqual(Array(20).fill('appended'));
    expect(await allIds(log)).toEqual(Array.from({ length: 21 }, (_, i) => event(i).id));
    await log.close();
  });
});
