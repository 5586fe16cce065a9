import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CardEvent } from '../../src/events/card-event.ts';
import {
  type CardEventLog,
  decodeCursor,
  encodeCursor,
  type LoggedCardEvent,
  NETWORK_TOKEN_EVENT_LOG,
  type NetworkTokenEventLog,
} from '../../src/events/event-log.ts';
import type { NetworkTokenEvent } from '../../src/events/network-token-event.ts';
import { createRedisEventLog } from '../../src/events/redis-event-log.ts';
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';
import {
  UNMAPPED_NOTIFICATION_LOG,
  UnmappedNotificationStore,
  unmappedNotificationOf,
} from '../../src/events/unmapped-notification.ts';
import { cardEvent } from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(() => redis.stop());

const event = cardEvent;

const retention = { maxAgeMs: 3_600_000, maxCount: 1_000 };

/** Where a Redis log of one test lives: the test Redis, a key prefix of its own, a silent logger. */
const onRedis = () => ({
  url: redis.url,
  logger: pino({ level: 'silent' }),
  prefix: `test:{${randomUUID()}}`,
  blockMs: 200,
});

/** A log with a small count limit (100) and a controllable clock, for retention. */
async function openWithClock(backend: string, now: () => number): Promise<CardEventLog> {
  const small = { maxAgeMs: 3_600_000, maxCount: 100 };
  if (backend === 'sqlite') {
    return createSqliteEventLog({
      dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-log-')),
      retention: small,
      now,
    });
  }
  return createRedisEventLog({ ...onRedis(), retention: small, now });
}
const backends: [string, () => Promise<CardEventLog>][] = [
  [
    'sqlite',
    async () => createSqliteEventLog({ dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-log-')), retention }),
  ],
  ['redis', async () => createRedisEventLog({ ...onRedis(), retention })],
];

describe.each(backends)('%s event log', (_name, open) => {
  it('deduplicates by tenant and notification id: the same id in another vault is another event', async () => {
    const log = await open();
    const id = randomUUID();
    const inVault1 = await log.append(event({ id, tenant: 'tntsandbox1' }));
    const inVault2 = await log.append(event({ id, tenant: 'tntsandbox2' }));
    expect([inVault1.outcome, inVault2.outcome]).toEqual(['appended', 'appended']);
    const again = await log.append(event({ id, tenant: 'tntsandbox2' }));
    expect(again).toEqual({
      outcome: 'duplicate',
      position: inVault2.outcome === 'appended' ? inVault2.event.position : null,
    });
    expect(
      (await log.readAfter({ tenants: ['tntsandbox1', 'tntsandbox2'] }, null, 10)).map((e) => e.tenant),
    ).toEqual(['tntsandbox1', 'tntsandbox2']);
    await log.close();
  });

  it('appends once per notification id and reports the duplicate with its position', async () => {
    const log = await open();
    const first = event();
    const appended = await log.append(first);
    expect(appended.outcome).toBe('appended');
    const again = await log.append(first);
    expect(again).toEqual({
      outcome: 'duplicate',
      position: appended.outcome === 'appended' ? appended.event.position : null,
    });
    expect(await log.readAfter({ tenants: ['tntsandbox1'] }, null, 10)).toHaveLength(1);
    await log.close();
  });

  it('flags an event older than one already accepted for its card as out of order', async () => {
    const log = await open();
    const newer = await log.append(event({ timestamp: '2026-11-21T05:00:02.000Z' }));
    const older = await log.append(event({ timestamp: '2026-11-21T05:00:01.000Z' }));
    const otherCard = await log.append(
      event({ timestamp: '2026-11-21T05:00:00.000Z', cardId: 'CRD0000000000000000000002' }),
    );
    expect([newer, older, otherCard].map((r) => r.outcome === 'appended' && r.event.outOfOrder)).toEqual([
      false,
      true,
      false,
    ]);
    await log.close();
  });

  it('reads after a position by tenant, card and kind, and pages history by timestamp', async () => {
    const log = await open();
    const appended: LoggedCardEvent[] = [];
    const specs: Partial<CardEvent>[] = [
      { tenant: 'tntsandbox1', timestamp: '2026-11-21T05:00:03.000Z', type: 'au_card.closed' },
      { tenant: 'tntsandbox2', timestamp: '2026-11-21T05:00:01.000Z' },
      { tenant: 'tntsandbox1', timestamp: '2026-11-21T05:00:01.000Z', cardId: 'CRD0000000000000000000009' },
      { tenant: 'tntsandbox1', timestamp: '2026-11-21T05:00:02.000Z' },
    ];
    for (const spec of specs) {
      const result = await log.append(event(spec));
      if (result.outcome === 'appended') appended.push(result.event);
    }
    const vault1 = await log.readAfter({ tenants: ['tntsandbox1'] }, null, 10);
    expect(vault1.map((e) => e.id)).toEqual([appended[0]!.id, appended[2]!.id, appended[3]!.id]);
    expect(
      (await log.readAfter({ tenants: ['tntsandbox1'] }, appended[0]!.position, 10)).map((e) => e.id),
    ).toEqual([appended[2]!.id, appended[3]!.id]);
    expect(
      (await log.readAfter({ tenants: ['tntsandbox1'], types: ['au_card.closed'] }, null, 10)).map(
        (e) => e.id,
      ),
    ).toEqual([appended[0]!.id]);
    expect(
      (await log.readAfter({ tenants: ['tntsandbox1'], subject: 'CRD0000000000000000000009' }, null, 10)).map(
        (e) => e.id,
      ),
    ).toEqual([appended[2]!.id]);

    const page1 = await log.history({ tenants: ['tntsandbox1'] }, null, 2);
    expect(page1.map((e) => e.id)).toEqual([appended[2]!.id, appended[3]!.id]);
    const cursor = decodeCursor(encodeCursor(page1[1]!))!;
    const page2 = await log.history({ tenants: ['tntsandbox1'] }, cursor, 2);
    expect(page2.map((e) => e.id)).toEqual([appended[0]!.id]);
    await log.close();
  });

  it('tails every entry appended after the tail is positioned, in position order', async () => {
    const log = await open();
    await log.append(event());
    const seen: LoggedCardEvent[] = [];
    const stop = await log.tail((e) => seen.push(e));
    const ids = [event(), event(), event()];
    for (const e of ids) await log.append(e);
    await expect.poll(() => seen.length, { timeout: 3_000, interval: 20 }).toBe(3);
    expect(seen.map((e) => e.id)).toEqual(ids.map((e) => e.id));
    expect(seen[0]!.position < seen[1]!.position && seen[1]!.position < seen[2]!.position).toBe(true);
    stop();
    await log.close();
  });
});

describe.each(backends)('%s event log retention', (name) => {
  it('keeps about the newest maxCount entries', async () => {
    const log = await openWithClock(name, Date.now);
    for (let i = 0; i < 150; i++) await log.append(event());
    await log.trim();
    const kept = await log.readAfter({ tenants: ['tntsandbox1'] }, null, 1_000);
    // Redis trims with `~` (whole stream nodes), so it may keep a little more than the limit.
    expect(kept.length).toBeGreaterThanOrEqual(100);
    expect(kept.length).toBeLessThan(150);
    await log.close();
  });
});

/** Ids of the first 10 entries of vault tntsandbox1 the log still holds, oldest position first. */
async function retainedIds(log: CardEventLog): Promise<string[]> {
  return (await log.readAfter({ tenants: ['tntsandbox1'] }, null, 10)).map((e) => e.id);
}

describe('sqlite event log retention by age', () => {
  it('drops entries received longer ago than maxAgeMs', async () => {
    let now = Date.parse('2026-11-21T05:00:00.000Z');
    const log = await openWithClock('sqlite', () => now);
    for (let i = 0; i < 5; i++) await log.append(event());
    now += 3_600_001;
    const fresh = event();
    await log.append(fresh);
    expect(await log.trim()).toBe(5);
    expect(await retainedIds(log)).toEqual([fresh.id]);
    await log.close();
  });

  it('never drops an entry younger than maxAgeMs when the wall clock stepped back', async () => {
    let now = Date.parse('2026-11-21T05:00:00.000Z');
    const log = await openWithClock('sqlite', () => now);
    const old = event();
    await log.append(old);
    now += 3_600_000;
    const young = event();
    await log.append(young);
    // The clock steps back 10 minutes: this one was received before `young` by the wall clock.
    now -= 600_000;
    const stepped = event();
    await log.append(stepped);
    now += 600_001;
    // `old` is past maxAgeMs; `young` is not; `stepped` is older than `young` by the clock but
    // appended after it, so it stays until the count limit or a later trim removes it.
    expect(await log.trim()).toBe(1);
    expect(await retainedIds(log)).toEqual([young.id, stepped.id]);
    // Past `stepped`'s age but not `young`'s: both stay, in order.
    now += 3_000_000;
    expect(await log.trim()).toBe(0);
    expect(await retainedIds(log)).toEqual([young.id, stepped.id]);
    now += 600_000;
    expect(await log.trim()).toBe(2);
    await log.close();
  });
});

describe('cursors', () => {
  it('round-trips and rejects foreign strings', () => {
    const cursor = encodeCursor({ position: 123456789012345n, timestampMs: 1_795_237_909_952 });
    expect(decodeCursor(cursor)).toEqual({ position: 123456789012345n, timestampMs: 1_795_237_909_952 });
    expect(decodeCursor('bm9wZQ')).toBeNull();
  });
});

/** A network token notification as the receiver hands it to the log. */
function tokenEvent(overrides: Partial<NetworkTokenEvent> = {}): NetworkTokenEvent {
  return {
    id: randomUUID(),
    type: 'network_token.active',
    source: 'network_tokens',
    tenant: 'tntsandbox1',
    panAlias: 'tok_sandbox_AbCdEfGhIjKlMnOpQrStUv',
    state: 'ACTIVE',
    networkTokenLast4: '4821',
    expiresAt: '2030-12',
    createdAt: '2026-11-21T05:00:00Z',
    timestamp: '2026-11-21T05:00:00.000Z',
    fingerprint: 'b'.repeat(64),
    grouping: 'every_single',
    occurrence: 1,
    orgId: 'ACsandbox000000000000001',
    integrationId: 'INTsandbox00000000000001',
    ...overrides,
  };
}

const tokenBackends: [string, () => Promise<NetworkTokenEventLog>][] = [
  [
    'sqlite',
    async () =>
      createSqliteEventLog({
        dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-log-')),
        retention,
        kind: NETWORK_TOKEN_EVENT_LOG,
      }),
  ],
  ['redis', async () => createRedisEventLog({ ...onRedis(), retention, kind: NETWORK_TOKEN_EVENT_LOG })],
];

describe.each(tokenBackends)('%s network token event log', (_name, open) => {
  it('appends, deduplicates by tenant and id, filters by PAN alias, tails and pages history by timestamp', async () => {
    const log = await open();
    const tailed: string[] = [];
    const stop = await log.tail((logged) => tailed.push(logged.id));
    const later = tokenEvent({ timestamp: '2026-11-21T05:00:02.000Z' });
    const earlier = tokenEvent({ timestamp: '2026-11-21T05:00:01.000Z' });
    const otherAlias = tokenEvent({ panAlias: 'tok_sandbox_other', timestamp: '2026-11-21T05:00:03.000Z' });
    for (const each of [later, earlier, otherAlias])
      expect((await log.append(each)).outcome).toBe('appended');
    expect((await log.append(later)).outcome).toBe('duplicate');
    expect((await log.append({ ...later, tenant: 'tntsandbox2' })).outcome).toBe('appended');

    const all = await log.readAfter({ tenants: ['tntsandbox1'] }, null, 10);
    expect(all.map((e) => e.id)).toEqual([later.id, earlier.id, otherAlias.id]);
    // The earlier notification of the alias arrived after a later one.
    expect(all.map((e) => e.outOfOrder)).toEqual([false, true, false]);
    const ofAlias = await log.readAfter({ tenants: ['tntsandbox1'], subject: later.panAlias }, null, 10);
    expect(ofAlias.map((e) => e.id)).toEqual([later.id, earlier.id]);
    const afterFirst = await log.readAfter({ tenants: ['tntsandbox1'] }, all[0]!.position, 10);
    expect(afterFirst.map((e) => e.id)).toEqual([earlier.id, otherAlias.id]);
    const history = await log.history({ tenants: ['tntsandbox1'] }, null, 2);
    expect(history.map((e) => e.id)).toEqual([earlier.id, later.id]);
    const next = await log.history({ tenants: ['tntsandbox1'] }, history[1]!, 2);
    expect(next.map((e) => e.id)).toEqual([otherAlias.id]);
    await expect.poll(() => tailed.length).toBe(4);
    expect(tailed).toEqual([later.id, earlier.id, otherAlias.id, later.id]);
    stop();
    await log.close();
  });
});

describe('sqlite schema migration', () => {
  it('moves a card_events table deduplicated by id alone to (tenant, id), keeping rows, positions and the sequence', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-log-'));
    const legacy = new DatabaseSync(join(dataDir, 'card-events.sqlite'));
    // The schema of the first release (user_version 0).
    legacy.exec(`
      CREATE TABLE card_events (
        position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL,
        card_id TEXT NOT NULL, type TEXT NOT NULL, timestamp_ms INTEGER NOT NULL,
        received_ms INTEGER NOT NULL, out_of_order INTEGER NOT NULL, body TEXT NOT NULL);
      CREATE INDEX card_events_tenant_position ON card_events (tenant, position);
      CREATE INDEX card_events_card_timestamp ON card_events (tenant, card_id, timestamp_ms);`);
    const kept = event();
    const insert = legacy.prepare(
      'INSERT INTO card_events (id, tenant, card_id, type, timestamp_ms, received_ms, out_of_order, body) VALUES (?, ?, ?, ?, ?, ?, 0, ?)',
    );
    const dropped = event();
    for (const each of [kept, dropped]) {
      insert.run(
        each.id,
        each.tenant,
        each.cardId ?? '',
        each.type,
        Date.parse(each.timestamp),
        Date.now(),
        JSON.stringify(each),
      );
    }
    // Retention dropped the newest row: its position must never be handed out again.
    legacy.prepare('DELETE FROM card_events WHERE id = ?').run(dropped.id);
    legacy.close();

    const log = createSqliteEventLog({ dataDir, retention });
    const [existing] = await log.readAfter({ tenants: ['tntsandbox1'] }, null, 10);
    expect(existing).toMatchObject({ id: kept.id, position: 1n });
    expect((await log.append(kept)).outcome).toBe('duplicate');
    const sameIdOtherVault = await log.append({ ...kept, tenant: 'tntsandbox2' });
    expect(sameIdOtherVault.outcome).toBe('appended');
    // Beyond the dropped row's position 2: positions (and cursors) are never reused.
    expect(sameIdOtherVault.outcome === 'appended' && sameIdOtherVault.event.position > 2n).toBe(true);
    await log.close();

    // Idempotent: a second start finds the file migrated.
    const reopened = createSqliteEventLog({ dataDir, retention });
    expect(await reopened.readAfter({ tenants: ['tntsandbox1', 'tntsandbox2'] }, null, 10)).toHaveLength(2);
    await reopened.close();
  });

  it('drops the received_ms index of a version 1 file and keeps its rows and age retention', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-log-'));
    let now = Date.parse('2026-11-21T05:00:00.000Z');
    const first = createSqliteEventLog({ dataDir, retention, now: () => now });
    const old = event();
    await first.append(old);
    await first.close();
    const file = new DatabaseSync(join(dataDir, 'card-events.sqlite'));
    // Version 1 had an index on received_ms for retention by age.
    file.exec('CREATE INDEX card_events_received ON card_events (received_ms); PRAGMA user_version = 1;');
    file.close();

    now += 3_600_001;
    const log = createSqliteEventLog({ dataDir, retention, now: () => now });
    const fresh = event();
    await log.append(fresh);
    expect(await log.trim()).toBe(1);
    expect(await retainedIds(log)).toEqual([fresh.id]);
    await log.close();
    const migrated = new DatabaseSync(join(dataDir, 'card-events.sqlite'), { readOnly: true });
    expect(migrated.prepare('PRAGMA user_version').get()).toEqual({ user_version: 3 });
    const indexes = migrated
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%received%'")
      .all();
    migrated.close();
    expect(indexes).toEqual([]);
  });
});

describe('sqlite schema migration to version 3', () => {
  it('adds the unordered column to a version 2 file, keeping its rows and their out-of-order marker', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-log-'));
    const first = createSqliteEventLog({ dataDir, retention });
    const kept = event({ timestamp: '2026-11-21T05:01:03.000Z' });
    await first.append(kept);
    await first.close();
    const file = new DatabaseSync(join(dataDir, 'card-events.sqlite'));
    // Version 2 had no unordered column.
    file.exec('ALTER TABLE card_events DROP COLUMN unordered; PRAGMA user_version = 2;');
    file.close();

    const log = createSqliteEventLog({ dataDir, retention });
    const flagged = await log.append(
      event({ timestamp: '2026-11-21T05:01:04.000Z', timestampFlag: 'future' }),
    );
    const earlier = await log.append(event({ timestamp: '2026-11-21T05:01:02.000Z' }));
    expect([flagged.outcome, earlier.outcome === 'appended' && earlier.event.outOfOrder]).toEqual([
      'appended',
      true,
    ]);
    expect((await retainedIds(log)).includes(kept.id)).toBe(true);
    await log.close();
    const migrated = new DatabaseSync(join(dataDir, 'card-events.sqlite'), { readOnly: true });
    expect(migrated.prepare('PRAGMA user_version').get()).toEqual({ user_version: 3 });
    expect(migrated.prepare('SELECT unordered FROM card_events ORDER BY position').all()).toEqual([
      { unordered: 0 },
      { unordered: 1 },
      { unordered: 0 },
    ]);
    migrated.close();
  });
});

describe.each(['sqlite', 'redis'])('%s unmapped notification log', (backend) => {
  it('stores unmapped notifications durably (reopened), deduplicated by (tenant, id), paged by vault', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-log-'));
    const prefix = `test:{${randomUUID()}}`;
    const open = () =>
      backend === 'sqlite'
        ? Promise.resolve(createSqliteEventLog({ dataDir, retention, kind: UNMAPPED_NOTIFICATION_LOG }))
        : createRedisEventLog({ ...onRedis(), prefix, retention, kind: UNMAPPED_NOTIFICATION_LOG });
    const first = unmappedNotificationOf(
      Buffer.from('[5100260000391001]'),
      [5100260000391001],
      { reason: 'not-an-object' },
      '2026-11-21T05:00:01.000Z',
    );
    const attributed = unmappedNotificationOf(
      Buffer.from('{}'),
      { id: 'a', event: 'au_card.updated' },
      { reason: 'no-id', tenant: 'tntsandbox1', event: 'au_card.updated' },
      '2026-11-21T05:00:02.000Z',
    );
    const log = await open();
    expect((await log.append(first)).outcome).toBe('appended');
    expect((await log.append(attributed)).outcome).toBe('appended');
    expect((await log.append(first)).outcome).toBe('duplicate');
    await log.close();

    const reopened = await open();
    const all = await reopened.history({ tenants: ['', 'tntsandbox1'] }, null, 10);
    expect(all.map(({ position: _p, timestampMs: _t, outOfOrder: _o, ...entry }) => entry)).toEqual([
      {
        id: first.id,
        tenant: '',
        type: 'not-an-object',
        reason: 'not-an-object',
        timestamp: '2026-11-21T05:00:01.000Z',
        body: '["510026******1001"]',
        truncated: false,
        bodyBytes: 18,
      },
      { ...attributed },
    ]);
    expect((await reopened.history({ tenants: ['tntsandbox1'] }, null, 10)).map((e) => e.id)).toEqual([
      attributed.id,
    ]);
    expect(await reopened.history({ tenants: ['tntsandbox2'] }, null, 10)).toEqual([]);
    await reopened.close();
  });
});

describe.each(['sqlite', 'redis'])('%s unmapped notification store bounded in bytes', (backend) => {
  it('drops the oldest entries once the stored ones exceed maxBytes, without waiting for the interval', async () => {
    // Each entry's JSON text is exactly `entryBytes` long: ten of them fit in the bound, the 11th not.
    const entryOf = (i: number) =>
      unmappedNotificationOf(
        Buffer.from(`{"n":${i}}`),
        { n: i, pad: 'x'.repeat(400) },
        { reason: 'no-tenant', id: `bytes-${String(i).padStart(2, '0')}` },
        '2026-11-21T05:00:01.000Z',
      );
    const entryBytes = Buffer.byteLength(JSON.stringify(entryOf(10)));
    const bounded = { ...retention, maxBytes: entryBytes * 10 };
    const log =
      backend === 'sqlite'
        ? createSqliteEventLog({
            dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-log-')),
            retention: bounded,
            kind: UNMAPPED_NOTIFICATION_LOG,
          })
        : await createRedisEventLog({ ...onRedis(), retention: bounded, kind: UNMAPPED_NOTIFICATION_LOG });
    const store = new UnmappedNotificationStore({
      log,
      logger: pino({ level: 'silent' }),
      trimIntervalMs: 3_600_000,
      maxBytes: bounded.maxBytes,
    });
    try {
      for (let i = 0; i < 25; i++) expect(await store.record(entryOf(i))).toBe('published');
      await store.settled();
      // Retention ran on its own as entries arrived (the interval is an hour away).
      expect((await store.history([''], null, 100)).length).toBeLessThan(25);
      // One more run leaves exactly the newest ten.
      expect(await log.trim()).toBeGreaterThanOrEqual(0);
      const kept = await store.history([''], null, 100);
      expect(kept.map((entry) => entry.id)).toEqual(
        Array.from({ length: 10 }, (_, i) => `bytes-${String(15 + i).padStart(2, '0')}`),
      );
    } finally {
      await store.close();
    }
  });
});
