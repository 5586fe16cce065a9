import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { vi } from 'vitest';
import { freePort, keepOutput } from './local.ts';

/** Output kept for assertions and failure messages (characters). */
const OUTPUT_KEPT_CHARS = 256 * 1024;

/**
 * A real intercepting forward proxy: Debian's mitmproxy (`mitmdump`, installed by `npm test`'s pretest
 * step) in regular mode, as the provider's outbound proxy works (sandbox contract §8): clients reach
 * it over TLS (a "secure web proxy") or plain HTTP, authenticate with `Proxy-Authorization: Basic`,
 * send `CONNECT`, and get the upstream TLS intercepted and re-signed by the proxy's own CA.
 */
export interface MitmProxy {
  /** Its port on 127.0.0.1 (reached as `localhost`, the name its certificate is made for). */
  port: number;
  /** The PEM file of its CA (`mitmproxy-ca-cert.pem` in its confdir). */
  caFile: string;
  /**
   * Its flow log: one `<client>: <METHOD> <url>` line and one `<< <status>` line per request, written
   * a moment after the exchange (poll it).
   */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `mitmdump` on a free loopback port with a fresh confdir (its CA is made there on start),
 * requiring `proxyAuth` (`user:password`) and verifying upstream certificates against
 * `upstreamCaFile` only.
 * @throws Error with mitmdump's output when it exits or does not listen within 15 s.
 */
export async function startMitmproxy(options: {
  proxyAuth: string;
  upstreamCaFile: string;
}): Promise<MitmProxy> {
  const confdir = mkdtempSync(join(tmpdir(), 'cardgraph-mitmproxy-'));
  const port = await freePort();
  const binary = process.env.MITMDUMP_BIN ?? 'mitmdump';
  const child: ChildProcess = spawn(
    binary,
    [
      '--mode',
      'regular',
      '--listen-host',
      '127.0.0.1',
      '--listen-port',
      String(port),
      '--proxyauth',
      options.proxyAuth,
      '--set',
      `confdir=${confdir}`,
      '--set',
      `ssl_verify_upstream_trusted_ca=${options.upstreamCaFile}`,
    ],
    // COLUMNS: mitmdump cuts URLs to the terminal's width otherwise (80 without a terminal).
    {
      env: { PATH: process.env.PATH ?? '', HOME: confdir, COLUMNS: '1000', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = keepOutput(child, OUTPUT_KEPT_CHARS);
  const exited = once(child, 'exit');
  const caFile = join(confdir, 'mitmproxy-ca-cert.pem');
  await vi.waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`mitmdump exited with ${child.exitCode}:\n${output()}`);
      if (!existsSync(caFile)) throw new Error(`mitmdump wrote no CA yet:\n${output()}`);
      await new Promise<void>((resolve, reject) => {
        const client = connect({ host: '127.0.0.1', port }, () => {
          client.destroy();
          resolve();
        });
        client.once('error', () => reject(new Error(`mitmdump did not listen on ${port}:\n${output()}`)));
      });
    },
    { timeout: 15_000, interval: 50 },
  );
  return {
    port,
    caFile,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A test CA and a server certificate it signed for `localhost` and 127.0.0.1 (PEM files). */
export interface TestCertificates {
  caFile: string;
  keyFile: string;
  certFile: string;
}

/**
 * Makes a test CA and a `localhost` server certificate signed by it with the `openssl` command line
 * (P-256 keys, valid two days), in a fresh temporary directory: a real chain, so the proxy verifies
 * the upstream it intercepts.
 */
export function createTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'cardgraph-test-ca-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'];
  openssl(
    'req',
    '-x509',
    ...key,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-subj',
    '/CN=cardgraph test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl(
    'req',
    '-x509',
    ...key,
    '-keyout',
    file('server.key'),
    '-out',
    file('server.pem'),
    '-subj',
    '/CN=localhost',
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-addext',
    'basicConstraints=CA:FALSE',
    '-addext',
    'extendedKeyUsage=serverAuth',
  );
  return { caFile: file('ca.pem'), keyFile: file('server.key'), certFile: file('server.pem') };
}

/**
 * Serves `targetPort` on 127.0.0.1 over TLS with `certificates`' server certificate: each TLS
 * connection is relayed byte for byte to the plain HTTP server behind it (the embedded sandbox), so
 * the sandbox answers at an `https://localhost:<port>` address with a real chain.
 */
export async function startTlsFront(
  certificates: TestCertificates,
  targetPort: number,
): Promise<{ port: number; stop(): Promise<void> }> {
  const server: TlsServer = createTlsServer(
    { key: readFileSync(certificates.keyFile), cert: readFileSync(certificates.certFile) },
    (socket) => {
      const target = connect({ host: '127.0.0.1', port: targetPort });
      socket.pipe(target).pipe(socket);
      socket.on('error', () => target.destroy());
      target.on('error', () => socket.destroy());
    },
  );
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
