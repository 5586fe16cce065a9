import { describe, expect, it } from 'vitest';
import { SlowSubscriberError } from '../../src/events/card-event-bus.ts';
import {
  type NetworkTokenEvent,
  parseNetworkTokenNotification,
} from '../../src/events/network-token-event.ts';
import { createNetworkTokenEventHub } from '../../src/events/network-token-event-hub.ts';
import { buildNetworkTokenNotification } from '../../src/sandbox/network-tokens.ts';

const ALIAS_A = 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA';
const ALIAS_B = 'tok_sandbox_BBBBBBBBBBBBBBBBBBBBBB';

/** A parsed network token event as the sandbox would notify it (new id each call). */
function tokenEvent(
  options: { vault?: string; panAlias?: string; state?: 'ACTIVE' | 'SUSPENDED' } = {},
): NetworkTokenEvent {
  const { envelope } = buildNetworkTokenNotification({
    vault: options.vault ?? 'tntsandbox1',
    panAlias: options.panAlias ?? ALIAS_A,
    state: options.state ?? 'ACTIVE',
    networkTokenLast4: '4821',
    expiresAt: '2030-12',
    createdAtMs: Date.UTC(2026, 10, 21, 5, 1, 2),
    occurredAtMs: Date.UTC(2026, 10, 21, 5, 1, 3),
  });
  const parsed = parseNetworkTokenNotification(envelope);
  if (!parsed.ok) throw new Error(`test notification refused: ${JSON.stringify(parsed.issues)}`);
  return parsed.event;
}

/** The next result, or `'pending'` when none arrives within `ms`. */
async function nextWithin<T>(iterator: AsyncIterator<T>, ms = 50): Promise<IteratorResult<T> | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  try {
    return await Promise.race([iterator.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('createNetworkTokenEventHub', () => {
  it('delivers the same frozen instance to every subscriber of the tenant, and only to them', async () => {
    const hub = createNetworkTokenEventHub();
    const first = hub.subscribe({ tenants: ['tntsandbox1'] });
    const second = hub.subscribe({ tenants: ['tntsandbox1', 'tntsandbox2'] });
    const otherVault = hub.subscribe({ tenants: ['tntsandbox2'] });
    expect(hub.subscriberCount()).toBe(3);
    expect(hub.subscriberCount('tntsandbox1')).toBe(2);
    expect(hub.subscriberCount('tntsandbox2')).toBe(2);

    const event = tokenEvent();
    expect(await hub.publish(event)).toBe('published');
    const [a, b] = await Promise.all([first.next(), second.next()]);
    expect(a).toEqual({ value: event, done: false });
    expect(a.value).toBe(event);
    expect(b.value).toBe(event);
    expect(Object.isFrozen(a.value)).toBe(true);
    expect(await nextWithin(otherVault)).toBe('pending');
    hub.close();
  });

  it('filters by panAlias', async () => {
    const hub = createNetworkTokenEventHub();
    const onlyB = hub.subscribe({ tenants: ['tntsandbox1'], panAlias: ALIAS_B });
    await hub.publish(tokenEvent({ panAlias: ALIAS_A }));
    const matching = tokenEvent({ panAlias: ALIAS_B, state: 'SUSPENDED' });
    await hub.publish(matching);
    expect(await onlyB.next()).toEqual({ value: matching, done: false });
    expect(await nextWithin(onlyB)).toBe('pending');
    hub.close();
  });

  it('drops a repeated id, forgetting the least recently seen beyond dedupeCapacity', async () => {
    const hub = createNetworkTokenEventHub({ dedupeCapacity: 2 });
    const subscriber = hub.subscribe({ tenants: ['tntsandbox1'] });
    const [one, two, three] = [tokenEvent(), tokenEvent(), tokenEvent()];
    expect(await hub.publish(one)).toBe('published');
    expect(await hub.publish(one)).toBe('duplicate');
    expect(await hub.publish(two)).toBe('published');
    expect(await hub.publish(three)).toBe('published'); // `one` is forgotten now
    expect(await hub.publish(one)).toBe('published');
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await subscriber.next()).value?.id);
    expect(ids).toEqual([one.id, two.id, three.id, one.id]);
    hub.close();
  });

  it('ends a subscriber that falls more than maxBufferedEvents behind with SlowSubscriberError', async () => {
    const hub = createNetworkTokenEventHub({ maxBufferedEvents: 2 });
    const slow = hub.subscribe({ tenants: ['tntsandbox1'] });
    for (let i = 0; i < 3; i++) await hub.publish(tokenEvent());
    expect(hub.subscriberCount('tntsandbox1')).toBe(0);
    const failure = await slow.next().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SlowSubscriberError);
    expect((failure as SlowSubscriberError).code).toBe('subscriber-overflow');
    expect(await slow.next()).toEqual({ value: undefined, done: true });
  });

  it('unsubscribes at once on return() and on abort', async () => {
    const hub = createNetworkTokenEventHub();
    const returned = hub.subscribe({ tenants: ['tntsandbox1'] });
    const waiting = returned.next();
    expect(hub.subscriberCount('tntsandbox1')).toBe(1);
    await returned.return?.();
    expect(hub.subscriberCount('tntsandbox1')).toBe(0);
    expect(await waiting).toEqual({ value: undefined, done: true });

    const controller = new AbortController();
    const aborted = hub.subscribe({ tenants: ['tntsandbox2'] }, controller.signal);
    expect(hub.subscriberCount('tntsandbox2')).toBe(1);
    controller.abort();
    expect(hub.subscriberCount('tntsandbox2')).toBe(0);
    expect(await aborted.next()).toEqual({ value: undefined, done: true });
  });

  it('close() ends every subscription and refuses new ones', async () => {
    const hub = createNetworkTokenEventHub();
    const one = hub.subscribe({ tenants: ['tntsandbox1'] });
    const two = hub.subscribe({ tenants: ['tntsandbox2'], panAlias: ALIAS_A });
    hub.close();
    expect(hub.subscriberCount()).toBe(0);
    expect(await one.next()).toEqual({ value: undefined, done: true });
    expect(await two.next()).toEqual({ value: undefined, done: true });
    const late = hub.subscribe({ tenants: ['tntsandbox1'] });
    expect(hub.subscriberCount()).toBe(0);
    expect(await late.next()).toEqual({ value: undefined, done: true });
  });

  it('refuses a filter without tenants and limits that are not positive integers', () => {
    const hub = createNetworkTokenEventHub();
    expect(() => hub.subscribe({ tenants: [] })).toThrow(TypeError);
    expect(() => createNetworkTokenEventHub({ maxBufferedEvents: 0 })).toThrow(RangeError);
    expect(() => createNetworkTokenEventHub({ dedupeCapacity: 1.5 })).toThrow(RangeError);
  });
});
