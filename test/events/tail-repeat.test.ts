import { describe, expect, it } from 'vitest';
import { type CardEvent, parseCardNotification } from '../../src/events/card-event.ts';
import { createCardEventStream } from '../../src/events/card-event-stream.ts';
import type { CardEventLog, Logged } from '../../src/events/event-log.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { notification } from '../support/fixtures.ts';

/**
 * A Redis failover can hand the log's tail one notification twice under two positions: the old
 * primary's entry (read by the tail, never replicated, its append refused) and the provider's retry
 * appended on the new primary. A live subscriber receives it once.
 */

function cardEvent(): CardEvent {
  const result = parseCardNotification(notification());
  if (!result.ok) throw new Error(`unmappable test notification: ${result.reason}`);
  return result.event;
}

/** A log whose tail is driven by the test (`emit`). */
function drivenLog(): CardEventLog & { emit(event: Logged<CardEvent>): void } {
  let listener: ((event: Logged<CardEvent>) => void) | undefined;
  return {
    emit: (event) => listener?.(event),
    append: async () => {
      throw new Error('not used');
    },
    readAfter: async () => [],
    history: async () => [],
    byIds: async () => [],
    tail: async (next) => {
      listener = next;
      return () => {
        listener = undefined;
      };
    },
    trim: async () => 0,
    ping: async () => {},
    close: async () => {},
  };
}

describe('the event stream after a failover', () => {
  it('delivers a notification the tail hands over twice, under two positions, once', async () => {
    const log = drivenLog();
    const stream = await createCardEventStream({
      log,
      logger: createLogger({ name: 'tail-repeat-test', level: 'silent' }),
    });
    try {
      const subscriber = stream.subscribe({ tenants: ['tntsandbox1'] });
      const [first, second] = [cardEvent(), cardEvent()];
      log.emit({ ...first, position: 10n } as Logged<CardEvent>);
      // The retried append of `first` on the new primary, then the next notification.
      log.emit({ ...first, position: 12n } as Logged<CardEvent>);
      log.emit({ ...second, position: 13n } as Logged<CardEvent>);
      // The same id in another vault is another event.
      log.emit({ ...first, tenant: 'tntsandbox2', position: 14n } as Logged<CardEvent>);
      const received = [(await subscriber.next()).value, (await subscriber.next()).value];
      expect(received.map((event) => [event.id, event.position])).toEqual([
        [first.id, 10n],
        [second.id, 13n],
      ]);
      await subscriber.return?.();
    } finally {
      await stream.close();
    }
  });
});
