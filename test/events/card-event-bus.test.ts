import { describe, expect, it } from 'vitest';
import { type CardEvent, parseCardNotification } from '../../src/events/card-event.ts';
import { createInMemoryCardEventBus, SlowSubscriberError } from '../../src/events/card-event-bus.ts';
import { type NotificationOverrides, notification } from '../support/fixtures.ts';

function cardEvent(overrides: NotificationOverrides = {}): CardEvent {
  const result = parseCardNotification(notification(overrides));
  if (!result.ok) throw new Error(`unmappable test notification: ${result.reason}`);
  return result.event;
}

/** Resolves with the iterator's next result, or 'pending' if none arrives within a few ms. */
async function nextOrPending(
  iterator: AsyncIterator<CardEvent>,
): Promise<IteratorResult<CardEvent> | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), 20);
  });
  try {
    return await Promise.race([iterator.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('createInMemoryCardEventBus', () => {
  it('delivers the same event instance to every subscriber of its tenant only', async () => {
    const bus = createInMemoryCardEventBus();
    const first = bus.subscribe({ tenants: ['tntsandbox1'] });
    const second = bus.subscribe({ tenants: ['tntsandbox1', 'tntsandbox2'] });
    const other = bus.subscribe({ tenants: ['tntsandbox2'] });
    const event = cardEvent();

    expect(await bus.publish(event)).toBe('published');
    const a = await first.next();
    const b = await second.next();
    expect(a).toEqual({ value: event, done: false });
    expect(a.value).toBe(event);
    expect(b.value).toBe(event);

    const forOther = cardEvent({ tenant: 'tntsandbox2' });
    await bus.publish(forOther);
    expect((await other.next()).value).toBe(forOther);
    expect((await second.next()).value).toBe(forOther);
    expect(await nextOrPending(first)).toBe('pending');
  });

  it('filters by cardId and by types', async () => {
    const bus = createInMemoryCardEventBus();
    const byCard = bus.subscribe({ tenants: ['tntsandbox1'], cardId: 'CRDzzzzzzzzzzzzzzzzzzzzzz' });
    const byType = bus.subscribe({ tenants: ['tntsandbox1'], types: ['au_card.closed', 'au_card.expired'] });

    const otherCardUpdated = cardEvent();
    const closed = cardEvent({ event: 'au_card.closed' });
    const matchingCard = cardEvent({ cardId: 'CRDzzzzzzzzzzzzzzzzzzzzzz', event: 'au_card.enrolled' });
    for (const event of [otherCardUpdated, closed, matchingCard]) await bus.publish(event);

    expect((await byCard.next()).value).toBe(matchingCard);
    expect(await nextOrPending(byCard)).toBe('pending');
    expect((await byType.next()).value).toBe(closed);
    expect(await nextOrPending(byType)).toBe('pending');
  });

  it('drops a repeated notification id, remembering the last dedupeCapacity ids', async () => {
    const bus = createInMemoryCardEventBus({ dedupeCapacity: 2 });
    const subscriber = bus.subscribe({ tenants: ['tntsandbox1'] });
    const [a, b, c] = [cardEvent(), cardEvent(), cardEvent()] as [CardEvent, CardEvent, CardEvent];

    expect(await bus.publish(a)).toBe('published');
    expect(await bus.publish({ ...a })).toBe('duplicate');
    expect(await bus.publish(b)).toBe('published');
    // a was seen more recently than b, so c evicts b.
    expect(await bus.publish(a)).toBe('duplicate');
    expect(await bus.publish(c)).toBe('published');
    expect(await bus.publish(b)).toBe('published');
    expect(await bus.publish(a)).toBe('published');

    const received: string[] = [];
    for (let i = 0; i < 5; i++) received.push((await subscriber.next()).value.id);
    expect(received).toEqual([a.id, b.id, c.id, b.id, a.id]);
    expect(await nextOrPending(subscriber)).toBe('pending');
  });

  it('unsubscribes on return(), ending a pending next()', async () => {
    const bus = createInMemoryCardEventBus();
    const subscriber = bus.subscribe({ tenants: ['tntsandbox1', 'tntsandbox2'] });
    expect(bus.subscriberCount()).toBe(1);
    expect(bus.subscriberCount('tntsandbox2')).toBe(1);

    const pending = subscriber.next();
    expect(await subscriber.return?.()).toEqual({ value: undefined, done: true });
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(bus.subscriberCount()).toBe(0);
    expect(bus.subscriberCount('tntsandbox1')).toBe(0);

    await bus.publish(cardEvent());
    expect(await subscriber.next()).toEqual({ value: undefined, done: true });
  });

  it('ends a for-await loop and unsubscribes when the loop breaks', async () => {
    const bus = createInMemoryCardEventBus();
    const event = cardEvent();
    const consumed = (async () => {
      for await (const received of bus.subscribe({ tenants: ['tntsandbox1'] })) return received;
      return undefined;
    })();
    await bus.publish(event);
    expect(await consumed).toBe(event);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('unsubscribes when the signal aborts', async () => {
    const bus = createInMemoryCardEventBus();
    const controller = new AbortController();
    const subscriber = bus.subscribe({ tenants: ['tntsandbox1'] }, controller.signal);
    const pending = subscriber.next();
    controller.abort();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(bus.subscriberCount()).toBe(0);

    const already = bus.subscribe({ tenants: ['tntsandbox1'] }, AbortSignal.abort());
    expect(bus.subscriberCount()).toBe(0);
    expect(await already.next()).toEqual({ value: undefined, done: true });
  });

  it('queues events for a subscriber that is behind, then ends it with an error past the limit', async () => {
    const bus = createInMemoryCardEventBus({ maxBufferedEvents: 3 });
    const slow = bus.subscribe({ tenants: ['tntsandbox1'] });
    const fast = bus.subscribe({ tenants: ['tntsandbox1'] });
    const events = Array.from({ length: 4 }, () => cardEvent());

    for (const event of events.slice(0, 3)) {
      await bus.publish(event);
      expect((await fast.next()).value).toBe(event);
    }
    expect(bus.subscriberCount()).toBe(2);
    await bus.publish(events[3]!);
    expect((await fast.next()).value).toBe(events[3]);
    expect(bus.subscriberCount()).toBe(1);

    const failure = await slow.next().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SlowSubscriberError);
    expect((failure as SlowSubscriberError).code).toBe('subscriber-overflow');
    expect(await slow.next()).toEqual({ value: undefined, done: true });
  });

  it('serves several next() calls made before events arrive in order', async () => {
    const bus = createInMemoryCardEventBus();
    const subscriber = bus.subscribe({ tenants: ['tntsandbox1'] });
    const first = subscriber.next();
    const second = subscriber.next();
    const [a, b] = [cardEvent(), cardEvent()];
    await bus.publish(a!);
    await bus.publish(b!);
    expect((await first).value).toBe(a);
    expect((await second).value).toBe(b);
  });

  it('refuses a filter without tenants', () => {
    const bus = createInMemoryCardEventBus();
    expect(() => bus.subscribe({ tenants: [] })).toThrow(TypeError);
  });
});
