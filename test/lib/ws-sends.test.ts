import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { guardedWebSocketClass, guardSends, SLOW_CONSUMER_CLOSE_CODE } from '../../src/lib/ws-sends.ts';

/**
 * graphql-ws socket sends: back-pressure that closes a client that does not read (1013) without
 * delaying the others.
 */
let server: WebSocketServer | undefined;
const clients: WebSocket[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.terminate();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

type Guard = 'guardSends' | 'guardedWebSocketClass';

/**
 * A WebSocket server whose sockets send through `guard`: {@link guardSends} on each socket, or
 * sockets of {@link guardedWebSocketClass} (close reasons upper-cased, to see them pass through).
 */
async function listen(maxBufferedBytes: number, onSlow: () => void, guard: Guard = 'guardSends') {
  server = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    ...(guard === 'guardedWebSocketClass'
      ? {
          WebSocket: guardedWebSocketClass(
            maxBufferedBytes,
            () => onSlow(),
            (reason) => reason.toUpperCase(),
          ),
        }
      : {}),
  });
  await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
  const sockets: WebSocket[] = [];
  server.on('connection', (socket) => {
    if (guard === 'guardSends') guardSends(socket, maxBufferedBytes, onSlow);
    sockets.push(socket);
  });
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

describe.each<Guard>(['guardSends', 'guardedWebSocketClass'])('back-pressure of %s', (guard) => {
  it('closes a client that stops reading with 1013 while the others receive every message', async () => {
    let slowConsumers = 0;
    const { url, sockets } = await listen(1 << 20, () => slowConsumers++, guard);
    const fast = new WebSocket(url);
    const slow = new WebSocket(url);
    clients.push(fast, slow);
    let fastReceived = 0;
    fast.on('message', () => fastReceived++);
    let slowSocket: { pause(): void; resume(): void } | undefined;
    slow.on('upgrade', (response) => {
      // Stop reading: the kernel buffers fill, then the server's queue for this socket grows.
      slowSocket = response.socket;
      slowSocket.pause();
    });
    const slowClosed = new Promise<number>((resolve) => slow.once('close', (code) => resolve(code)));
    await Promise.all([once(fast, 'open'), once(slow, 'open')]);
    await expect.poll(() => sockets.length).toBe(2);
    const message = 'x'.repeat(256 * 1024);
    const total = 200;
    for (let i = 1; i <= total; i++) {
      for (const socket of sockets) socket.send(message);
      // The fast client keeps up; each message reaches it before the next is sent.
      await expect.poll(() => fastReceived, { timeout: 5_000, interval: 1 }).toBe(i);
    }
    expect(slowConsumers).toBe(1);
    const closingSocket = sockets.find((socket) => socket.readyState !== WebSocket.OPEN);
    expect(closingSocket).toBeDefined();
    expect(sockets.filter((socket) => socket.readyState === WebSocket.OPEN)).toHaveLength(1);
    // Reading again, the slow client finds its connection closed (cut off after 1 s if the close
    // frame could not get through the megabytes it never read).
    slowSocket!.resume();
    await expect(slowClosed).resolves.toBeGreaterThan(1000);
    expect([SLOW_CONSUMER_CLOSE_CODE, 1006]).toContain(await slowClosed);
  });
});

describe('guardedWebSocketClass', () => {
  it('passes every close reason through closeReason', async () => {
    const { url, sockets } = await listen(1 << 20, () => undefined, 'guardedWebSocketClass');
    const client = new WebSocket(url);
    clients.push(client);
    const closed = new Promise<[number, string]>((resolve) =>
      client.once('close', (code, reason) => resolve([code, String(reason)])),
    );
    await once(client, 'open');
    await expect.poll(() => sockets.length).toBe(1);
    sockets[0]!.close(4400, 'bad request: card 4000');
    expect(await closed).toEqual([4400, 'BAD REQUEST: CARD 4000']);
  });
});

function once(socket: WebSocket, event: 'open') {
  return new Promise((resolve) => socket.once(event, resolve));
}
