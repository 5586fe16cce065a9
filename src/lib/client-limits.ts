import type { Server, ServerOptions } from 'node:http';
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import type { Config } from '../config.ts';
import type { Logger } from './logger.ts';
import { errorsAnswer, refusal } from './transport-errors.ts';

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

/** The 429 answered to a connection over the per-address limit (written on the socket, before HTTP). */
const TOO_MANY_CONNECTIONS = errorsAnswer([
  refusal('too-many-connections', 'Too many open connections from this client address'),
]);

/** The client address a trusted balancer named for a connection (see {@link acceptProxyProtocol}). */
const CLIENT_ADDRESS = Symbol('cardgraph.clientAddress');
type ProxiedSocket = Socket & { [CLIENT_ADDRESS]?: string };

/**
 * The address a connection is counted under: the client a trusted balancer named in the connection's
 * PROXY protocol header, else the peer (`socket.remoteAddress`; `unknown` once it is gone).
 */
export function clientAddressOf(socket: Socket): string {
  return (socket as ProxiedSocket)[CLIENT_ADDRESS] ?? socket.remoteAddress ?? 'unknown';
}

/**
 * `TRUSTED_PROXIES` entries (addresses and CIDR ranges, validated by src/config.ts) as a matcher.
 * IPv4-mapped IPv6 peers (`::ffff:10.0.0.5`, how a dual-stack listener sees IPv4) match their IPv4 entries.
 */
export function trustedProxyMatcher(entries: readonly string[]): (address: string | undefined) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const type = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (address) => {
    if (!address) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped) return list.check(mapped, 'ipv4') || list.check(address, 'ipv6');
    return isIPv4(address) ? list.check(address, 'ipv4') : isIPv6(address) && list.check(address, 'ipv6');
  };
}

/** Longest PROXY protocol header read (bytes): v1 lines are at most 107, v2 headers carry TLVs. */
const MAX_PROXY_HEADER_BYTES = 4096;
const PROXY_V2_SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');
const PROXY_V1_PREFIX = Buffer.from('PROXY ');

/** What the start of a connection says: more bytes needed, no valid header, or the header's client. */
export type ProxyHeaderReading =
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string }
  | {
      kind: 'header';
      /** The client's address; absent for `LOCAL` (v2) and `UNKNOWN` (v1): the balancer's own connection, e.g. a health check. */
      client?: string;
      /** Header length (bytes); what follows is the client's first HTTP bytes. */
      length: number;
    };

/**
 * Reads a PROXY protocol header (HAProxy's specification, "The PROXY protocol", versions 1 and 2) at
 * the start of `data`: v1 `PROXY TCP4|TCP6|UNKNOWN <src> <dst> <sport> <dport>\r\n`, v2 the 12-byte
 * signature, version 2 with command LOCAL (0x20) or PROXY (0x21), then family, length and addresses
 * (TLVs skipped). Addresses are checked to be of the family the header names.
 */
export function readProxyHeader(data: Buffer): ProxyHeaderReading {
  const v2Prefix = Math.min(data.length, PROXY_V2_SIGNATURE.length);
  if (v2Prefix > 0 && data.subarray(0, v2Prefix).equals(PROXY_V2_SIGNATURE.subarray(0, v2Prefix))) {
    if (data.length < 16) return { kind: 'incomplete' };
    const versionCommand = data[12]!;
    const family = data[13]!;
    const length = 16 + data.readUInt16BE(14);
    if (length > MAX_PROXY_HEADER_BYTES) return { kind: 'invalid', reason: 'v2 header too long' };
    if (data.length < length) return { kind: 'incomplete' };
    if (versionCommand === 0x20) return { kind: 'header', length };
    if (versionCommand !== 0x21) return { kind: 'invalid', reason: 'v2 version or command unknown' };
    // TCP over IPv4: src(4) dst(4) sport(2) dport(2); TCP over IPv6: src(16) dst(16) ports.
    if (family === 0x11 && length >= 16 + 12) {
      return { kind: 'header', client: [...data.subarray(16, 20)].join('.'), length };
    }
    if (family === 0x21 && length >= 16 + 36) {
      const groups: string[] = [];
      for (let i = 0; i < 8; i++) groups.push(data.readUInt16BE(16 + i * 2).toString(16));
      return { kind: 'header', client: groups.join(':'), length };
    }
    if (family === 0x00) return { kind: 'header', length };
    return { kind: 'invalid', reason: 'v2 family not TCP over IPv4 or IPv6' };
  }
  const v1Prefix = Math.min(data.length, PROXY_V1_PREFIX.length);
  if (v1Prefix > 0 && data.subarray(0, v1Prefix).equals(PROXY_V1_PREFIX.subarray(0, v1Prefix))) {
    const end = data.indexOf('\r\n');
    if (end === -1)
      return data.length > 107 ? { kind: 'invalid', reason: 'v1 line too long' } : { kind: 'incomplete' };
    if (end + 2 > 107) return { kind: 'invalid', reason: 'v1 line too long' };
    const parts = data.subarray(0, end).toString('latin1').split(' ');
    if (parts[1] === 'UNKNOWN') return { kind: 'header', length: end + 2 };
    const [, protocol, source, destination, sourcePort, destinationPort] = parts;
    const familyOk = protocol === 'TCP4' ? isIPv4 : protocol === 'TCP6' ? isIPv6 : undefined;
    const portOk = (port: string | undefined) =>
      port !== undefined && /^\d{1,5}$/.test(port) && Number(port) <= 65_535;
    if (
      parts.length !== 6 ||
      !familyOk ||
      !familyOk(source!) ||
      !familyOk(destination!) ||
      !portOk(sourcePort) ||
      !portOk(destinationPort)
    ) {
      return { kind: 'invalid', reason: 'v1 line malformed' };
    }
    return { kind: 'header', client: source!, length: end + 2 };
  }
  return { kind: 'invalid', reason: 'no PROXY protocol header' };
}

/**
 * Makes connections from a trusted balancer (`trustedProxies`, `TRUSTED_PROXIES`) start with a PROXY
 * protocol header: `server` hands such a connection to HTTP (and to
 * {@link limitConnectionsPerAddress}) only once the header is read, with the client it names as the
 * connection's address ({@link clientAddressOf}); the bytes after it are HTTP as usual. A trusted
 * peer's connection without a valid header within `timeoutMs` is closed unanswered (a balancer that
 * passes a client's bytes through unchanged would otherwise let the client name any address).
 * Connections from any other peer are untouched: a header they send is not read as one (HTTP answers
 * 400), and their `X-Forwarded-For` never counts.
 *
 * Why PROXY protocol and not `X-Forwarded-For` (issue 20, item 12): the cap counts connections when
 * they are accepted, before any request; a header is read per request, and a balancer may send
 * requests of several clients over one server connection. HAProxy sends the PROXY header once per
 * server connection and keeps such a connection private to the client connection it was opened for,
 * so each gateway connection belongs to exactly one client. HAProxy's health checks send it too
 * (LOCAL, or the balancer's own address): they count under the balancer's address.
 */
export function acceptProxyProtocol(
  server: Server,
  options: { trustedProxies: readonly string[]; timeoutMs: number; logger: Logger },
): void {
  const trusted = trustedProxyMatcher(options.trustedProxies);
  if (options.trustedProxies.length === 0) return;
  // net.Server announces each accepted socket with emit('connection'); HTTP's own listener parses
  // from the socket as soon as it runs, so the header must be taken off before any listener sees it.
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: unknown[]) => boolean;
  const patched = (event: string | symbol, ...args: unknown[]): boolean => {
    const socket = args[0] as ProxiedSocket | undefined;
    if (event !== 'connection' || !socket || !trusted(socket.remoteAddress)) return emit(event, ...args);
    void takeProxyHeader(socket, options.timeoutMs).then(
      (client) => {
        if (client !== undefined) socket[CLIENT_ADDRESS] = client;
        if (socket.destroyed) return;
        emit('connection', socket);
        // HTTP reads what was put back, and what follows, only from a flowing socket.
        socket.resume();
      },
      (error: Error) => {
        options.logger.warn(
          { peer: socket.remoteAddress, reason: error.message },
          'connection from a trusted proxy closed: no valid PROXY protocol header',
        );
        socket.destroy();
      },
    );
    return true;
  };
  server.emit = patched as Server['emit'];
}

/**
 * Reads the PROXY protocol header off `socket` and puts back what follows it.
 * @returns the client address it names (undefined for LOCAL/UNKNOWN).
 * @throws Error (reason as message) on an invalid header, a timeout, or a connection closed first.
 */
function takeProxyHeader(socket: Socket, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    const finish = (error: Error | undefined, client?: string, rest?: Buffer) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onEnd);
      if (error) return reject(error);
      socket.pause();
      if (rest && rest.length > 0) socket.unshift(rest);
      resolve(client);
    };
    const onData = (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const reading = readProxyHeader(buffered);
      if (reading.kind === 'incomplete') return;
      if (reading.kind === 'invalid') return finish(new Error(reading.reason));
      finish(undefined, reading.client, buffered.subarray(reading.length));
    };
    const onEnd = () => finish(new Error('closed before the header'));
    const timer = setTimeout(() => finish(new Error('no header within the headers timeout')), timeoutMs);
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', onEnd);
  });
}

/**
 * Caps the open connections of one client address ({@link clientAddressOf}): a connection past
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
    const address = clientAddressOf(socket);
    const count = (open.get(address) ?? 0) + 1;
    if (count > maxPerAddress) {
      logger.warn(
        { address, open: count - 1, limit: maxPerAddress },
        'connection refused: too many from one address',
      );
      socket.end(
        `HTTP/1.1 ${TOO_MANY_CONNECTIONS.status} ${TOO_MANY_CONNECTIONS.statusText}\r\n` +
          `content-type: ${TOO_MANY_CONNECTIONS.headers['content-type']}\r\n` +
          `content-length: ${Buffer.byteLength(TOO_MANY_CONNECTIONS.body)}\r\n` +
          'retry-after: 1\r\n' +
          'connection: close\r\n\r\n' +
          TOO_MANY_CONNECTIONS.body,
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
