import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { expect } from 'vitest';
import { requestGraphql } from './fixtures.ts';

/** One Server-Sent Event: its `event` name (`message` when absent) and its joined `data` lines. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/** An open `text/event-stream` answer of POST /graphql. */
export interface SseStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The events in order, until the server ends the stream (or {@link SseStream.close}). */
  events: AsyncIterableIterator<ServerSentEvent>;
  /** Destroys the connection. */
  close(): void;
}

/**
 * POSTs a GraphQL operation to `${baseUrl}/graphql` with `accept: text/event-stream` (Yoga's SSE
 * transport, as a browser or mobile client without graphql-ws uses it) and parses the stream into
 * events; comment lines (keep-alive pings) are skipped.
 */
export async function openSse(
  baseUrl: string,
  operation: { query: string; variables?: Record<string, unknown> },
  token?: string,
): Promise<SseStream> {
  const response = await requestGraphql(baseUrl, operation, token, { accept: 'text/event-stream' });
  async function* parse(): AsyncGenerator<ServerSentEvent> {
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += chunk.toString();
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (data.length > 0 || event !== 'message') yield { event, data: data.join('\n') };
      }
    }
  }
  return {
    status: response.statusCode,
    headers: response.headers,
    events: parse(),
    close: () => response.body.destroy(),
  };
}

/** Reads events until the stream ends or `count` events arrived, failing after `timeoutMs`. */
export async function readEvents(stream: SseStream, count = Number.POSITIVE_INFINITY, timeoutMs = 5_000) {
  const events: ServerSentEvent[] = [];
  const timer = setTimeout(() => stream.close(), timeoutMs);
  try {
    for await (const event of stream.events) {
      events.push(event);
      if (events.length >= count) break;
    }
  } catch {
    // destroyed by the timer: return what arrived
  } finally {
    clearTimeout(timer);
  }
  return events;
}

/**
 * Posts `query` to `${baseUrl}/graphql` as an SSE request with a token that is not a JWT, and checks
 * the refusal: 401, code `invalid-token`, the request id in the answer, and one `request refused`
 * line in `logFile` (the refusal is logged once, whatever the road).
 */
export async function expectRefusedSseToken(
  baseUrl: string,
  logFile: string,
  query: string,
  requestId: string,
): Promise<void> {
  const response = await request(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: 'Bearer not-a-jwt',
      'x-request-id': requestId,
    },
    body: JSON.stringify({ query }),
  });
  const body = await response.body.text();
  expect(response.statusCode).toBe(401);
  expect(body).toContain('"code":"invalid-token"');
  expect(body).toContain(`"requestId":"${requestId}"`);
  const refusals = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('request refused: bad client token'));
  expect(refusals).toHaveLength(1);
}
