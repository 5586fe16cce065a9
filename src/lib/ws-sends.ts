import { type WebSocket, WebSocket as WebSocketClass } from 'ws';

/**
 * Close code of a graphql-ws socket whose client does not read fast enough: 1013 "Try Again Later"
 * (RFC 6455 §7.4.1, IANA registry), which graphql-ws clients retry; a client resumes with its last
 * `CardEvent.cursor`, so nothing is lost.
 */
export const SLOW_CONSUMER_CLOSE_CODE = 1013;

/** Close reason sent with {@link SLOW_CONSUMER_CLOSE_CODE}. */
export const SLOW_CONSUMER_CLOSE_REASON = 'Slow consumer: too much unsent data';

/** How long a slow consumer's socket may take to complete the closing handshake before it is cut (ms). */
const SLOW_CONSUMER_TERMINATE_MS = 1_000;

/** Per-socket state of the guarded sends: a slow consumer is being closed. */
interface GuardState {
  closing: boolean;
}

/**
 * One guarded send (see {@link guardSends}): sends `data` with `send` unless the socket's unsent data
 * exceed `maxBufferedBytes` (then closes it as a slow consumer). Nothing is kept between sends: the
 * message is whole when it comes (a live event's frame is built per member by string concatenation
 * around the payload serialized once, src/live/hub.ts).
 */
function guardedSend(
  socket: WebSocket,
  state: GuardState,
  send: (this: WebSocket, data: unknown, cb?: (error?: Error) => void) => void,
  maxBufferedBytes: number,
  onSlowConsumer: ((socket: WebSocket) => void) | undefined,
  data: unknown,
  optionsOrCb?: unknown,
  cb?: (error?: Error) => void,
): void {
  const callback = (typeof optionsOrCb === 'function' ? optionsOrCb : cb) as
    | ((error?: Error) => void)
    | undefined;
  if (state.closing) {
    callback?.();
    return;
  }
  if (socket.bufferedAmount > maxBufferedBytes) {
    state.closing = true;
    onSlowConsumer?.(socket);
    socket.close(SLOW_CONSUMER_CLOSE_CODE, SLOW_CONSUMER_CLOSE_REASON);
    setTimeout(() => socket.terminate(), SLOW_CONSUMER_TERMINATE_MS).unref();
    callback?.();
    return;
  }
  send.call(socket, data, callback);
}

/**
 * Wraps `socket.send` of a graphql-ws socket with back-pressure: when more than `maxBufferedBytes`
 * are already queued for the socket (its client reads too slowly), the message is dropped and the
 * socket closed with {@link SLOW_CONSUMER_CLOSE_CODE} (cut after 1 s if the close frame cannot get
 * through), so one slow client never holds memory for, or delays, the others.
 * {@link guardedWebSocketClass} does the same with no closure per socket.
 */
export function guardSends(socket: WebSocket, maxBufferedBytes: number, onSlowConsumer?: () => void): void {
  const send = socket.send as (this: WebSocket, data: unknown, cb?: (error?: Error) => void) => void;
  const state: GuardState = { closing: false };
  const onSlow = onSlowConsumer ? () => onSlowConsumer() : undefined;
  socket.send = ((data: unknown, optionsOrCb?: unknown, cb?: (error?: Error) => void) =>
    guardedSend(socket, state, send, maxBufferedBytes, onSlow, data, optionsOrCb, cb)) as WebSocket['send'];
}

/**
 * A `ws` WebSocket class (the `WebSocket` option of `WebSocketServer`) whose sockets send as
 * {@link guardSends} makes them send, and pass every close reason through `closeReason` (text that
 * leaves the process), with the guard on the prototype: nothing per socket but one field (issue 21,
 * graphql-ws idle subscriber ≤ 8 KB).
 * @param onSlowConsumer called with the socket before it is closed as a slow consumer.
 */
export function guardedWebSocketClass(
  maxBufferedBytes: number,
  onSlowConsumer: (socket: WebSocket) => void,
  closeReason: (reason: string) => string,
): typeof WebSocket {
  // ws's own send, called on the socket (no closure per send).
  const superSend = WebSocketClass.prototype.send as (
    this: WebSocket,
    data: unknown,
    cb?: (error?: Error) => void,
  ) => void;
  class GuardedWebSocket extends WebSocketClass {
    /** A slow consumer being closed (the {@link GuardState} of this socket). */
    closing = false;
    /** Something was sent since {@link takeSent} last looked (the keep-alive skips busy sockets). */
    sent = false;
    override send(data: unknown, optionsOrCb?: unknown, cb?: (error?: Error) => void): void {
      this.sent = true;
      guardedSend(this, this, superSend, maxBufferedBytes, onSlowConsumer, data, optionsOrCb, cb);
    }
    override close(code?: number, reason?: string | Buffer): void {
      super.close(code, reason === undefined ? undefined : closeReason(String(reason)));
    }
  }
  return GuardedWebSocket as unknown as typeof WebSocket;
}

/**
 * Whether anything was sent on `socket` (a {@link guardedWebSocketClass} socket) since the last
 * call, and clears the mark: a keep-alive need not ping a socket whose traffic flows (a dead peer
 * of a busy socket is found by the back-pressure guard once its unsent data pile up).
 */
export function takeSent(socket: WebSocket): boolean {
  const guarded = socket as WebSocket & { sent?: boolean };
  const sent = guarded.sent === true;
  if (sent) guarded.sent = false;
  return sent;
}
