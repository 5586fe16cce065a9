import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CardEventLog } from '../../src/events/event-log.ts';
import { createRedisEventLog } from '../../src/events/redis-event-log.ts';
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';
import { cardEvent } from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

/**
 * `EventLog.byIds` on both backends (issue 22: `CardEvent` entity references by notification id):
 * the retained events of one tenant with the given ids, never another tenant's, none for an unknown
 * id or one past retention.
 */

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(() => redis.stop());

const retention = { maxAgeMs: 3_600_000, maxCount: 1_000 };

const backends: [string, (maxCount?: number) => CardEventLog | Promise<CardEventLog>][] = [
  [
    'sqlite',
    (maxCount = retention.maxCount) =>
      createSqliteEventLog({
        dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-log-')),
        retention: { ...retention, maxCount },
      }),
  ],
  [
    'redis',
    (maxCount = retention.maxCount) =>
      createRedisEventLog({
        url: redis.url,
        logger: pino({ level: 'silent' }),
        prefix: `test:{${randomUUID()}}`,
        blockMs: 200,
        retention: { ...retention, maxCount },
      }),
  ],
];

describe.each(backends)('%s event log byIds', (_name, open) => {
  it("reads a tenant's events by notification id, never another tenant's", async () => {
    const log = await open();
    const shared = randomUUID();
    const [a, b, other, sameIdOtherVault] = await Promise.all([
      log.append(cardEvent({ id: randomUUID(), tenant: 'tntsandbox1', cardId: 'CRDaaaa' })),
      log.append(cardEvent({ id: shared, tenant: 'tntsandbox1', cardId: 'CRDbbbb' })),
      log.append(cardEvent({ id: randomUUID(), tenant: 'tntsandbox2', cardId: 'CRDcccc' })),
      log.append(cardEvent({ id: shared, tenant: 'tntsandbox2', cardId: 'CRDdddd' })),
    ]);
    const logged = [a, b, other, sameIdOtherVault].map((outcome) => {
      if (outcome.outcome !== 'appended') throw new Error('not appended');
      return outcome.event;
    });
    const found = await log.byIds('tntsandbox1', [logged[0]!.id, shared, logged[2]!.id, randomUUID()]);
    const byPosition = (x: { position: bigint }, y: { position: bigint }) =>
      x.position < y.position ? -1 : 1;
    expect(found.sort(byPosition)).toEqual([logged[0], logged[1]]);
    expect(await log.byIds('tntsandbox2', [shared])).toEqual([logged[3]]);
    expect(await log.byIds('tntsandbox1', [])).toEqual([]);
    await log.close();
  });

  it('finds nothing for an event retention dropped', async () => {
    // Redis trims whole stream nodes (`~`, as it appends): 250 events over a limit of 100 drop at
    // least the oldest, whose (tenant, id) marker lives on for the dedupe period.
    const log = await open(100);
    const ids = Array.from({ length: 250 }, () => randomUUID());
    for (const id of ids) await log.append(cardEvent({ id, tenant: 'tntsandbox1' }));
    await log.trim();
    const found = await log.byIds('tntsandbox1', [ids[0]!, ids[249]!]);
    expect(found.map((event) => event.id)).toEqual([ids[249]]);
    await log.close();
  });
});
