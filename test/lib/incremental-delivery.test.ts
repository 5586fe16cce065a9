import { GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { errorsOfPart, usesIncrementalDelivery } from '../../src/lib/incremental-delivery.ts';
import { isShareable } from '../../src/live/shared-execution.ts';

describe('usesIncrementalDelivery', () => {
  it('finds @defer and @stream anywhere in a document, whatever their `if`', () => {
    expect(usesIncrementalDelivery(parse('{ viewer { subject } }'))).toBe(false);
    expect(usesIncrementalDelivery(parse('{ viewer { subject @include(if: true) } }'))).toBe(false);
    expect(usesIncrementalDelivery(parse('{ viewer { ... @defer(if: false) { subject } } }'))).toBe(true);
    expect(
      usesIncrementalDelivery(parse('{ viewer { ...F } } fragment F on Viewer { ... @defer { subject } }')),
    ).toBe(true);
    expect(usesIncrementalDelivery(parse('{ list @stream(initialCount: 1) { id } }'))).toBe(true);
  });

  it('keeps live subscriptions using them out of shared executions', () => {
    expect(isShareable(parse('subscription { cardEvents { id } }'), undefined)).toBe(true);
    expect(isShareable(parse('subscription { cardEvents { id ... @defer { cardId } } }'), undefined)).toBe(
      false,
    );
  });
});

describe('errorsOfPart', () => {
  it('answers the errors of a part and of each of its incremental entries, in order', () => {
    const [a, b, c] = ['a', 'b', 'c'].map((message) => new GraphQLError(message));
    expect(errorsOfPart({ errors: [a!], incremental: [{ errors: [b!] }, {}, { errors: [c!] }] })).toEqual([
      a,
      b,
      c,
    ]);
    expect(errorsOfPart({})).toEqual([]);
  });
});
