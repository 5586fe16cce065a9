import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CardEvent, parseCardNotification } from '../../src/events/card-event.ts';
import { EventLogAppendError } from '../../src/events/event-log.ts';
import { RedisEventLog } from '../../src/events/redis-event-log.ts';
import { notification } from '../support/fixtures.ts';
import { type RedisProcess, replicationOf, startRedisNode } from '../support/processes.ts';

/**
 * REDIS_MIN_REPLICAS_ACK (issue 20, item 11): an append is acknowledged only once the required
 * replicas hold it (Redis WAIT after the batch); with fewer it is refused, and the sender's retry,
 * once a replica holds the entry, is the duplicate of what the first attempt wrote. Real redis-server
 * processes: a primary, and a replica attached to it during the test.
 */

const retention = { maxAgeMs: 86_400_000, maxCount: 1_000_000 };
const silent = pino({ level: 'silent' });
// Long enough that a replica attached and up acknowledges within it on a loaded 2-core machine (a 200 ms
// WAIT once timed out there after the replica was up), short enough for the refusal half of the test.
const ACK_TIMEOUT_MS = 1_500;

function cardEvent(): CardEvent {
  const parsed = parseCardNotification(notification({ tenant: 'tntsandbox1' }));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.event;
}

describe('RedisEventLog with minReplicasAck', () => {
  let primary: RedisProcess;
  let replica: RedisProcess | undefined;
  let log: RedisEventLog | undefined;

  beforeAll(async () => {
    primary = await startRedisNode();
  });
  afterEach(async () => {
    await log?.close();
    log = undefined;
  });
  afterAll(async () => {
    await replica?.kill('SIGTERM');
    await primary.kill('SIGTERM');
  });

  it('refuses an append no replica acknowledged, and acknowledges the retry as a duplicate once one holds it', async () => {
    log = await RedisEventLog.open({
      url: primary.url,
      minReplicasAck: 1,
      replicasAckTimeoutMs: ACK_TIMEOUT_MS,
      retention,
      logger: silent,
    });
    const first = cardEvent();
    const startedAt = Date.now();
    const refusal = await log.append(first).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(EventLogAppendError);
    expect((refusal as EventLogAppendError).code).toBe('event-log-append-failed');
    expect((refusal as Error).message).toBe(
      `event log append failed: 0 of 1 replicas acknowledged within ${ACK_TIMEOUT_MS} ms`,
    );
    // WAIT waited its timeout for the replica, not less.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(ACK_TIMEOUT_MS - 10);

    replica = await startRedisNode({ replicaOf: primary.port });
    expect(await replicationOf(replica.port)).toMatchObject({ role: 'slave', master_link_status: 'up' });
    // The refused attempt did write to the primary: the retry is its duplicate, at its position.
    const retry = await log.append(first);
    expect(retry.outcome).toBe('duplicate');
    const second = cardEvent();
    expect((await log.append(second)).outcome).toBe('appended');
    const history = await log.history({ tenants: ['tntsandbox1'] }, null, 10);
    expect(history.map((event) => event.id)).toEqual([first.id, second.id]);
    expect(retry).toEqual({ outcome: 'duplicate', position: history[0]!.position });
  });

  it('acknowledges without WAIT when minReplicasAck is 0 (the default)', async () => {
    log = await RedisEventLog.open({
      url: primary.url,
      retention,
      logger: silent,
      prefix: 'cardgraph:{no-wait}',
    });
    const outcome = await log.append(cardEvent());
    expect(outcome.outcome).toBe('appended');
  });
});
