import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.ts';
import type { Logger } from './logger.ts';

/**
 * Limits of the gateway's HTTP server against slow and hoarding clients (issue 10, class 8). One
 * server carries GraphQL over HTTP and SSE, the graphql-ws upgrades and the webhook receiver, so the
 * limits hold for all of them.
 */

/**
 * node:http options bounding how long a client may take to send a request: `headersTimeout` for the
 * headers, `requestTimeout` for the whole request (headers and body; a body trickled one byte at a
 * time is cut there), each answered 408 with the connection closed; `keepAliveTimeout` for idle
 * keep-alive connections. Node checks the first two every `connectionsCheckingInterval`, set to a
 * fifth of the shorter one (50 ms to 1 s) so a limit holds within 20 %.
 * Long-lived answers (SSE, WebSocket) are not affected: the limits end when the request is read.
 */
export function httpServerTimeouts(http: Config['http']): ServerOptions {
  const shorter = Math.min(http.headersTimeoutMs, http.requestTimeoutMs);
  return {
    headersTimeout: http.headersTimeoutMs,
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(shorter / 5))),
  };
}

/** JSON body of the 429 answered to a connection over the per-address limit. */
const TOO_MANY_CONNECTIONS_BODY = JSON.stringify({
  errors: [
    {
      message: 'Too many open connections from this client address',
      extensions: { code: 'too-many-connections' },
    },
  ],
});

/**
 * Caps the open connections of one client address (`socket.remoteAddress`): a connection past
 * `maxPerAddress` is answered `429 Too Many Requests` (code `too-many-connections`, `Connection:
 * close`) before its request is read, and closed; the count drops as connections close. HTTP
 * keep-alive, SSE and WebSocket connections all count. `maxPerAddress` 0 disables the cap.
 * @returns the number of open connections per address (for tests and health checks).
 */
export function limitConnectionsPerAddress(
  server: Server,
  maxPerAddress: number,
  logger: Logger,
): ReadonlyMap<string, number> {
  const open = new Map<string, number>();
  if (maxPerAddress <= 0) return open;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = (open.get(address) ?? 0) + 1;
    if (count > maxPerAddress) {
      logger.warn(
        { address, open: count - 1, limit: maxPerAddress },
        'connection refused: too many from one address',
      );
      socket.end(
        'HTTP/1.1 429 Too Many Requests\r\n' +
          'content-type: application/json; charset=utf-8\r\n' +
          `content-length: ${Buffer.byteLength(TOO_MANY_CONNECTIONS_BODY)}\r\n` +
          'retry-after: 1\r\n' +
          'connection: close\r\n\r\n' +
          TOO_MANY_CONNECTIONS_BODY,
      );
      // Nothing the client sends on it is read.
      socket.on('data', () => undefined);
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
  return open;
}
