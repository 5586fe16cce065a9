/**
 * The fan-out floor: a bare `ws` server on `/graphql` speaking just enough of graphql-transport-ws
 * (`connection_ack` to any `connection_init`, remembers each `subscribe` id) and an SSE endpoint
 * (`GET /sse`). `POST /publish` with an event body serializes it once per socket's subscription id
 * (as a `next` message) and sends it to every subscriber, and once as an SSE `data:` line to every
 * SSE stream. No auth, no filtering, no durable log, no per-subscriber execution.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { serveStats } from '../lib/child.ts';

const subscriptions = new Map<WebSocket, string>();
const sseStreams = new Set<ServerResponse>();

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(':\n\n');
    sseStreams.add(res);
    res.on('close', () => sseStreams.delete(res));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const event = Buffer.concat(chunks).toString('utf8');
    const data = `{"data":{"cardEvents":${event}}}`;
    const sse = `event: next\ndata: ${data}\n\n`;
    for (const [socket, id] of subscriptions) socket.send(`{"id":"${id}","type":"next","payload":${data}}`);
    for (const stream of sseStreams) stream.write(sse);
    res.writeHead(202).end();
  });
});
const wss = new WebSocketServer({ server, path: '/graphql' });
wss.on('connection', (socket) => {
  socket.on('message', (raw) => {
    const message = JSON.parse(raw.toString());
    if (message.type === 'connection_init') socket.send('{"type":"connection_ack"}');
    else if (message.type === 'subscribe') subscriptions.set(socket, message.id);
  });
  socket.on('close', () => subscriptions.delete(socket));
});
server.listen(0, '127.0.0.1', () => {
  serveStats({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, () => ({
    subscribers: subscriptions.size + sseStreams.size,
  }));
});
