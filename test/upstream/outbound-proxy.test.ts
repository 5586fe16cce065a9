import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { inspect } from 'node:util';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GatewayConfig,
  gatewayConfig,
  loadConfig,
  type UpstreamConfig,
} from '../../src/config/index.ts';
import { NetworkTokenNotFoundError } from '../../src/errors.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { AccountUpdaterClient } from '../../src/upstream/account-updater/client.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { createUpstreamHttp } from '../../src/upstream/http.ts';
import { createUpstream, type Upstream } from '../../src/upstream/index.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import {
  CREDENTIALS,
  captureLogger,
  leftover,
  logEntries,
  rejectionOf,
  startSandbox,
  type TestSandbox,
} from '../support/fixtures.ts';
import {
  createTestCertificates,
  type MitmProxy,
  startMitmproxy,
  startTlsFront,
} from '../support/mitmproxy.ts';

/**
 * The vaults' outbound forward proxy (sandbox contract §8, issue 19 item 4) through a real intercepting
 * proxy: mitmdump in regular mode with `--proxyauth`, reached over TLS (`https://user:password@localhost:<port>`,
 * as the provider's `<vault>.<environment>.verygoodproxy.com:8443`), its own CA re-signing the upstream
 * TLS, in front of the embedded sandbox served over TLS with a certificate of a test CA the proxy
 * verifies. The token endpoint and the card interface are called directly (plain HTTP to the sandbox).
 */

const PROXY_USER = 'vault-user';
const PROXY_PASSWORD = 'proxy-Secret-31415';
const UPSTREAM_TIMEOUT_MS = 5_000;

let sandbox: TestSandbox;
let proxy: MitmProxy;
let front: { port: number; stop(): Promise<void> };

beforeAll(async () => {
  const certificates = createTestCertificates();
  sandbox = await startSandbox();
  front = await startTlsFront(certificates, Number(new URL(sandbox.url).port));
  proxy = await startMitmproxy({
    proxyAuth: `${PROXY_USER}:${PROXY_PASSWORD}`,
    upstreamCaFile: certificates.caFile,
  });
}, 30_000);

afterAll(async () => {
  await proxy?.stop();
  await front?.stop();
  await sandbox?.stop();
});

/** The gateway's configuration with the proxy variables given, the sandbox's areas behind the TLS front. */
function config(env: Record<string, string>): GatewayConfig {
  return gatewayConfig(
    loadConfig({
      UPSTREAM: 'remote',
      CARD_INTERFACE_URL: `${sandbox.url}/card-interface`,
      ACCOUNT_UPDATER_URL: `https://localhost:${front.port}/account-updater`,
      CARD_ATTRIBUTES_URL: `${sandbox.url}/card-attributes`,
      ACCOUNTS_URL: `${sandbox.url}/accounts`,
      TOKEN_URL: `${sandbox.url}/oauth/token`,
      UPSTREAM_CREDENTIALS:
        'tntsandbox1=sandbox-client-1:sandbox-secret-1,tntsandbox2=sandbox-client-2:sandbox-secret-2',
      WEBHOOK_SECRETS: 'whsec_test_0123456789abcdef0123',
      AUTH_JWT_SECRET: 'test-jwt-secret-0123456789abcdef-0123456789',
      UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
      ...env,
    }),
  );
}

const proxyUrl = (password = PROXY_PASSWORD, scheme = 'https') =>
  `${scheme}://${PROXY_USER}:${password}@localhost:${proxy.port}`;

/** The flow lines mitmdump printed for requests to `path` (below the TLS front). */
const flowsTo = (path: string) =>
  proxy
    .output()
    .split('\n')
    .filter((line) => line.includes(`https://localhost:${front.port}${path}`));

/** An account updater client over its own pooled HTTP client with `upstream`'s proxy settings, unmapped errors. */
function rawAccountUpdater(upstream: UpstreamConfig) {
  const { logger, lines } = captureLogger();
  const metrics = createMetrics({ knownOperationNames: [] });
  const spans = new InMemorySpanExporter();
  const tracing = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  const http = leftover(
    createUpstreamHttp({
      timeoutMs: upstream.timeoutMs,
      logger,
      metrics,
      tracer: tracing.getTracer('test'),
      ...(upstream.proxy ? { proxy: upstream.proxy } : {}),
    }),
    (client) => client.close(),
  );
  const tokens = new AccessTokenProvider({ tokenUrl: upstream.tokenUrl, credentials: CREDENTIALS, http });
  const client = new AccountUpdaterClient({ baseUrl: upstream.accountUpdaterUrl, tokens, http });
  return { client, http, lines, metrics, spans };
}

/** Fails when `text` shows the proxy password (plain or in the Basic credentials). */
function expectNoProxyCredentials(text: string) {
  expect(text).not.toContain(PROXY_PASSWORD);
  expect(text).not.toContain(Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64'));
}

describe('the outbound forward proxy (UPSTREAM_PROXY, UPSTREAM_CA_FILE)', () => {
  it('sends account updater and network token calls through the proxy over TLS, the token request and the card interface directly', async () => {
    const { logger, lines } = captureLogger();
    const settings = config({ UPSTREAM_PROXY: proxyUrl(), UPSTREAM_CA_FILE: proxy.caFile });
    expect(settings.upstream.proxy?.areas).toEqual(['account-updater', 'network-tokens']);
    const upstream: Upstream = leftover(createUpstream(settings.upstream, logger), (u) => u.close());
    const tokenRequestsBefore = sandbox.sandbox.requests().filter((r) => r.path === '/oauth/token').length;

    const enrolled = await upstream.accountUpdater.enrollCard('tntsandbox1', {
      name: 'Ada',
      number: '4111111111111111',
      expMonth: 1,
      expYear: 30,
    });
    const read = await upstream.accountUpdater.getCard('tntsandbox1', enrolled.id);
    expect(read.id).toBe(enrolled.id);
    // An alias the vault does not hold: the sandbox's 404 came back through the proxy.
    await expect(upstream.networkTokens.get('tntsandbox1', '5573495XKjDP28V7312')).rejects.toBeInstanceOf(
      NetworkTokenNotFoundError,
    );
    const card = await upstream.cardInterface.createCard('tntsandbox1', {
      pan: '4000210000993003',
      expMonth: 12,
      expYear: 30,
    });

    // mitmdump saw (and intercepted) exactly the account updater and network token calls.
    const origin = `https://localhost:${front.port}`;
    await expect
      .poll(() => flowsTo('/account-updater/cards'))
      .toEqual([
        expect.stringContaining(`: POST ${origin}/account-updater/cards`),
        expect.stringContaining(`: GET ${origin}/account-updater/cards/${enrolled.id}`),
      ]);
    await expect.poll(() => flowsTo('/account-updater/network-tokens/5573495XKjDP28V7312')).toHaveLength(1);
    expect(proxy.output()).not.toContain('/oauth/token');
    expect(proxy.output()).not.toContain('/card-interface');
    expect(proxy.output()).not.toContain(card.id);
    // The sandbox answered the token request and the card interface itself.
    expect(sandbox.sandbox.requests().filter((r) => r.path === '/oauth/token').length).toBe(
      tokenRequestsBefore + 1,
    );
    expect(
      sandbox.sandbox
        .requests()
        .filter((r) => r.path === '/card-interface/cards')
        .at(-1),
    ).toMatchObject({
      method: 'POST',
      status: 201,
      vault: 'tntsandbox1',
    });
    // The log names the proxy by host and port only, from the start.
    expect(logEntries(lines, 'upstream calls of these areas go through the outbound proxy')).toEqual([
      expect.objectContaining({
        proxies: [`localhost:${proxy.port}`],
        areas: ['account-updater', 'network-tokens'],
        privateCa: true,
      }),
    ]);
    const proxied = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((e) => e.proxy);
    expect(proxied.length).toBeGreaterThanOrEqual(3);
    expect(new Set(proxied.map((e) => e.proxy))).toEqual(new Set([`localhost:${proxy.port}`]));
    expectNoProxyCredentials(lines.join('\n'));
  });

  it('takes per-vault proxies: a vault without one connects directly', async () => {
    const settings = config({
      UPSTREAM_PROXY: `tntsandbox1=${proxyUrl()}`,
      UPSTREAM_CA_FILE: proxy.caFile,
    });
    expect(settings.upstream.proxy).toMatchObject({ vaults: { tntsandbox1: proxyUrl() } });
    const { client } = rawAccountUpdater(settings.upstream);
    const flowsBefore = flowsTo('/account-updater/cards').length;
    await expect(client.getCard('tntsandbox1', 'CRDnotthere00000000000000')).rejects.toMatchObject({
      status: 404,
      code: 'card-not-found',
    });
    await expect.poll(() => flowsTo('/account-updater/cards').length).toBe(flowsBefore + 1);
    // Directly, the test CA of the TLS front is not trusted (UPSTREAM_CA_FILE is the proxy's only).
    const direct = (await rejectionOf(
      client.getCard('tntsandbox2', 'CRDnotthere00000000000000'),
    )) as UpstreamError;
    expect(direct).toBeInstanceOf(UpstreamError);
    expect(direct).toMatchObject({ area: 'account-updater', code: 'request-failed' });
    expect(direct.proxy).toBeUndefined();
    expect(flowsTo('/account-updater/cards').length).toBe(flowsBefore + 1);
  });

  it('fails with proxy-certificate-untrusted, naming the proxy, in bounded time without UPSTREAM_CA_FILE', async () => {
    const { client, lines } = rawAccountUpdater(config({ UPSTREAM_PROXY: proxyUrl() }).upstream);
    const started = performance.now();
    const error = (await rejectionOf(
      client.getCard('tntsandbox1', 'CRDnotthere00000000000000'),
    )) as UpstreamError;
    expect(performance.now() - started).toBeLessThan(UPSTREAM_TIMEOUT_MS);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      area: 'account-updater',
      code: 'proxy-certificate-untrusted',
      proxy: `localhost:${proxy.port}`,
      retryable: false,
    });
    expect(error.status).toBeUndefined();
    expect(error.message).toBe(
      `upstream account-updater GET /account-updater/cards/CRDnotthere00000000000000 failed: proxy-certificate-untrusted via proxy localhost:${proxy.port}`,
    );
    expectNoProxyCredentials(inspect(error, { depth: 5 }));
    expectNoProxyCredentials(lines.join('\n'));
  });

  it('fails with proxy-certificate-untrusted when only the intercepted upstream TLS is untrusted (plain http:// proxy)', async () => {
    const { client } = rawAccountUpdater(
      config({ UPSTREAM_PROXY: proxyUrl(PROXY_PASSWORD, 'http') }).upstream,
    );
    await expect(client.getCard('tntsandbox1', 'CRDnotthere00000000000000')).rejects.toMatchObject({
      code: 'proxy-certificate-untrusted',
      proxy: `localhost:${proxy.port}`,
    });
    // With the proxy's CA the same plain-HTTP proxy connection works.
    const trusted = rawAccountUpdater(
      config({ UPSTREAM_PROXY: proxyUrl(PROXY_PASSWORD, 'http'), UPSTREAM_CA_FILE: proxy.caFile }).upstream,
    );
    await expect(trusted.client.getCard('tntsandbox1', 'CRDnotthere00000000000000')).rejects.toMatchObject({
      status: 404,
      code: 'card-not-found',
    });
  });

  it('fails with proxy-authentication-failed naming the proxy (never its credentials) on wrong proxy credentials', async () => {
    const wrong = 'wrong-Password-27182';
    const { client, lines, metrics, spans } = rawAccountUpdater(
      config({ UPSTREAM_PROXY: proxyUrl(wrong), UPSTREAM_CA_FILE: proxy.caFile }).upstream,
    );
    const started = performance.now();
    const error = (await rejectionOf(
      client.enrollCard('tntsandbox1', { name: 'Ada', number: '4111111111111111', expMonth: 1, expYear: 30 }),
    )) as UpstreamError;
    expect(performance.now() - started).toBeLessThan(UPSTREAM_TIMEOUT_MS);
    expect(error).toMatchObject({
      area: 'account-updater',
      code: 'proxy-authentication-failed',
      proxy: `localhost:${proxy.port}`,
      retryable: false,
    });
    expect(error.message).toBe(
      `upstream account-updater POST /account-updater/cards failed: proxy-authentication-failed via proxy localhost:${proxy.port}`,
    );
    // mitmdump refused the tunnel itself.
    await expect
      .poll(() => proxy.output())
      .toMatch(/CONNECT localhost:\d+\s+<< 407 Proxy Authentication Required/);
    // The token request went directly (no proxy attribute); the refused call names the proxy.
    const finished = spans.getFinishedSpans();
    expect(finished.map((span) => [span.name, span.attributes['cardgraph.upstream.proxy']])).toEqual([
      ['upstream POST /oauth/token', undefined],
      ['upstream POST /account-updater/cards', `localhost:${proxy.port}`],
    ]);
    const shown = [
      inspect(error, { depth: 5 }),
      JSON.stringify(error),
      lines.join('\n'),
      await metrics.registry.metrics(),
      JSON.stringify(
        finished.map((span) => ({ attributes: span.attributes, status: span.status, events: span.events })),
      ),
    ];
    for (const text of shown) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(Buffer.from(`${PROXY_USER}:${wrong}`).toString('base64'));
    }
  });

  it('fails with proxy-authentication-failed on wrong proxy credentials for a forwarded http:// upstream', async () => {
    const wrong = 'wrong-Password-16180';
    const { client, lines } = rawAccountUpdater(
      config({
        UPSTREAM_PROXY: proxyUrl(wrong),
        UPSTREAM_CA_FILE: proxy.caFile,
        ACCOUNT_UPDATER_URL: `${sandbox.url}/account-updater`,
      }).upstream,
    );
    const error = (await rejectionOf(
      client.getCard('tntsandbox1', 'CRDnotthere00000000000000'),
    )) as UpstreamError;
    expect(error).toMatchObject({
      area: 'account-updater',
      code: 'proxy-authentication-failed',
      proxy: `localhost:${proxy.port}`,
      retryable: false,
    });
    expect(error.message).toBe(
      `upstream account-updater GET /account-updater/cards/CRDnotthere00000000000000 failed: proxy-authentication-failed via proxy localhost:${proxy.port}`,
    );
    const shown = [inspect(error, { depth: 5 }), JSON.stringify(error), lines.join('\n')];
    for (const text of shown) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(Buffer.from(`${PROXY_USER}:${wrong}`).toString('base64'));
    }
  });

  it('gives upstream-timeout naming the proxy at the call deadline when the proxy never answers', async () => {
    // Accepts the TCP connection and never says a word (no TLS handshake, no CONNECT answer); its
    // sockets are destroyed (leftovers run last registered first) before it closes.
    const silent = leftover(createNetServer(), (server) => new Promise((resolve) => server.close(resolve)));
    const held = new Set<import('node:net').Socket>();
    silent.on('connection', (socket) => {
      held.add(socket);
      leftover(socket, (s) => s.destroy());
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const { client } = rawAccountUpdater(
      config({
        UPSTREAM_PROXY: `https://${PROXY_USER}:${PROXY_PASSWORD}@localhost:${port}`,
        UPSTREAM_TIMEOUT_MS: '1000',
      }).upstream,
    );
    const started = performance.now();
    const error = (await rejectionOf(
      client.getCard('tntsandbox1', 'CRDnotthere00000000000000'),
    )) as UpstreamError;
    const elapsedMs = performance.now() - started;
    expect(elapsedMs).toBeGreaterThanOrEqual(990);
    expect(elapsedMs).toBeLessThan(2_000);
    expect(error).toMatchObject({ code: 'upstream-timeout', proxy: `localhost:${port}`, retryable: true });
    expect(held.size).toBeGreaterThanOrEqual(1);
    expectNoProxyCredentials(inspect(error, { depth: 5 }));
  });

  it.each([
    [403, false],
    [502, true],
  ])(
    'gives proxy-refused naming the proxy when it answers the tunnel request with %i (retryable: %s)',
    async (status, retryable) => {
      // A forward proxy that refuses every CONNECT with `status`.
      const refusing = leftover(
        createNetServer((socket) => {
          socket.once('data', () => socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-length: 0\r\n\r\n`));
        }),
        (server) => new Promise((resolve) => server.close(resolve)),
      );
      await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
      const port = (refusing.address() as AddressInfo).port;
      const { client } = rawAccountUpdater(
        config({ UPSTREAM_PROXY: `http://${PROXY_USER}:${PROXY_PASSWORD}@localhost:${port}` }).upstream,
      );
      const error = (await rejectionOf(
        client.enrollCard('tntsandbox1', {
          name: 'Ada',
          number: '4111111111111111',
          expMonth: 1,
          expYear: 30,
        }),
      )) as UpstreamError;
      expect(error).toMatchObject({ code: 'proxy-refused', proxy: `localhost:${port}`, retryable });
      expect(error.status).toBeUndefined();
      expectNoProxyCredentials(inspect(error, { depth: 5 }));
    },
  );

  it('reuses its pooled connections to the proxy across calls and closes them with the client', async () => {
    const { client, http } = rawAccountUpdater(
      config({ UPSTREAM_PROXY: proxyUrl(), UPSTREAM_CA_FILE: proxy.caFile }).upstream,
    );
    const flowsBefore = flowsTo('/account-updater/cards/CRDpooled').length;
    for (let i = 0; i < 6; i++) {
      await expect(client.getCard('tntsandbox1', 'CRDpooled0000000000000000')).rejects.toMatchObject({
        status: 404,
      });
    }
    await expect.poll(() => flowsTo('/account-updater/cards/CRDpooled').length).toBe(flowsBefore + 6);
    // Fewer tunnels than calls (mitmdump's `<client address>:` prefix names the connection).
    const clients = new Set(flowsTo('/account-updater/cards/CRDpooled').map((line) => line.split(': ')[0]));
    expect(clients.size).toBeLessThan(6);
    for (const address of clients) expect(proxy.output()).not.toContain(`${address}: client disconnect`);
    await http.close();
    for (const address of clients) {
      await expect.poll(() => proxy.output()).toContain(`${address}: client disconnect`);
    }
  });
});
