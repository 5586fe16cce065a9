import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { HAPROXY_SOURCE_ADDRESS, type HaproxyProcess, startHaproxy } from '../support/haproxy.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/processes.ts';

/**
 * Issue 20, item 12: the per-address connection cap behind a load balancer. A real gateway process
 * behind the real HAProxy with deploy/haproxy.cfg (PROXY protocol v2 to the replicas); both of the
 * configuration's server lines name this one gateway, so every connection lands on it whatever
 * leastconn picks. Clients are told apart by loopback source addresses (all of 127.0.0.0/8 is local
 * on Linux).
 */

/** The cap of each replica (HTTP_MAX_CONNECTIONS_PER_ADDRESS): small, so the test opens few sockets. */
const CAP = 4;

/** How a WebSocket opening ended: open, or the HTTP status it was refused with. */
type Opening = { ws: WebSocket; status: 101 | number };

/** Opens a graphql-ws WebSocket to `baseUrl` from `localAddress`; resolves once it is open or refused. */
function openWebSocket(baseUrl: string, localAddress: string): Promise<Opening> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', {
      localAddress,
    });
    ws.once('open', () => resolve({ ws, status: 101 }));
    ws.once('unexpected-response', (_request, response) => {
      response.resume();
      resolve({ ws, status: response.statusCode ?? 0 });
    });
    ws.once('error', reject);
  });
}

/** A raw TCP connection to `baseUrl` from `localAddress`, recording what it receives. */
async function rawConnection(baseUrl: string, localAddress: string) {
  const { hostname, port } = new URL(baseUrl);
  const socket: Socket = connect({ host: hostname, port: Number(port), localAddress });
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, received: () => received, closed: () => closed };
}

const HEALTH_REQUEST = (extra = '') => `GET /health HTTP/1.1\r\nhost: x\r\n${extra}\r\n`;

describe('per-address connection cap behind HAProxy (TRUSTED_PROXIES, PROXY protocol)', () => {
  let gateway: GatewayProcess;
  let lb: HaproxyProcess;
  const opened: { destroy(): void }[] = [];
  const hostOf = (url: string) => new URL(url).host;

  beforeAll(async () => {
    const env = {
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(CAP),
      TRUSTED_PROXIES: `${HAPROXY_SOURCE_ADDRESS}/32`,
    };
    gateway = await startGatewayProcess({ env });
    lb = await startHaproxy([hostOf(gateway.url), hostOf(gateway.url)]);
  });

  afterEach(async () => {
    for (const connection of opened.splice(0)) connection.destroy();
  });

  afterAll(async () => {
    await lb?.stop();
    await gateway?.stop();
  });

  const keep = (opening: Opening) => {
    opened.push({ destroy: () => opening.ws.terminate() });
    return opening.status;
  };

  it(`serves ${CAP * 3} clients behind the balancer at once, more than the cap of ${CAP} connections per address`, async () => {
    await expect
      .poll(async () => keep(await openWebSocket(lb.url, '127.0.0.9')), { timeout: 10_000 })
      .toBe(101);
    const clients = Array.from({ length: CAP * 3 }, (_, i) => `127.0.0.${10 + i}`);
    const statuses: number[] = [];
    // One after another: every connection stays open while the next one is made.
    for (const address of clients) statuses.push(keep(await openWebSocket(lb.url, address)));
    expect(statuses).toEqual(clients.map(() => 101));
  }, 30_000);

  it(`caps one client address opening more than ${CAP} connections through the balancer`, async () => {
    await expect
      .poll(async () => keep(await openWebSocket(lb.url, '127.0.0.9')), { timeout: 10_000 })
      .toBe(101);
    const statuses: number[] = [];
    for (let i = 0; i < CAP + 1; i++) statuses.push(keep(await openWebSocket(lb.url, '127.0.0.40')));
    expect(statuses).toEqual([...Array.from({ length: CAP }, () => 101), 429]);
    // Another client is still served.
    expect(keep(await openWebSocket(lb.url, '127.0.0.41'))).toBe(101);
  }, 30_000);

  it("ignores an untrusted peer's X-Forwarded-For and PROXY header", async () => {
    const answers: string[] = [];
    for (let i = 0; i < CAP; i++) {
      const connection = await rawConnection(gateway.url, '127.0.0.50');
      opened.push(connection.socket);
      connection.socket.write(HEALTH_REQUEST(`x-forwarded-for: 203.0.113.${i + 1}\r\n`));
      await expect.poll(connection.received).toMatch(/\r\n\r\n\{"status":"ok"\}$/);
      answers.push(connection.received().split('\r\n')[0]!);
    }
    expect(answers).toEqual(Array.from({ length: CAP }, () => 'HTTP/1.1 200 OK'));
    // Counted as 127.0.0.50, whatever the header says.
    const refused = await rawConnection(gateway.url, '127.0.0.50');
    opened.push(refused.socket);
    refused.socket.write(HEALTH_REQUEST('x-forwarded-for: 203.0.113.99\r\n'));
    await expect.poll(refused.closed).toBe(true);
    expect(refused.received()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);

    // A PROXY header from an untrusted peer is not one: HTTP refuses the bytes.
    const spoofing = await rawConnection(gateway.url, '127.0.0.51');
    opened.push(spoofing.socket);
    spoofing.socket.write(`PROXY TCP4 203.0.113.7 127.0.0.1 40000 4000\r\n${HEALTH_REQUEST()}`);
    await expect.poll(spoofing.closed).toBe(true);
    expect(spoofing.received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  });

  it('counts a trusted proxy connection under the client its PROXY header names, and closes one without a header', async () => {
    const viaProxy = async (client: string) => {
      const connection = await rawConnection(gateway.url, HAPROXY_SOURCE_ADDRESS);
      opened.push(connection.socket);
      connection.socket.write(`PROXY TCP4 ${client} 127.0.0.1 40000 4000\r\n${HEALTH_REQUEST()}`);
      return connection;
    };
    const served = [];
    for (let i = 0; i < CAP; i++) served.push(await viaProxy('198.51.100.7'));
    for (const connection of served) {
      await expect.poll(connection.received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ok"\}$/);
    }
    const overCap = await viaProxy('198.51.100.7');
    await expect.poll(overCap.closed).toBe(true);
    expect(overCap.received()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    const otherClient = await viaProxy('198.51.100.8');
    await expect.poll(otherClient.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

    // One client however its address is spelt: IPv4, IPv4-mapped IPv6 in v1 (TCP6) and v2 headers.
    const v2Mapped = Buffer.alloc(16 + 36);
    Buffer.from('0d0a0d0a000d0a515549540a2121', 'hex').copy(v2Mapped);
    v2Mapped.writeUInt16BE(36, 14);
    Buffer.from('00000000000000000000ffffc6336414', 'hex').copy(v2Mapped, 16);
    const spellings = [
      'PROXY TCP4 198.51.100.20 127.0.0.1 40000 4000\r\n',
      'PROXY TCP6 ::ffff:198.51.100.20 ::1 40000 4000\r\n',
      'PROXY TCP6 ::FFFF:c633:6414 ::1 40000 4000\r\n',
      v2Mapped,
    ];
    const mixed = [];
    for (const header of spellings) {
      const connection = await rawConnection(gateway.url, HAPROXY_SOURCE_ADDRESS);
      opened.push(connection.socket);
      connection.socket.write(header);
      connection.socket.write(HEALTH_REQUEST());
      mixed.push(connection);
    }
    for (const connection of mixed) {
      await expect.poll(connection.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    }
    const overCapMixed = await viaProxy('198.51.100.20');
    await expect.poll(overCapMixed.closed).toBe(true);
    expect(overCapMixed.received()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);

    // The trusted address without a header: closed unanswered (it could be a client's own bytes).
    const bare = await rawConnection(gateway.url, HAPROXY_SOURCE_ADDRESS);
    opened.push(bare.socket);
    bare.socket.write(HEALTH_REQUEST());
    await expect.poll(bare.closed).toBe(true);
    expect(bare.received()).toBe('');
  });
});
