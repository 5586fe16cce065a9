import {
  CloseCode,
  handleProtocols,
  makeServer,
  type ServerOptions,
  type WebSocket as WsInterface,
} from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../lib/logger.ts';
import { startSweep } from '../lib/sweep.ts';
import { takeSent } from '../lib/ws-sends.ts';

/** Per-socket state kept on the socket itself (no closure or timer per socket). */
const INIT_TIMER = Symbol('cardgraph.graphqlWs.initTimer');
const AWAITING_PONG = Symbol('cardgraph.graphqlWs.awaitingPong');
const CLOSED = Symbol('cardgraph.graphqlWs.closed');
const RECEIVE = Symbol('cardgraph.graphqlWs.receive');

type TrackedSocket = WebSocket & {
  [INIT_TIMER]?: NodeJS.Timeout | undefined;
  [AWAITING_PONG]?: boolean;
  [CLOSED]?: (code?: number, reason?: string) => Promise<void>;
  [RECEIVE]?: (data: string) => Promise<void>;
};

/** graphql-ws's socket interface over one `ws` socket, with methods on the prototype (no closures). */
class SocketAdapter implements WsInterface {
  readonly protocol: string;
  readonly #socket: TrackedSocket;
  constructor(socket: TrackedSocket) {
    this.#socket = socket;
    this.protocol = socket.protocol;
  }
  send(data: string): Promise<void> {
    const socket = this.#socket;
    return new Promise((resolve, reject) => {
      if (socket.readyState !== socket.OPEN) {
        resolve();
        return;
      }
      socket.send(data, (error) => (error ? reject(error) : resolve()));
    });
  }
  close(code: number, reason: string): void {
    this.#socket.close(code, reason);
  }
  onMessage(cb: (data: string) => Promise<void>): void {
    this.#socket[RECEIVE] = cb;
  }
}

/** What {@link serveGraphqlWsSockets} returns. */
export interface GraphqlWsSockets {
  /** `connection_init` arrived on `socket`: its initialisation timer is dropped. */
  initialised(socket: WebSocket): void;
  /** Closes every socket with 1001 (Going away), then the WebSocket server. */
  dispose(): Promise<void>;
}

/**
 * graphql-ws (`makeServer`) on a `ws` server: what `graphql-ws/use/ws`'s `useServer` does, with the
 * per-socket state trimmed for idle subscribers (issue 21: graphql-ws idle subscriber ≤ 8 KB):
 * - one keep-alive timer for all sockets instead of one interval per socket: every `keepAliveMs` each
 *   open socket that was sent nothing since the last round is pinged, a slice of them at a time
 *   (src/lib/sweep.ts: no burst of 10,000 pings in one turn), and one that has not answered the
 *   previous ping (pong) is terminated (useServer's rule: no pong within `keepAliveMs`); a busy
 *   socket's dead peer is found by the back-pressure guard of src/lib/ws-sends.ts;
 * - the `connection_init` wait (`connectionInitTimeoutMs`): a socket without `connection_init` by
 *   then is closed with 4408 (graphql-ws's code and reason), and the timer is dropped at
 *   `connection_init` ({@link GraphqlWsSockets.initialised}) rather than held until the socket closes;
 * - message, pong and close listeners shared by every socket (state on the socket), graphql-ws's
 *   socket interface as one small object per socket.
 * A failing message handler is logged (never its message, which may quote client input) and closes
 * the socket with 1011; an error of the WebSocket server closes every socket with 1011.
 * @param options graphql-ws's server options (its `connectionInitWaitTimeout` is replaced by ours).
 */
export function serveGraphqlWsSockets<P extends Record<string, unknown> | undefined, E>(
  wsServer: WebSocketServer,
  options: ServerOptions<P, E & { socket: WebSocket; request: unknown }>,
  settings: { connectionInitTimeoutMs: number; keepAliveMs?: number; logger: Logger },
): GraphqlWsSockets {
  const { logger } = settings;
  const keepAliveMs = settings.keepAliveMs ?? 12_000;
  const core = makeServer({ ...options, connectionInitWaitTimeout: 0 });
  wsServer.options.handleProtocols = handleProtocols;
  wsServer.once('error', (error) => {
    logger.error({ err: error.message }, 'graphql-ws server error: closing every socket');
    for (const client of wsServer.clients)
      client.close(CloseCode.InternalServerError, 'Internal server error');
  });

  function onMessage(this: TrackedSocket, data: unknown): void {
    const receive = this[RECEIVE];
    if (!receive) return;
    receive(String(data)).catch((error: unknown) => {
      logger.error({ err: (error as Error)?.name }, 'graphql-ws message handling failed');
      this.close(CloseCode.InternalServerError, 'Internal server error');
    });
  }
  function onPong(this: TrackedSocket): void {
    this[AWAITING_PONG] = false;
  }
  function onClose(this: TrackedSocket, code: number, reason: Buffer): void {
    clearTimeout(this[INIT_TIMER]);
    this[INIT_TIMER] = undefined;
    void this[CLOSED]?.(code, String(reason));
  }
  function closeUninitialised(socket: TrackedSocket): void {
    socket[INIT_TIMER] = undefined;
    socket.close(CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
  }

  wsServer.on('connection', (socket: TrackedSocket, request) => {
    socket.on('message', onMessage);
    socket.on('pong', onPong);
    if (settings.connectionInitTimeoutMs > 0 && Number.isFinite(settings.connectionInitTimeoutMs)) {
      socket[INIT_TIMER] = setTimeout(closeUninitialised, settings.connectionInitTimeoutMs, socket);
    }
    socket[CLOSED] = core.opened(new SocketAdapter(socket), { socket, request } as never);
    socket.on('close', onClose);
  });

  const stopKeepAlive =
    keepAliveMs > 0 && Number.isFinite(keepAliveMs)
      ? startSweep(wsServer.clients as Set<TrackedSocket>, keepAliveMs, (client) => {
          if (client.readyState !== client.OPEN) return;
          if (client[AWAITING_PONG]) {
            client.terminate();
            return;
          }
          // Messages went out since the last visit: no ping while traffic flows.
          if (takeSent(client)) return;
          client[AWAITING_PONG] = true;
          client.ping();
        })
      : undefined;

  return {
    initialised(socket) {
      const tracked = socket as TrackedSocket;
      clearTimeout(tracked[INIT_TIMER]);
      tracked[INIT_TIMER] = undefined;
    },
    async dispose() {
      stopKeepAlive?.();
      for (const client of wsServer.clients) client.close(1001, 'Going away');
      wsServer.removeAllListeners();
      await new Promise<void>((resolve, reject) => {
        wsServer.close((error) => (error ? reject(error) : resolve()));
      });
    },
  };
}
