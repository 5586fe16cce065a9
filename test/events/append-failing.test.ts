import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CardEvent, parseCardNotification } from '../../src/events/card-event.ts';
import {
  APPEND_FAILURE_HOLD_MS,
  createCardEventStream,
  EventLogAppendFailingError,
} from '../../src/events/card-event-stream.ts';
import type { AppendOutcome, CardEventLog, Logged } from '../../src/events/event-log.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { notification } from '../support/fixtures.ts';
import { samplesOf, sampleValue } from '../support/telemetry.ts';

/**
 * A log that refuses appends (a Redis at maxmemory still answers PING) fails the stream's `ping`
 * (readiness) and sets `cardgraph_event_log_append_failing` (issue 20 item 1) until an append
 * succeeds or {@link APPEND_FAILURE_HOLD_MS} passes.
 */

function cardEvent(): CardEvent {
  const result = parseCardNotification(notification());
  if (!result.ok) throw new Error(`unmappable test notification: ${result.reason}`);
  return result.event;
}

/** A log whose backend answers pings and whose appends fail while `refusing` is true. */
function switchableLog(): CardEventLog & { refusing: boolean } {
  let position = 0n;
  const log = {
    refusing: false,
    async append(event: CardEvent): Promise<AppendOutcome> {
      if (log.refusing) throw Object.assign(new Error('OOM command not allowed'), { code: 'oom' });
      position += 1n;
      return { outcome: 'appended', event: { ...event, position } as Logged<CardEvent> };
    },
    readAfter: async () => [],
    history: async () => [],
    byIds: async () => [],
    tail: async () => () => {},
    trim: async () => 0,
    ping: async () => {},
    close: async () => {},
  };
  return log;
}

describe('event stream when its log refuses appends', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails ping with append-failed and sets the gauge until an append succeeds', async () => {
    const metrics = createMetrics();
    const log = switchableLog();
    const stream = await createCardEventStream({
      log,
      logger: createLogger({ name: 'append-failing-test', level: 'silent' }),
      metrics,
      backend: 'redis',
    });
    const failing = async () =>
      sampleValue(samplesOf(await metrics.registry.metrics()), 'cardgraph_event_log_append_failing', {
        log: 'card_events',
      });
    try {
      expect(await failing()).toBe(0);
      await expect(stream.ping()).resolves.toBeUndefined();

      log.refusing = true;
      await expect(stream.publish(cardEvent())).rejects.toThrow('OOM');
      await expect(stream.ping()).rejects.toThrow(EventLogAppendFailingError);
      await expect(stream.ping()).rejects.toMatchObject({ code: 'append-failed' });
      expect(await failing()).toBe(1);

      log.refusing = false;
      await expect(stream.publish(cardEvent())).resolves.toBe('published');
      await expect(stream.ping()).resolves.toBeUndefined();
      expect(await failing()).toBe(0);
    } finally {
      await stream.close();
    }
  });

  it('clears the readiness failure on its own after APPEND_FAILURE_HOLD_MS without appends', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const log = switchableLog();
    const stream = await createCardEventStream({
      log,
      logger: createLogger({ name: 'append-failing-test', level: 'silent' }),
    });
    try {
      log.refusing = true;
      await expect(stream.publish(cardEvent())).rejects.toThrow('OOM');
      vi.advanceTimersByTime(APPEND_FAILURE_HOLD_MS - 1);
      await expect(stream.ping()).rejects.toMatchObject({ code: 'append-failed' });
      vi.advanceTimersByTime(1);
      await expect(stream.ping()).resolves.toBeUndefined();
    } finally {
      await stream.close();
    }
  });
});
