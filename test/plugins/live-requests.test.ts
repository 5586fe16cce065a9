import { describe, expect, it } from 'vitest';
import { acceptsEventStream } from '../../src/plugins/live-requests.ts';

/**
 * Which requests src/plugins/live-requests.ts sends to the live-subscription hub: those whose
 * `Accept` Yoga's result processing would answer a subscription of with SSE (its media types read
 * as Yoga reads them, a charset other than UTF-8 skipped, no header as `*\/*`).
 */
describe('acceptsEventStream', () => {
  it.each([
    [null, true],
    ['', true],
    ['text/event-stream', true],
    ['application/json, text/event-stream', true],
    ['text/*', true],
    ['*/*', true],
    ['*/event-stream', true],
    ['TEXT/Event-Stream; charset=UTF-8', true],
    ['application/json', false],
    ['application/graphql-response+json, application/json', false],
    ['multipart/mixed', false],
    ['text/event-stream; charset=latin1', false],
    ['text/html', false],
  ])('%j → %s', (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });
});
