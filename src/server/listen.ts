import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts `server` on `host:port` (0 picks a free port) and resolves with the address clients can
 * reach, e.g. `http://127.0.0.1:4000` (a wildcard bind address becomes `127.0.0.1`).
 * @throws the listen error (e.g. `EADDRINUSE`).
 */
export function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(`http://${reachable(host)}:${(server.address() as AddressInfo).port}`);
    });
  });
}

/** Closes `server` and every connection it still holds; resolves once it is closed. */
export function closeNow(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return closed;
}

/** A host clients can reach for a bind address (`0.0.0.0` → `127.0.0.1`). */
function reachable(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
