import type { ExecutionResult } from 'graphql';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CARD_EVENT_TYPES } from '../../src/events/card-event.ts';
import {
  CARD_EVENTS_SUBSCRIPTION,
  type CardEventSubscriber,
  cardNotificationBurst,
  duplicatesOf,
  graphqlWsClient,
  LOG_START_CURSOR,
  leftover,
  notification,
  postBurst,
  postNotification,
  readHistory,
  type Stack,
  startStack,
  subscribeCardEvents,
  testToken,
  WAIT,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { startGatewayProcess } from '../support/processes.ts';

/**
 * Tenant isolation and the graphql-ws limits of live card events: an event reaches only the
 * subscribers whose token names its vault; a socket closes with 4403 when its token expires, refuses
 * operations past WS_MAX_SUBSCRIPTIONS_PER_SOCKET and closes with 1009 on a message past
 * WS_MAX_PAYLOAD_BYTES; SIGTERM completes subscriptions with 1001 and exits 0.
 */

const VAULT_1 = 'tntsandbox1';
const VAULT_2 = 'tntsandbox2';
const MAX_SUBSCRIPTIONS_PER_SOCKET = 3;
const MAX_PAYLOAD_BYTES = 2_048;

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so a failing mix can be replayed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('tenant isolation and graphql-ws limits (in-process gateway)', () => {
  let stack: Stack;
  const subscribers: CardEventSubscriber[] = [];

  beforeAll(async () => {
    stack = await startStack({
      WS_MAX_SUBSCRIPTIONS_PER_SOCKET: String(MAX_SUBSCRIPTIONS_PER_SOCKET),
      WS_MAX_PAYLOAD_BYTES: String(MAX_PAYLOAD_BYTES),
    });
  });
  afterEach(async () => {
    await Promise.all(subscribers.splice(0).map((subscriber) => subscriber.close()));
  });
  afterAll(() => stack?.stop());

  function subscribe(token: string, variables: Record<string, string> = {}): CardEventSubscriber {
    const subscriber = subscribeCardEvents(stack.url, token, variables);
    subscribers.push(subscriber);
    return subscriber;
  }

  it('delivers 1,000 mixed notifications only to the subscribers of their vault; a token naming both vaults receives all', async () => {
    const [token1, token2, tokenBoth] = await Promise.all([
      stack.token({ vaults: [VAULT_1] }),
      stack.token({ vaults: [VAULT_2] }),
      stack.token({ vaults: [VAULT_1, VAULT_2] }),
    ]);
    const vault1 = subscribe(token1);
    const vault2 = subscribe(token2);
    const both = subscribe(tokenBoth);
    await waitForSubscribers(stack.app, VAULT_1, 2);
    await waitForSubscribers(stack.app, VAULT_2, 2);

    const random = seededRandom(20261121);
    const mix = cardNotificationBurst(1_000, () => ({
      tenant: random() < 0.5 ? VAULT_1 : VAULT_2,
      event: CARD_EVENT_TYPES[Math.floor(random() * CARD_EVENT_TYPES.length)]!,
    }));
    const outcome = await postBurst(stack.url, mix, 20);
    expect(outcome.acknowledged.size).toBe(mix.length);
    // Barriers: each subscriber gets events in log order, so once it has its vault's barrier, every
    // notification of the mix (all appended before) has either reached it or never will.
    const barrier1 = notification({ tenant: VAULT_1 });
    const barrier2 = notification({ tenant: VAULT_2 });
    for (const barrier of [barrier1, barrier2]) {
      expect((await postNotification(stack.url, barrier)).status).toBe(200);
    }

    const idsOf = (tenant: string) => mix.filter((body) => body.tenant === tenant).map((body) => body.id);
    const expected1 = [...idsOf(VAULT_1), barrier1.id];
    const expected2 = [...idsOf(VAULT_2), barrier2.id];
    expect(expected1.length).toBeGreaterThan(400);
    expect(expected2.length).toBeGreaterThan(400);
    await Promise.all([
      vault1.waitForIds([barrier1.id]),
      vault2.waitForIds([barrier2.id]),
      both.waitForIds([barrier1.id, barrier2.id]),
    ]);
    expect(sorted(vault1.ids())).toEqual(sorted(expected1));
    expect(sorted(vault2.ids())).toEqual(sorted(expected2));
    expect(sorted(both.ids())).toEqual(sorted([...expected1, ...expected2]));
    for (const subscriber of [vault1, vault2, both]) {
      expect(duplicatesOf(subscriber.ids())).toEqual([]);
      expect(subscriber.errors).toEqual([]);
    }
    expect(vault1.events.every((event) => event.tenant === VAULT_1)).toBe(true);
    expect(vault2.events.every((event) => event.tenant === VAULT_2)).toBe(true);

    // The history connection is scoped the same way.
    const mixIds = new Set(mix.map((body) => body.id));
    const history2 = await readHistory(stack.url, token2, {}, 500);
    expect(history2.every((event) => event.tenant === VAULT_2)).toBe(true);
    expect(sorted(history2.filter((event) => mixIds.has(event.id)).map((event) => event.id))).toEqual(
      sorted(idsOf(VAULT_2)),
    );
  });

  it('closes the graphql-ws socket with 4403 when the client token expires', async () => {
    const token = await stack.token({ vaults: [VAULT_1], expiresInS: 4 });
    const subscriber = subscribe(token);
    await waitForSubscribers(stack.app, VAULT_1, 1);
    const before = notification();
    expect((await postNotification(stack.url, before)).status).toBe(200);
    await subscriber.waitForIds([before.id]);
    expect(await subscriber.waitForClose(8_000)).toBe(4403);
    await waitForSubscribers(stack.app, VAULT_1, 0);
    expect(subscriber.ids()).toEqual([before.id]);
  });

  it(`refuses an operation past WS_MAX_SUBSCRIPTIONS_PER_SOCKET (${MAX_SUBSCRIPTIONS_PER_SOCKET}) with too-many-subscriptions and keeps the others`, async () => {
    const token = await stack.token({ vaults: [VAULT_1] });
    const client = graphqlWsClient(stack.url, token);
    const received: string[][] = Array.from({ length: MAX_SUBSCRIPTIONS_PER_SOCKET }, () => []);
    const unsubscribe = received.map((ids) =>
      client.subscribe<{ cardEvents: { id: string } }>(
        { query: CARD_EVENTS_SUBSCRIPTION, variables: {} },
        {
          next: (result) => void (result.data && ids.push(result.data.cardEvents.id)),
          error: () => undefined,
          complete: () => undefined,
        },
      ),
    );
    try {
      await waitForSubscribers(stack.app, VAULT_1, MAX_SUBSCRIPTIONS_PER_SOCKET);
      const refusal = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: CARD_EVENTS_SUBSCRIPTION, variables: {} },
          { next: () => resolve('unexpected result'), error: resolve, complete: () => resolve('completed') },
        );
      });
      expect(refusal).toEqual([
        {
          message: `At most ${MAX_SUBSCRIPTIONS_PER_SOCKET} operations per connection`,
          extensions: { code: 'too-many-subscriptions' },
        },
      ]);
      expect(stack.app.events!.subscriberCount(VAULT_1)).toBe(MAX_SUBSCRIPTIONS_PER_SOCKET);

      const event = notification();
      expect((await postNotification(stack.url, event)).status).toBe(200);
      await vi.waitFor(() => expect(received.filter((ids) => ids.length === 0)).toEqual([]), WAIT);
      expect(received).toEqual(received.map(() => [event.id]));

      // Completing one frees its slot on the socket.
      unsubscribe[0]!();
      await waitForSubscribers(stack.app, VAULT_1, MAX_SUBSCRIPTIONS_PER_SOCKET - 1);
      const replacement: string[] = [];
      unsubscribe.push(
        client.subscribe<{ cardEvents: { id: string } }>(
          { query: CARD_EVENTS_SUBSCRIPTION, variables: {} },
          {
            next: (result) => void (result.data && replacement.push(result.data.cardEvents.id)),
            error: () => undefined,
            complete: () => undefined,
          },
        ),
      );
      await waitForSubscribers(stack.app, VAULT_1, MAX_SUBSCRIPTIONS_PER_SOCKET);
      const next = notification();
      expect((await postNotification(stack.url, next)).status).toBe(200);
      await expect.poll(() => replacement.length, WAIT).toBeGreaterThan(0);
      expect(replacement).toEqual([next.id]);
    } finally {
      for (const stop of unsubscribe) stop();
      await client.dispose();
    }
  });

  it(`closes the socket with 1009 on a message over WS_MAX_PAYLOAD_BYTES (${MAX_PAYLOAD_BYTES})`, async () => {
    const token = await stack.token({ vaults: [VAULT_1] });
    const oversized = subscribe(token, { cardId: `CRD${'x'.repeat(MAX_PAYLOAD_BYTES)}` });
    expect(await oversized.waitForClose(5_000)).toBe(1009);
    expect(oversized.events).toEqual([]);
    expect(stack.app.events!.subscriberCount(VAULT_1)).toBe(0);
  });
});

describe('graceful shutdown of the gateway process (node src/dev.ts, sandbox and gateway)', () => {
  it('SIGTERM completes open graphql-ws subscriptions with 1001, ends SSE subscriptions and exits 0', async () => {
    const gateway = leftover(await startGatewayProcess(), (process) => process.stop());
    const token = await testToken({ vaults: [VAULT_1, VAULT_2] });
    const overWs = [
      subscribeCardEvents(gateway.url, token, { after: LOG_START_CURSOR }),
      subscribeCardEvents(gateway.url, token, { after: LOG_START_CURSOR, vaultId: VAULT_2 }),
    ];
    const sse = await request(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ query: CARD_EVENTS_SUBSCRIPTION, variables: { after: LOG_START_CURSOR } }),
    });
    expect(sse.statusCode).toBe(200);
    let sseText = '';
    const sseEnded = (async () => {
      for await (const chunk of sse.body) sseText += chunk.toString();
    })();

    const events = [notification({ tenant: VAULT_1 }), notification({ tenant: VAULT_2 })];
    for (const event of events) expect((await postNotification(gateway.url, event)).status).toBe(200);
    await overWs[0]!.waitForIds(events.map((event) => event.id));
    await overWs[1]!.waitForIds([events[1]!.id]);
    await vi.waitFor(() => {
      for (const event of events) expect(sseText).toContain(event.id);
    }, WAIT);

    const exit = gateway.kill('SIGTERM');
    expect(await Promise.all(overWs.map((subscriber) => subscriber.waitForClose(10_000)))).toEqual([
      1001, 1001,
    ]);
    // The SSE response completes normally (a reset connection would reject here).
    await sseEnded;
    expect(await exit).toEqual({ code: 0, signal: null });
    expect(overWs[0]!.ids()).toEqual(events.map((event) => event.id));
    expect(overWs[1]!.ids()).toEqual([events[1]!.id]);
    const sseResults = sseText
      .split('\n')
      .filter((line) => line.startsWith('data:') && line.length > 'data:'.length)
      .map((line) => JSON.parse(line.slice(5)) as ExecutionResult<{ cardEvents: { id: string } }>)
      .filter((result) => result.data);
    expect(sseResults.map((result) => result.data!.cardEvents.id)).toEqual(events.map((event) => event.id));
    expect(gateway.output()).toContain('cardgraph gateway stopped');
  });
});
