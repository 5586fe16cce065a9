/**
 * graphql-sse's distinct-connections mode on `/graphql/stream` served from the shared executions of
 * the live-subscription hub (src/live/hub.ts, its SSE framing src/server/live-sse.ts): live
 * subscriptions of the real graphql-sse client and of Yoga's SSE on `/graphql` join one execution,
 * each event is encoded once for every stream, the wire is graphql-sse's, and a stream ends at its
 * token's `exp` with the `token-expired` result.
 */
import { createClient } from 'graphql-sse';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LiveHub, LiveSubscription } from '../../src/live/hub.ts';
import { SharedSubscriptions } from '../../src/live/shared-execution.ts';
import { LiveSseStreams } from '../../src/server/live-sse.ts';
import { postNotification, useStack, waitForSubscribers } from '../support/fixtures.ts';
import { notification } from '../support/notifications.ts';
import { openSse, readEvents } from '../support/sse.ts';

const VAULT = 'tntsandbox1';
const CARD_EVENTS = 'subscription { cardEvents { id } }';
const STREAM_PATH = '/graphql/stream';

/** A raw distinct-connections stream on `/graphql/stream` (graphql-sse's wire, byte for byte). */
async function openStream(baseUrl: string, token: string, requestId: string) {
  const controller = new AbortController();
  const response = await request(`${baseUrl}${STREAM_PATH}`, {
    method: 'POST',
    headers: {
      accept: 'text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'x-request-id': requestId,
    },
    body: JSON.stringify({ query: CARD_EVENTS }),
    signal: controller.signal,
  });
  let text = '';
  const ended = (async () => {
    try {
      for await (const chunk of response.body) text += chunk.toString();
    } catch {
      // aborted by the test
    }
  })();
  return { response, text: () => text, ended, close: () => controller.abort() };
}

describe('graphql-sse distinct connections on /graphql/stream share one execution (issue 21 item 1)', () => {
  const t = useStack();
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('three graphql-sse clients, a raw stream and a /graphql SSE stream: one execution, one encoding per event', async () => {
    const starts = vi.spyOn(SharedSubscriptions.prototype, 'start');
    const serves = vi.spyOn(LiveSseStreams.prototype, 'serve');
    const owns = vi.spyOn(LiveHub.prototype, 'owns');
    const token = await t.stack.token({ vaults: [VAULT] });
    const clients = [1, 2, 3].map(() =>
      createClient({
        url: `${t.stack.url}${STREAM_PATH}`,
        singleConnection: false,
        retryAttempts: 0,
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    let raw: Awaited<ReturnType<typeof openStream>> | undefined;
    let viaGraphql: Awaited<ReturnType<typeof openSse>> | undefined;
    try {
      const iterators = clients.map((client) =>
        client.iterate<{ cardEvents: { id: string } }>({ query: CARD_EVENTS }),
      );
      const firsts = iterators.map((iterator) => iterator.next());
      raw = await openStream(t.stack.url, token, 'stream-raw-1');
      viaGraphql = await openSse(t.stack.url, { query: CARD_EVENTS }, token);
      expect(raw.response.statusCode).toBe(200);
      expect(raw.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(raw.response.headers['cache-control']).toBe('no-cache');
      expect(viaGraphql.headers['content-type']).toBe('text/event-stream');
      await waitForSubscribers(t.stack.app, VAULT, 5);

      // One execution for the five streams; every stream is written by the shared streams.
      expect(starts).toHaveBeenCalledTimes(1);
      expect(serves).toHaveBeenCalledTimes(5);
      const streams = serves.mock.contexts[0] as LiveSseStreams;
      expect(serves.mock.contexts.every((context) => context === streams)).toBe(true);
      const hub = owns.mock.contexts[0] as LiveHub;
      expect(hub.executions).toBe(1);
      expect(streams.streams).toBe(5);
      const encodedBefore = streams.eventsEncoded;

      const event = notification();
      expect((await postNotification(t.stack.url, event)).status).toBe(200);
      for (const first of firsts) {
        expect(await first).toEqual({ done: false, value: { data: { cardEvents: { id: event.id } } } });
      }
      expect((await readEvents(viaGraphql, 1)).map((e) => [e.event, JSON.parse(e.data)])).toEqual([
        ['next', { data: { cardEvents: { id: event.id } } }],
      ]);
      const frame = `event: next\ndata: {"data":{"cardEvents":{"id":"${event.id}"}}}\n\n`;
      await expect.poll(() => raw?.text()).toBe(`:\n\n${frame}`);
      // Encoded once for the five streams.
      expect(streams.eventsEncoded - encodedBefore).toBe(1);

      // Stopping on the client ends its member (readEvents closed the /graphql stream already); the
      // last one out ends the execution.
      for (const iterator of iterators) await iterator.return?.();
      await waitForSubscribers(t.stack.app, VAULT, 1);
      raw.close();
      await waitForSubscribers(t.stack.app, VAULT, 0);
      await expect.poll(() => hub.executions).toBe(0);
      expect(streams.streams).toBe(0);
    } finally {
      for (const client of clients) client.dispose();
      raw?.close();
      viaGraphql?.close();
    }
  });

  it('single-connection operations join the same execution: each gets its events under its own id', async () => {
    const starts = vi.spyOn(SharedSubscriptions.prototype, 'start');
    const members = vi.spyOn(LiveSubscription.prototype, 'results');
    const token = await t.stack.token({ vaults: [VAULT] });
    const client = (singleConnection: boolean) =>
      createClient({
        url: `${t.stack.url}${STREAM_PATH}`,
        singleConnection,
        retryAttempts: 0,
        headers: { authorization: `Bearer ${token}` },
      });
    const clients = [client(true), client(true), client(false)];
    try {
      const iterators = clients.map((c) => c.iterate<{ cardEvents: { id: string } }>({ query: CARD_EVENTS }));
      const firsts = iterators.map((iterator) => iterator.next());
      await waitForSubscribers(t.stack.app, VAULT, 3);
      // One execution: the two single-connection operations are members of the distinct stream's.
      expect(starts).toHaveBeenCalledTimes(1);
      expect(members).toHaveBeenCalledTimes(2);
      const event = notification();
      expect((await postNotification(t.stack.url, event)).status).toBe(200);
      for (const first of firsts) {
        expect(await first).toEqual({ done: false, value: { data: { cardEvents: { id: event.id } } } });
      }
      // Stopping an operation (DELETE) leaves the execution; the others stay.
      await iterators[0]!.return?.();
      await waitForSubscribers(t.stack.app, VAULT, 2);
      for (const iterator of iterators.slice(1)) await iterator.return?.();
      await waitForSubscribers(t.stack.app, VAULT, 0);
    } finally {
      for (const c of clients) c.dispose();
    }
  });

  it("ends a single-connection member at its own POST token's exp; the stream and its other operations go on", async () => {
    const long = await t.stack.token({ vaults: [VAULT] });
    const short = await t.stack.token({ vaults: [VAULT], expiresInS: 4 });
    const put = await request(`${t.stack.url}${STREAM_PATH}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${long}` },
    });
    expect(put.statusCode).toBe(201);
    const streamToken = await put.body.text();
    const controller = new AbortController();
    const opened = await request(`${t.stack.url}${STREAM_PATH}`, {
      headers: {
        accept: 'text/event-stream',
        authorization: `Bearer ${long}`,
        'x-graphql-event-stream-token': streamToken,
      },
      signal: controller.signal,
    });
    expect(opened.statusCode).toBe(200);
    let text = '';
    opened.body.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    opened.body.on('error', () => undefined);
    const post = async (bearer: string, id: string, requestId: string) => {
      const response = await request(`${t.stack.url}${STREAM_PATH}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${bearer}`,
          'x-graphql-event-stream-token': streamToken,
          'x-request-id': requestId,
        },
        body: JSON.stringify({ query: CARD_EVENTS, extensions: { operationId: id } }),
      });
      await response.body.dump();
      return response.statusCode;
    };
    try {
      expect(await post(short, 'op-short', 'stream-op-short')).toBe(202);
      expect(await post(long, 'op-long', 'stream-op-long')).toBe(202);
      await waitForSubscribers(t.stack.app, VAULT, 2);
      const expired = {
        errors: [
          {
            message: 'The client token has expired: subscribe again with a fresh token',
            extensions: { code: 'token-expired', requestId: 'stream-op-short' },
          },
        ],
      };
      await expect
        .poll(() => text, { timeout: 8_000 })
        .toContain(
          `event: next\ndata: ${JSON.stringify({ id: 'op-short', payload: expired })}\n\nevent: complete\ndata: {"id":"op-short"}\n\n`,
        );
      await waitForSubscribers(t.stack.app, VAULT, 1);
      const event = notification();
      expect((await postNotification(t.stack.url, event)).status).toBe(200);
      await expect
        .poll(() => text)
        .toContain(
          `event: next\ndata: ${JSON.stringify({ id: 'op-long', payload: { data: { cardEvents: { id: event.id } } } })}\n\n`,
        );
      expect(text).not.toContain(`{"id":"op-short","payload":{"data"`);
    } finally {
      controller.abort();
    }
    await waitForSubscribers(t.stack.app, VAULT, 0);
  });

  it("ends a /graphql/stream member at its token's exp with token-expired and complete; the others go on", async () => {
    const long = await t.stack.token({ vaults: [VAULT] });
    const short = await t.stack.token({ vaults: [VAULT], expiresInS: 4 });
    const staying = await openStream(t.stack.url, long, 'stream-long-1');
    const expiring = await openStream(t.stack.url, short, 'stream-short-1');
    await waitForSubscribers(t.stack.app, VAULT, 2);
    await expiring.ended;
    expect(expiring.text()).toBe(
      `:\n\nevent: next\ndata: ${JSON.stringify({
        errors: [
          {
            message: 'The client token has expired: subscribe again with a fresh token',
            extensions: { code: 'token-expired', requestId: 'stream-short-1' },
          },
        ],
      })}\n\nevent: complete\ndata:\n\n`,
    );
    await waitForSubscribers(t.stack.app, VAULT, 1);
    const event = notification();
    expect((await postNotification(t.stack.url, event)).status).toBe(200);
    await expect
      .poll(() => staying.text())
      .toBe(`:\n\nevent: next\ndata: {"data":{"cardEvents":{"id":"${event.id}"}}}\n\n`);
    staying.close();
    await waitForSubscribers(t.stack.app, VAULT, 0);
  });
});
