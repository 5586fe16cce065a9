import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CARD_EVENTS_SUBSCRIPTION,
  notification,
  postNotification,
  type Stack,
  startStack,
  WAIT,
  waitForSubscribers,
} from '../support/fixtures.ts';

/**
 * The per-socket subscription cap of graphql-ws under pipelining (issue 20 item 3): subscribe
 * messages written to one raw socket in a single TCP write reach the server in one read, so every
 * `onSubscribe` starts before the first one's `await` resolves. The cap must hold exactly.
 */

const CAP = 3;
const VAULT = 'tntsandbox1';

/** One client frame (RFC 6455 §5.2): FIN, text opcode, masked payload. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const mask = randomBytes(4);
  const length = payload.length;
  const head =
    length < 126
      ? Buffer.from([0x81, 0x80 | length])
      : Buffer.from([0x81, 0x80 | 126, length >> 8, length & 0xff]);
  const masked = Buffer.alloc(length);
  for (let i = 0; i < length; i++) masked[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([head, mask, masked]);
}

/** A graphql-transport-ws connection over a raw TCP socket: frames written as given, messages parsed. */
interface RawGraphqlWs {
  /** Writes every message in one `write` (one TCP segment on loopback). */
  sendAll(messages: Record<string, unknown>[]): void;
  /** Every server message so far, parsed. */
  messages: { id?: string; type: string; payload?: unknown }[];
  /** Close code once the server closed, else undefined. */
  closeCode?: number;
  close(): void;
}

/** Opens `/graphql` on `baseUrl` with the graphql-transport-ws subprotocol and completes `connection_init`. */
async function openRawGraphqlWs(baseUrl: string, token: string): Promise<RawGraphqlWs> {
  const { hostname, port } = new URL(baseUrl);
  const socket: Socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const raw: RawGraphqlWs = {
    messages: [],
    sendAll: (messages) => socket.write(Buffer.concat(messages.map((m) => textFrame(JSON.stringify(m))))),
    close: () => socket.destroy(),
  };
  let buffer = Buffer.alloc(0);
  let upgraded = false;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (!upgraded) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.subarray(0, end).toString('latin1');
      if (!head.startsWith('HTTP/1.1 101')) throw new Error(`no upgrade: ${head}`);
      upgraded = true;
      buffer = buffer.subarray(end + 4);
    }
    // Server frames are unmasked; graphql-ws sends text frames and a close frame.
    while (buffer.length >= 2) {
      let length = buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (buffer.length < offset + length) return;
      const opcode = buffer[0]! & 0x0f;
      const payload = buffer.subarray(offset, offset + length);
      buffer = buffer.subarray(offset + length);
      if (opcode === 0x1) raw.messages.push(JSON.parse(payload.toString('utf8')));
      else if (opcode === 0x8) raw.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
    }
  });
  socket.write(
    [
      'GET /graphql HTTP/1.1',
      `Host: ${hostname}:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Protocol: graphql-transport-ws',
      '',
      '',
    ].join('\r\n'),
  );
  await vi.waitFor(() => expect(upgraded).toBe(true), WAIT);
  raw.sendAll([{ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }]);
  await vi.waitFor(() => expect(raw.messages).toContainEqual({ type: 'connection_ack' }), WAIT);
  return raw;
}

const subscribe = (id: string, query = CARD_EVENTS_SUBSCRIPTION) => ({
  id,
  type: 'subscribe',
  payload: { query, variables: {} },
});

describe('graphql-ws per-socket subscription cap under pipelining', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ WS_MAX_SUBSCRIPTIONS_PER_SOCKET: String(CAP) });
  });
  afterAll(() => stack?.stop());

  it(`runs exactly ${CAP} of 12 subscribe messages written at once and refuses the rest with too-many-subscriptions`, async () => {
    const token = await stack.token({ vaults: [VAULT] });
    const ws = await openRawGraphqlWs(stack.url, token);
    try {
      const ids = Array.from({ length: 12 }, (_, i) => `op${i}`);
      ws.sendAll(ids.map((id) => subscribe(id)));
      await vi.waitFor(
        () => expect(ws.messages.filter((m) => m.type === 'error')).toHaveLength(12 - CAP),
        WAIT,
      );
      await waitForSubscribers(stack.app, VAULT, CAP);
      const refused = ws.messages.filter((m) => m.type === 'error');
      expect(refused.map((m) => m.id)).toEqual(ids.slice(CAP));
      for (const m of refused) {
        expect(m.payload).toEqual([
          {
            message: `At most ${CAP} operations per connection`,
            extensions: { code: 'too-many-subscriptions' },
          },
        ]);
      }

      // Exactly CAP receive the next event; the socket stays open.
      const event = notification();
      expect((await postNotification(stack.url, event)).status).toBe(200);
      await vi.waitFor(() => expect(ws.messages.filter((m) => m.type === 'next')).toHaveLength(CAP), WAIT);
      expect(
        ws.messages
          .filter((m) => m.type === 'next')
          .map((m) => m.id)
          .sort(),
      ).toEqual(ids.slice(0, CAP));
      expect(stack.app.events!.subscriberCount(VAULT)).toBe(CAP);
      expect(ws.closeCode).toBeUndefined();
    } finally {
      ws.close();
    }
    await waitForSubscribers(stack.app, VAULT, 0);
  });

  it('frees a place on complete and on a refused operation, and counts it again before any await', async () => {
    const token = await stack.token({ vaults: [VAULT] });
    const ws = await openRawGraphqlWs(stack.url, token);
    try {
      ws.sendAll([subscribe('a'), subscribe('b'), subscribe('bad', 'subscription { nope }')]);
      await vi.waitFor(() => expect(ws.messages.filter((m) => m.type === 'error')).toHaveLength(1), WAIT);
      expect(ws.messages.find((m) => m.type === 'error')).toMatchObject({
        id: 'bad',
        payload: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
      });
      await waitForSubscribers(stack.app, VAULT, 2);
      // The refused operation's place is free: one more fits, the next pipelined one does not.
      ws.sendAll([subscribe('c'), subscribe('d')]);
      await vi.waitFor(() => expect(ws.messages.filter((m) => m.type === 'error')).toHaveLength(2), WAIT);
      expect(ws.messages.filter((m) => m.type === 'error').at(-1)).toMatchObject({
        id: 'd',
        payload: [{ extensions: { code: 'too-many-subscriptions' } }],
      });
      await waitForSubscribers(stack.app, VAULT, CAP);
      // Completing one frees its place; two pipelined again: one runs, one is refused.
      ws.sendAll([{ id: 'a', type: 'complete' }]);
      await waitForSubscribers(stack.app, VAULT, CAP - 1);
      ws.sendAll([subscribe('e'), subscribe('f')]);
      await vi.waitFor(() => expect(ws.messages.filter((m) => m.type === 'error')).toHaveLength(3), WAIT);
      expect(ws.messages.filter((m) => m.type === 'error').at(-1)).toMatchObject({
        id: 'f',
        payload: [{ extensions: { code: 'too-many-subscriptions' } }],
      });
      await waitForSubscribers(stack.app, VAULT, CAP);
    } finally {
      ws.close();
    }
    await waitForSubscribers(stack.app, VAULT, 0);
  });
});
