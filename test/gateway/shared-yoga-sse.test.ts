/**
 * Yoga's own SSE on `/graphql` (the lean path off, `GRAPHQL_LEAN_HTTP=off`) shares the executions of
 * the live-subscription hub (src/live/hub.ts, marked by src/plugins/live-requests.ts) with
 * graphql-ws: one execution and one redaction per event for every member, the hub's gauge
 * accounting, its request ids and its end at each member's token `exp`; a resuming subscription
 * (`after`) still runs alone, and a refused token is answered as before and logged once.
 */
import type { ExecutionResult } from 'graphql';
import { createClient } from 'graphql-sse';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LiveHub } from '../../src/live/hub.ts';
import { SharedSubscriptions } from '../../src/live/shared-execution.ts';
import {
  CARD_EVENTS_SUBSCRIPTION,
  LOG_START_CURSOR,
  postNotification,
  useStack,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { notification } from '../support/notifications.ts';
import { expectRefusedSseToken, openSse, readEvents } from '../support/sse.ts';

const VAULT = 'tntsandbox1';
const CARD_EVENTS = 'subscription { cardEvents { id } }';

describe('Yoga SSE with the lean path off shares the hub executions', () => {
  const t = useStack({ GRAPHQL_LEAN_HTTP: 'off' });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** `cardgraph_graphql_live_subscriptions{transport}` of the stack now. */
  async function gauge(transport: 'sse' | 'graphql-ws'): Promise<number> {
    const { values } = await t.stack.app.metrics.liveSubscriptions.get();
    return values.find((value) => value.labels.transport === transport)?.value ?? 0;
  }

  it('three graphql-sse clients on /graphql and two graphql-ws clients: one execution, one result per event for all', async () => {
    const starts = vi.spyOn(SharedSubscriptions.prototype, 'start');
    const events = vi.spyOn(LiveHub.prototype, 'event');
    const sseBefore = await gauge('sse');
    const wsBefore = await gauge('graphql-ws');
    const token = await t.stack.token({ vaults: [VAULT] });
    const sseClients = [1, 2, 3].map(() =>
      createClient({
        url: `${t.stack.url}/graphql`,
        singleConnection: false,
        retryAttempts: 0,
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    const wsClients = [1, 2].map(() => t.stack.wsClient(token));
    try {
      const iterators = [...sseClients, ...wsClients].map((client) =>
        client.iterate<{ cardEvents: { id: string } }>({ query: CARD_EVENTS }),
      );
      // Both clients subscribe on the first next().
      const firsts = iterators.map((iterator) => iterator.next());
      await waitForSubscribers(t.stack.app, VAULT, 5);
      await expect.poll(() => gauge('sse')).toBe(sseBefore + 3);
      await expect.poll(() => gauge('graphql-ws')).toBe(wsBefore + 2);
      expect(starts).toHaveBeenCalledTimes(1);

      const event = notification();
      expect((await postNotification(t.stack.url, event)).status).toBe(200);
      for (const first of firsts) {
        expect(await first).toEqual({ done: false, value: { data: { cardEvents: { id: event.id } } } });
      }
      // One execution for the five members: the hub received one result object for the event and
      // made each member's event of it.
      expect(events).toHaveBeenCalledTimes(5);
      const results = new Set(events.mock.calls.map(([result]) => result));
      expect(results.size).toBe(1);
      const hub = events.mock.contexts[0] as LiveHub;
      expect(events.mock.contexts.every((context) => context === hub)).toBe(true);
      expect(hub.executions).toBe(1);

      // Each member leaves alone; the last one out ends the execution and the gauges are back.
      await iterators[0]!.return?.();
      await waitForSubscribers(t.stack.app, VAULT, 4);
      await expect.poll(() => gauge('sse')).toBe(sseBefore + 2);
      const seconds = iterators.slice(1).map((iterator) => iterator.next());
      const second = notification();
      expect((await postNotification(t.stack.url, second)).status).toBe(200);
      for (const next of seconds) {
        expect(await next).toEqual({ done: false, value: { data: { cardEvents: { id: second.id } } } });
      }
      for (const iterator of iterators.slice(1)) await iterator.return?.();
      await waitForSubscribers(t.stack.app, VAULT, 0);
      await expect.poll(() => hub.executions).toBe(0);
      await expect.poll(() => gauge('sse')).toBe(sseBefore);
      await expect.poll(() => gauge('graphql-ws')).toBe(wsBefore);
      expect(starts).toHaveBeenCalledTimes(1);
    } finally {
      for (const client of sseClients) client.dispose();
      for (const client of wsClients) await client.dispose();
    }
  });

  it('ends a member at its own token exp with the token-expired result under its request id; the others go on', async () => {
    const long = await t.stack.token({ vaults: [VAULT] });
    const short = await t.stack.token({ vaults: [VAULT], expiresInS: 4 });
    const first = await openSse(t.stack.url, { query: CARD_EVENTS }, long);
    const controller = new AbortController();
    const joined = await request(`${t.stack.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${short}`,
        'x-request-id': 'yoga-sse-short-1',
      },
      body: JSON.stringify({ query: CARD_EVENTS }),
      signal: controller.signal,
    });
    try {
      expect([first.status, joined.statusCode]).toEqual([200, 200]);
      // Yoga's SSE processor frames the member.
      expect(joined.headers['content-type']).toBe('text/event-stream');
      await waitForSubscribers(t.stack.app, VAULT, 2);

      const before = notification();
      expect((await postNotification(t.stack.url, before)).status).toBe(200);
      const text = await joined.body.text();
      const expired = {
        errors: [
          {
            message: 'The client token has expired: subscribe again with a fresh token',
            extensions: { code: 'token-expired', requestId: 'yoga-sse-short-1' },
          },
        ],
      };
      // Keep-alive comments (`:`) come as Yoga's processor sends them; the events are exact.
      expect(text.startsWith(':\n\n')).toBe(true);
      expect(text.replace(/^:\n\n/gm, '')).toBe(
        [
          `event: next\ndata: ${JSON.stringify({ data: { cardEvents: { id: before.id } } })}\n\n`,
          `event: next\ndata: ${JSON.stringify(expired)}\n\n`,
          'event: complete\ndata:\n\n',
        ].join(''),
      );
      await waitForSubscribers(t.stack.app, VAULT, 1);

      const after = notification();
      expect((await postNotification(t.stack.url, after)).status).toBe(200);
      expect((await readEvents(first, 2)).map((e) => JSON.parse(e.data))).toEqual([
        { data: { cardEvents: { id: before.id } } },
        { data: { cardEvents: { id: after.id } } },
      ]);
    } finally {
      controller.abort();
      first.close();
    }
    await waitForSubscribers(t.stack.app, VAULT, 0);
  });

  it('runs a resuming subscription (after) alone, replaying from its cursor', async () => {
    const starts = vi.spyOn(SharedSubscriptions.prototype, 'start');
    const token = await t.stack.token({ vaults: [VAULT] });
    const earlier = notification();
    expect((await postNotification(t.stack.url, earlier)).status).toBe(200);
    const resumed = await openSse(
      t.stack.url,
      { query: CARD_EVENTS_SUBSCRIPTION, variables: { after: LOG_START_CURSOR, vaultId: VAULT } },
      token,
    );
    try {
      expect(resumed.status).toBe(200);
      const live = notification();
      await waitForSubscribers(t.stack.app, VAULT, 1);
      expect((await postNotification(t.stack.url, live)).status).toBe(200);
      const ids: string[] = [];
      for await (const event of resumed.events) {
        const result = JSON.parse(event.data) as ExecutionResult<{ cardEvents: { id: string } }>;
        ids.push(result.data!.cardEvents.id);
        if (ids.includes(live.id)) break;
      }
      expect(ids).toContain(earlier.id);
      expect(ids.indexOf(earlier.id)).toBeLessThan(ids.indexOf(live.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(starts).not.toHaveBeenCalled();
    } finally {
      resumed.close();
    }
    await waitForSubscribers(t.stack.app, VAULT, 0);
  });

  it('stops a subscription asking for JSON only, which Yoga answers 406', async () => {
    const sseBefore = await gauge('sse');
    const token = await t.stack.token({ vaults: [VAULT] });
    const response = await request(`${t.stack.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ query: CARD_EVENTS }),
    });
    expect(response.statusCode).toBe(406);
    expect(response.headers.accept).toBe('text/event-stream');
    expect(await response.body.text()).toBe('');
    await waitForSubscribers(t.stack.app, VAULT, 0);
    await expect.poll(() => gauge('sse')).toBe(sseBefore);
  });

  it('answers a refused token with 401 and its code, logging the refusal once', async () => {
    await expectRefusedSseToken(t.stack.url, t.stack.logFile, CARD_EVENTS, 'yoga-sse-bad-token');
  });
});

describe('the lean path streams its other SSE answers from the hub too', () => {
  const t = useStack();
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a subscription accepting SSE among other types, or with an Origin, joins the execution of the SSE road', async () => {
    const starts = vi.spyOn(SharedSubscriptions.prototype, 'start');
    const events = vi.spyOn(LiveHub.prototype, 'event');
    const token = await t.stack.token({ vaults: [VAULT] });
    const sseRoad = await openSse(t.stack.url, { query: CARD_EVENTS }, token);
    const controllers = [new AbortController(), new AbortController()];
    const others = await Promise.all(
      [
        { accept: 'application/json, text/event-stream' },
        { accept: 'text/event-stream', origin: 'https://elsewhere.example' },
      ].map((headers, i) =>
        request(`${t.stack.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
          body: JSON.stringify({ query: CARD_EVENTS }),
          signal: controllers[i]!.signal,
        }),
      ),
    );
    try {
      expect([sseRoad.status, ...others.map((other) => other.statusCode)]).toEqual([200, 200, 200]);
      expect(others.map((other) => other.headers['content-type'])).toEqual([
        'text/event-stream',
        'text/event-stream',
      ]);
      await waitForSubscribers(t.stack.app, VAULT, 3);
      expect(starts).toHaveBeenCalledTimes(1);

      const event = notification();
      expect((await postNotification(t.stack.url, event)).status).toBe(200);
      const frame = `event: next\ndata: ${JSON.stringify({ data: { cardEvents: { id: event.id } } })}\n\n`;
      for (const other of others) {
        let text = '';
        for await (const chunk of other.body) {
          text += chunk.toString();
          if (text.includes(frame)) break;
        }
        expect(text.replace(/^:\n\n/gm, '')).toBe(frame);
      }
      expect((await readEvents(sseRoad, 1)).map((e) => JSON.parse(e.data))).toEqual([
        { data: { cardEvents: { id: event.id } } },
      ]);
      expect(events).toHaveBeenCalledTimes(3);
      expect(new Set(events.mock.calls.map(([result]) => result)).size).toBe(1);
    } finally {
      for (const controller of controllers) controller.abort();
      sseRoad.close();
    }
    await waitForSubscribers(t.stack.app, VAULT, 0);
  });
});
