import { type ExecutionResult, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { SlowSubscriberError } from '../../src/events/card-event-bus.ts';
import { isShareable, SharedSubscriptions, shareKeyOf } from '../../src/live/shared-execution.ts';
import { schema } from '../../src/schema/index.ts';

/**
 * Shared graphql-ws executions (src/live/shared-execution.ts): every member receives the same
 * result objects, a slow member is ended alone with SlowSubscriberError, the last member out returns
 * the shared source, and only live subscriptions are shared.
 */

/** A source whose results the test pushes; records whether it was returned. */
function source() {
  const waiting: ((step: IteratorResult<ExecutionResult>) => void)[] = [];
  const queued: IteratorResult<ExecutionResult>[] = [];
  const state = { returned: false };
  const iterator: AsyncIterator<ExecutionResult> = {
    next: () =>
      queued.length > 0 ? Promise.resolve(queued.shift()!) : new Promise((resolve) => waiting.push(resolve)),
    return: () => {
      state.returned = true;
      return Promise.resolve({ value: undefined, done: true });
    },
  };
  const push = (step: IteratorResult<ExecutionResult>) => {
    const resolve = waiting.shift();
    if (resolve) resolve(step);
    else queued.push(step);
  };
  return { iterator, push, state };
}

const operation = {
  schema,
  document: parse('subscription { cardEvents { id } }'),
  operationName: null,
};

describe('shared graphql-ws subscriptions', () => {
  it('hands every member the same result, ends a slow member alone, returns the source after the last', async () => {
    const sharing = new SharedSubscriptions(2);
    const { iterator, push, state } = source();
    const group = sharing.start('k', iterator, operation);
    const left: string[] = [];
    const fast = group.join(() => left.push('fast'));
    const slow = group.join(() => left.push('slow'));
    expect(sharing.get('k')).toBe(group);

    const results = [{ data: { n: 1 } }, { data: { n: 2 } }, { data: { n: 3 } }];
    for (const result of results) {
      const next = fast.next();
      push({ value: result, done: false });
      expect((await next).value).toBe(result);
    }
    // The slow member never read: two results queued, the third ended it.
    expect(left).toEqual(['slow']);
    await expect(slow.next()).rejects.toBeInstanceOf(SlowSubscriberError);
    expect(await slow.next()).toEqual({ value: undefined, done: true });
    expect(group.members.size).toBe(1);
    expect(state.returned).toBe(false);

    expect(await fast.return!()).toEqual({ value: undefined, done: true });
    expect(left).toEqual(['slow', 'fast']);
    expect(state.returned).toBe(true);
    expect(sharing.get('k')).toBeUndefined();
  });

  it('finishes every member when the source ends, and fails every member when it throws', async () => {
    const sharing = new SharedSubscriptions();
    const ending = source();
    const group = sharing.start('a', ending.iterator, operation);
    const members = [group.join(), group.join()];
    ending.push({ value: undefined, done: true });
    for (const member of members) expect(await member.next()).toEqual({ value: undefined, done: true });
    expect(sharing.size).toBe(0);

    const failure = new Error('source failed');
    const failing = sharing.start('b', { next: () => Promise.reject(failure) }, operation);
    const member = failing.join();
    await expect(member.next()).rejects.toBe(failure);
    expect(sharing.size).toBe(0);
  });

  it('hands results to a delivering member as they come; a throwing delivery fails that member alone', async () => {
    const sharing = new SharedSubscriptions();
    const { iterator, push } = source();
    const group = sharing.start('d', iterator, operation);
    const delivered: ExecutionResult[] = [];
    const direct = group.join(undefined, (result) => delivered.push(result));
    const broken = group.join(undefined, () => {
      throw new Error('socket gone');
    });
    const queued = group.join();
    const ending = direct.next();
    const result = { data: { n: 1 } };
    push({ value: result, done: false });
    expect((await queued.next()).value).toBe(result);
    expect(delivered).toEqual([result]);
    expect(delivered[0]).toBe(result);
    await expect(broken.next()).rejects.toThrow('socket gone');
    expect(group.members.size).toBe(2);
    push({ value: undefined, done: true });
    // A delivering member yields nothing: its iterator only ends.
    expect(await ending).toEqual({ value: undefined, done: true });
  });

  it('shares live subscriptions only, keyed by operation, variables, vaults, scopes and document', () => {
    expect(isShareable(parse('subscription { cardEvents { id } }'), null)).toBe(true);
    expect(isShareable(parse('subscription S($a: String) { cardEvents(after: $a) { id } }'), 'S')).toBe(
      false,
    );
    expect(isShareable(parse('query { __typename }'), null)).toBe(false);
    const viewer = { vaults: ['b', 'a'], scopes: ['cards:read'] };
    const key = shareKeyOf('subscription { cardEvents { id } }', null, {}, viewer);
    expect(
      shareKeyOf('subscription { cardEvents { id } }', null, null, { ...viewer, vaults: ['a', 'b'] }),
    ).toBe(key);
    expect(shareKeyOf('subscription { cardEvents { id } }', null, {}, { ...viewer, vaults: ['a'] })).not.toBe(
      key,
    );
    expect(shareKeyOf('subscription { cardEvents { id } }', null, {}, { ...viewer, scopes: [] })).not.toBe(
      key,
    );
    expect(shareKeyOf('subscription { cardEvents { id } }', null, { v: 1 }, viewer)).not.toBe(key);
    expect(shareKeyOf('subscription { cardEvents { type } }', null, {}, viewer)).not.toBe(key);
  });
});
