import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCardNotification } from '../../src/events/card-event.ts';
import type { CardEventLog } from '../../src/events/event-log.ts';
import { parseNetworkTokenNotification } from '../../src/events/network-token-event.ts';
import { createRedisEventLog } from '../../src/events/redis-event-log.ts';
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';
import { cardEvent, documentedNetworkTokenNotification, notification } from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

const RECEIVED_AT = '2026-11-21T05:01:04.000Z';

describe('event timestamps in the future or no real date', () => {
  it('keeps a time beyond the skew as sent, flagged future, and takes the time of receipt', () => {
    const parsed = parseCardNotification(notification({ timestamp: '2099-01-01T00:00:00Z' }), RECEIVED_AT);
    expect(parsed.ok && parsed.event).toMatchObject({
      timestamp: RECEIVED_AT,
      timestampFlag: 'future',
      sentTimestamp: '2099-01-01T00:00:00Z',
    });
    // Within the default skew of 300 s: used as it is, no flag.
    const near = parseCardNotification(notification({ timestamp: '2026-11-21T05:05:00Z' }), RECEIVED_AT);
    expect(near.ok && [near.event.timestamp, near.event.timestampFlag, near.event.sentTimestamp]).toEqual([
      '2026-11-21T05:05:00Z',
      undefined,
      undefined,
    ]);
  });

  it('keeps a date that is no real date as sent, flagged invalid, and never serves it as a date', () => {
    const parsed = parseCardNotification(
      notification({ timestamp: '2024-02-30T10:00:00Z', details: { occurred_at: '2023-02-29T10:00:00Z' } }),
      RECEIVED_AT,
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    expect([parsed.event.timestamp, parsed.event.timestampFlag, parsed.event.sentTimestamp]).toEqual([
      RECEIVED_AT,
      'invalid',
      '2024-02-30T10:00:00Z',
    ]);
    expect(parsed.event.occurredAt).toBeUndefined();
    // A usable fallback member is the timestamp; leap days that exist stay valid.
    const withFallback = parseCardNotification(
      notification({ timestamp: '2024-02-30T10:00:00Z', details: { occurred_at: '2024-02-29T10:00:00Z' } }),
      RECEIVED_AT,
    );
    expect(withFallback.ok && [withFallback.event.timestamp, withFallback.event.timestampFlag]).toEqual([
      '2024-02-29T10:00:00Z',
      'invalid',
    ]);
    const token = parseNetworkTokenNotification(
      documentedNetworkTokenNotification({ timestamp: '2024-13-01T00:00:00Z' }),
      RECEIVED_AT,
    );
    expect(token.ok && [token.event.timestamp, token.event.timestampFlag, token.event.sentTimestamp]).toEqual(
      ['2024-12-12T09:59:44.667670Z', 'invalid', '2024-13-01T00:00:00Z'],
    );
  });
});

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(() => redis.stop());

const retention = { maxAgeMs: 3_600_000, maxCount: 1_000 };

describe.each([
  [
    'sqlite',
    async (): Promise<CardEventLog> =>
      createSqliteEventLog({ dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-log-')), retention }),
  ],
  [
    'redis',
    (): Promise<CardEventLog> =>
      createRedisEventLog({
        url: redis.url,
        logger: pino({ level: 'silent' }),
        prefix: `test:{${randomUUID()}}`,
        retention,
      }),
  ],
])('%s log: an event with a flagged time', (_backend, open) => {
  it('is never out of order and never makes a later event of its card out of order', async () => {
    const log = await open();
    try {
      const cardId = `CRD${randomUUID().replaceAll('-', '')}`;
      const at = (timestamp: string, flag?: 'future' | 'invalid') =>
        cardEvent({ id: randomUUID(), cardId, timestamp, ...(flag ? { timestampFlag: flag } : {}) });
      const outOfOrder = async (event: ReturnType<typeof at>) => {
        const outcome = await log.append(event);
        if (outcome.outcome !== 'appended') throw new Error('duplicate');
        return outcome.event.outOfOrder;
      };
      expect(await outOfOrder(at('2026-11-21T05:01:00.000Z'))).toBe(false);
      // Flagged (its time replaced by the receipt): not compared, and not what later ones compare to.
      expect(await outOfOrder(at('2026-11-21T05:01:04.000Z', 'future'))).toBe(false);
      expect(await outOfOrder(at('2026-11-21T04:00:00.000Z', 'invalid'))).toBe(false);
      expect(await outOfOrder(at('2026-11-21T05:01:02.000Z'))).toBe(false);
      // An earlier time than the newest unflagged one still is.
      expect(await outOfOrder(at('2026-11-21T05:01:01.000Z'))).toBe(true);
      const history = await log.history({ tenants: ['tntsandbox1'], subject: cardId }, null, 10);
      expect(history.map((e) => [e.timestamp, e.timestampFlag ?? null, e.outOfOrder])).toEqual([
        ['2026-11-21T04:00:00.000Z', 'invalid', false],
        ['2026-11-21T05:01:00.000Z', null, false],
        ['2026-11-21T05:01:01.000Z', null, true],
        ['2026-11-21T05:01:02.000Z', null, false],
        ['2026-11-21T05:01:04.000Z', 'future', false],
      ]);
    } finally {
      await log.close();
    }
  });
});
