/**
 * Subscriber load for the fan-out measures, in its own process so parsing N deliveries does not
 * compete with the orchestrator's timers. Commands over IPC:
 * - `{type:'connect', mode:'ws'|'sse'|'sse-stream', count, url, token?, query?}`: opens `count`
 *   graphql-ws (graphql-transport-ws: connection_init with `authorization`, one `subscribe`) or SSE
 *   streams (GET with `accept: text/event-stream`: Yoga's SSE on `/graphql` for `sse`, graphql-sse's
 *   distinct-connections mode on `/graphql/stream` for `sse-stream`, the same wire), or graphql-sse
 *   single-connection streams for `sse-single` (`url` is `/graphql/stream`: PUT, GET, one POST); answers `{type:'connected', failed}` once every socket
 *   got `connection_ack` (ws) or response headers (SSE);
 * - `{type:'report'}`: `{type:'report', latenciesMs, perCard}`: for every delivery, receive time
 *   minus the event's `timestamp` (ms), and how many deliveries each `cardId` got; then resets;
 * - `{type:'close'}`: closes everything and exits.
 * Messages are scanned for `"cardId":"…"` and `"timestamp":"…"` rather than JSON-parsed.
 */
import { Agent, get } from 'node:http';
import { request } from 'undici';
import WebSocket from 'ws';

type Connect = {
  type: 'connect';
  mode: 'ws' | 'sse' | 'sse-stream' | 'sse-single';
  count: number;
  url: string;
  token?: string;
  query?: string;
};

let latencies: number[] = [];
let perCard = new Map<string, number>();
const sockets: WebSocket[] = [];
const streams: AbortController[] = [];
let closeReasons = new Map<string, number>();

function field(text: string, name: string, from = 0): string | undefined {
  const marker = `"${name}":"`;
  const start = text.indexOf(marker, from);
  if (start < 0) return undefined;
  const end = text.indexOf('"', start + marker.length);
  return text.slice(start + marker.length, end);
}

function onDelivery(text: string): void {
  const now = Date.now();
  const cardId = field(text, 'cardId');
  const timestamp = field(text, 'timestamp');
  if (!cardId || !timestamp) return;
  latencies.push(now - Date.parse(timestamp));
  perCard.set(cardId, (perCard.get(cardId) ?? 0) + 1);
}

function connectWs(url: string, token: string | undefined, query: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false });
    sockets.push(socket);
    let acked = false;
    socket.on('open', () => {
      socket.send(
        JSON.stringify({
          type: 'connection_init',
          payload: token ? { authorization: `Bearer ${token}` } : {},
        }),
      );
    });
    socket.on('message', (raw) => {
      const text = raw.toString();
      if (!acked) {
        if (text.includes('"connection_ack"')) {
          acked = true;
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
          resolve(true);
        }
        return;
      }
      if (text.includes('"type":"ping"')) socket.send('{"type":"pong"}');
      else onDelivery(text);
    });
    socket.on('close', (code) => {
      closeReasons.set(String(code), (closeReasons.get(String(code)) ?? 0) + 1);
      if (!acked) resolve(false);
    });
    socket.on('error', () => undefined);
  });
}

/**
 * One SSE stream over node:http (an Agent without keep-alive or a socket cap: one socket per
 * stream). node:http's parser hands each chunk to `onData` with less machinery per chunk than
 * undici's body stream, which at 1,000 streams made the load generator, not the server, the larger
 * part of the SSE delivery latency (the bare floor's SSE p99 was 1.5 x its graphql-ws p99).
 */
const sseAgent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

function connectSse(
  url: string,
  token: string | undefined,
  extraHeaders: Record<string, string> = {},
): Promise<boolean> {
  const abort = new AbortController();
  streams.push(abort);
  return new Promise((resolve) => {
    const req = get(
      url,
      {
        agent: sseAgent,
        signal: abort.signal,
        headers: {
          accept: 'text/event-stream',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...extraHeaders,
        },
      },
      (response) => {
        // The 30 s limit is for the response headers; an open stream may be idle for longer.
        req.setTimeout(0);
        if (response.statusCode !== 200) {
          response.resume();
          resolve(false);
          return;
        }
        let buffered = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffered += chunk;
          let end = buffered.indexOf('\n\n');
          while (end >= 0) {
            const message = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            if (message.includes('data:')) onDelivery(message);
            end = buffered.indexOf('\n\n');
          }
        });
        response.on('error', () => undefined);
        resolve(true);
      },
    );
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** A graphql-sse single-connection stream: PUT reserves it, GET opens it, one POST starts `query`. */
async function connectSseSingle(url: string, token: string | undefined, query: string): Promise<boolean> {
  const authorization: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  try {
    const put = await request(url, { method: 'PUT', headers: authorization });
    const streamToken = await put.body.text();
    if (put.statusCode !== 201) return false;
    const headers = { ...authorization, 'x-graphql-event-stream-token': streamToken };
    const opened = connectSse(url, token, headers);
    const post = await request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query, extensions: { operationId: '1' } }),
    });
    await post.body.dump();
    return (await opened) && post.statusCode === 202;
  } catch {
    return false;
  }
}

process.on('message', async (message: Connect | { type: 'report' } | { type: 'close' }) => {
  if (message.type === 'connect') {
    const results: boolean[] = [];
    // Connect in batches so the server's accept queue is never the thing measured.
    for (let i = 0; i < message.count; i += 200) {
      const batch = Array.from({ length: Math.min(200, message.count - i) }, () =>
        message.mode === 'ws'
          ? connectWs(message.url, message.token, message.query!)
          : message.mode === 'sse-single'
            ? connectSseSingle(message.url, message.token, message.query!)
            : connectSse(message.url, message.token),
      );
      results.push(...(await Promise.all(batch)));
    }
    process.send!({ type: 'connected', failed: results.filter((ok) => !ok).length });
  } else if (message.type === 'report') {
    process.send!({
      type: 'report',
      latenciesMs: latencies,
      perCard: Object.fromEntries(perCard),
      closeCodes: Object.fromEntries(closeReasons),
    });
    latencies = [];
    perCard = new Map();
    closeReasons = new Map();
  } else if (message.type === 'close') {
    for (const socket of sockets) socket.terminate();
    for (const stream of streams) stream.abort();
    process.exit(0);
  }
});
process.send!({ type: 'ready' });
