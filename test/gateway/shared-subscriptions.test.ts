import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import { notification, type Stack, startStack, TEST_WEBHOOK_SECRET } from '../support/fixtures.ts';

/**
 * graphql-ws subscribers of the same live operation share one execution
 * (the live-subscription hub, src/live/) and still behave as separate subscriptions: each receives every
 * event, one leaving (or a different operation) changes nothing for the others, and the live counts
 * (bus subscribers, the live subscriptions gauge) follow the members.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.stop());

async function notify(): Promise<string> {
  const body = JSON.stringify(notification({ envelope: { timestamp: new Date().toISOString() } }));
  const response = await request(`${stack.url}/webhooks/card-events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'vgs-signature': signWebhookBody(body, TEST_WEBHOOK_SECRET, Math.floor(Date.now() / 1000)),
    },
    body,
  });
  expect(response.statusCode).toBe(200);
  return ((await response.body.json()) as { data: { id: string } }).data.id;
}

/** `cardgraph_graphql_live_subscriptions{transport="graphql-ws"}` now. */
async function liveWs(): Promise<number | undefined> {
  const { values } = await stack.app.metrics.liveSubscriptions.get();
  return values.find((sample) => sample.labels.transport === 'graphql-ws')?.value;
}

/** The event id each subscriber received. */
const idsOf = (steps: IteratorResult<{ data?: Record<string, unknown> | null }>[]) =>
  steps.map((step) => (step.value?.data?.cardEvents as { id: string } | undefined)?.id);

const LIVE = 'subscription { cardEvents { id type } }';
const OTHER = 'subscription { cardEvents { id cardId } }';

describe('shared graphql-ws subscriptions', () => {
  it('delivers every event to each member; one leaving ends only itself', async () => {
    const token = await stack.token({ vaults: ['tntsandbox1'] });
    const clients = Array.from({ length: 4 }, () => stack.wsClient(token));
    const iterators = clients.map((client, i) => client.iterate({ query: i === 3 ? OTHER : LIVE }));
    // iterate() subscribes on the first next().
    const firsts = iterators.map((iterator) => iterator.next());
    await expect.poll(() => stack.app.events!.subscriberCount('tntsandbox1')).toBe(4);
    await expect.poll(liveWs).toBe(4);

    const first = await notify();
    const received = await Promise.all(firsts);
    expect(idsOf(received)).toEqual(Array(4).fill(first));
    expect(received[0]!.value).toEqual({ data: { cardEvents: { id: first, type: 'UPDATED' } } });
    expect(received[3]!.value?.data?.cardEvents).toHaveProperty('cardId');

    await iterators[0]!.return?.();
    await expect.poll(() => stack.app.events!.subscriberCount('tntsandbox1')).toBe(3);
    await expect.poll(liveWs).toBe(3);
    const seconds = iterators.slice(1).map((iterator) => iterator.next());
    const second = await notify();
    const rest = await Promise.all(seconds);
    expect(idsOf(rest)).toEqual(Array(3).fill(second));

    await Promise.all(iterators.slice(1).map((iterator) => iterator.return?.()));
    await expect.poll(() => stack.app.events!.subscriberCount('tntsandbox1')).toBe(0);
    await expect.poll(liveWs).toBe(0);
    await Promise.all(clients.map((client) => client.dispose()));
  });
});
