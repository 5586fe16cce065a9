/**
 * SSE subscriptions on `/graphql` served from shared executions (issue 21 item 1,
 * src/live/hub.ts): members of one execution each end at their own token's `exp`, keep
 * their own request id and access line, are counted one by one, and a refused token is answered
 * as before and logged once.
 */
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { postNotification, useStack, waitForSubscribers } from '../support/fixtures.ts';
import { notification } from '../support/notifications.ts';
import { expectRefusedSseToken, openSse, readEvents } from '../support/sse.ts';

const VAULT = 'tntsandbox1';
const CARD_EVENTS = 'subscription { cardEvents { id } }';

/** `cardgraph_graphql_live_subscriptions{transport="sse"}` of the stack. */
async function liveSse(t: ReturnType<typeof useStack>): Promise<number> {
  const { values } = await t.stack.app.metrics.liveSubscriptions.get();
  return values.find((value) => value.labels.transport === 'sse')?.value ?? 0;
}

describe('SSE subscriptions share one execution (issue 21 item 1)', () => {
  const t = useStack();

  it('delivers every event to each member; a member ends alone at its own token exp, the others go on', async () => {
    const long = await t.stack.token({ vaults: [VAULT] });
    const short = await t.stack.token({ vaults: [VAULT], expiresInS: 4 });
    const first = await openSse(t.stack.url, { query: CARD_EVENTS }, long);
    const joined = await openSse(t.stack.url, { query: CARD_EVENTS }, short);
    // The same operation over GET (EventSource-style), with its own request id.
    const controller = new AbortController();
    const viaGet = await request(`${t.stack.url}/graphql?query=${encodeURIComponent(CARD_EVENTS)}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${long}`, 'x-request-id': 'sse-get-1' },
      signal: controller.signal,
    });
    expect([first.status, joined.status, viaGet.statusCode]).toEqual([200, 200, 200]);
    expect(viaGet.headers['content-type']).toBe('text/event-stream');
    expect(viaGet.headers['x-request-id']).toBe('sse-get-1');
    await waitForSubscribers(t.stack.app, VAULT, 3);
    expect(await liveSse(t)).toBe(3);

    const before = notification();
    expect((await postNotification(t.stack.url, before)).status).toBe(200);
    // The short token's member: the event, then its own token-expired result, then complete.
    const joinedEvents = await readEvents(joined, Number.POSITIVE_INFINITY, 8_000);
    expect(joinedEvents.map((e) => e.event)).toEqual(['next', 'next', 'complete']);
    expect(JSON.parse(joinedEvents[0]!.data)).toEqual({ data: { cardEvents: { id: before.id } } });
    expect(JSON.parse(joinedEvents[1]!.data)).toEqual({
      errors: [
        {
          message: 'The client token has expired: subscribe again with a fresh token',
          extensions: { code: 'token-expired', requestId: expect.any(String) },
        },
      ],
    });
    await waitForSubscribers(t.stack.app, VAULT, 2);
    await expect.poll(() => liveSse(t)).toBe(2);

    // The others still receive, from the same execution.
    const after = notification();
    expect((await postNotification(t.stack.url, after)).status).toBe(200);
    const firstEvents = await readEvents(first, 2);
    expect(firstEvents.map((e) => JSON.parse(e.data))).toEqual([
      { data: { cardEvents: { id: before.id } } },
      { data: { cardEvents: { id: after.id } } },
    ]);
    let text = '';
    for await (const chunk of viaGet.body) {
      text += chunk.toString();
      if (text.includes(after.id)) break;
    }
    expect(text.startsWith(':\n\n')).toBe(true);
    expect(text).toContain(`event: next\ndata: {"data":{"cardEvents":{"id":"${before.id}"}}}\n\n`);
    controller.abort();
    first.close();
    await waitForSubscribers(t.stack.app, VAULT, 0);
    await expect.poll(() => liveSse(t)).toBe(0);
    // Each member has its own access line with the operation's route.
    const lines = readFileSync(t.stack.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"reqId":"sse-get-1"') && line.includes('"route":"/graphql"'));
    expect(lines).toHaveLength(1);
  });

  it('answers a refused token with 401 token code, logging the refusal once', async () => {
    await expectRefusedSseToken(t.stack.url, t.stack.logFile, CARD_EVENTS, 'sse-bad-token');
  });
});
