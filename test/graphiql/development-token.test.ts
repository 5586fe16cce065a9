import { networkInterfaces } from 'node:os';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, EMBEDDED_DEV_JWT_SECRET, loadConfig, onSandbox } from '../../src/config/index.ts';
import {
  developmentTokenIssuer,
  isLoopbackAddress,
  mayEmbedDevelopmentToken,
} from '../../src/plugins/graphiql.ts';
import { leftover, type Stack, startStack, TEST_JWT_SECRET } from '../support/fixtures.ts';

/**
 * The development token goes into GraphiQL only in development, on the embedded sandbox, with the
 * development secret, for a request whose socket is loopback: never from another address (whatever
 * forwarded headers say), never in production, never with an operator's own secret.
 */

/** A non-loopback IPv4 address of this machine (e.g. eth0's), if it has one. */
const LAN_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((nic) => nic && nic.family === 'IPv4' && !nic.internal)?.address;

const development = loadConfig({});

/** GraphiQL's page as a browser asks for it, from `url` with `headers` besides Accept. */
async function graphiqlPage(url: string, headers: Record<string, string> = {}) {
  const response = await request(`${url}/graphql`, { headers: { accept: 'text/html', ...headers } });
  return { status: response.statusCode, headers: response.headers, html: await response.body.text() };
}

/** The options JSON the page hands to GraphiQL. */
function pageOptions(html: string): Record<string, unknown> {
  const json = /<script type="application\/json" id="graphiql-options">(.*?)<\/script>/s.exec(html)?.[1];
  if (!json) throw new Error(`no GraphiQL options in the page: ${html.slice(0, 200)}`);
  return JSON.parse(json) as Record<string, unknown>;
}

/** Fails when the page carries any token (a header value, a Bearer word or a JWT's first segment). */
function expectNoToken(html: string): void {
  expect(pageOptions(html)).not.toHaveProperty('headers');
  expect(html).not.toMatch(/Bearer|eyJ[A-Za-z0-9_-]{10,}/);
}

describe('isLoopbackAddress (socket remoteAddress)', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['::FFFF:127.1.2.3', true],
    ['192.0.2.2', false],
    ['10.0.0.1', false],
    ['::ffff:192.0.2.2', false],
    ['fd00::2', false],
    ['0.0.0.0', false],
    ['::', false],
    ['localhost', false],
    ['127.0.0.1.example.com', false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });
});

describe('mayEmbedDevelopmentToken', () => {
  const production = loadConfig({
    NODE_ENV: 'production',
    UPSTREAM: 'embedded',
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
  });
  const withOwnSecret = loadConfig({ AUTH_JWT_SECRET: TEST_JWT_SECRET });
  const remote: Config = {
    ...development,
    upstream: { ...onSandbox(development, 'http://127.0.0.1:4010').upstream, mode: 'remote' },
  };
  // Defence in depth: even a configuration object that slipped past loadConfig's production checks.
  const productionWithDevSecret: Config = { ...development, environment: 'production' };

  it('allows only development + embedded + development secret + loopback socket', () => {
    expect(development.auth.jwtSecret).toBe(EMBEDDED_DEV_JWT_SECRET);
    expect(mayEmbedDevelopmentToken(development, '127.0.0.1')).toBe(true);
    expect(mayEmbedDevelopmentToken(development, '::1')).toBe(true);
    expect(mayEmbedDevelopmentToken(development, '::ffff:127.0.0.1')).toBe(true);
    expect(mayEmbedDevelopmentToken(development, '192.0.2.2')).toBe(false);
    expect(mayEmbedDevelopmentToken(development, undefined)).toBe(false);
    for (const config of [production, withOwnSecret, remote, productionWithDevSecret]) {
      expect(mayEmbedDevelopmentToken(config, '127.0.0.1')).toBe(false);
    }
  });

  it('issues a Bearer token only when allowed', async () => {
    const issue = developmentTokenIssuer(development);
    expect(await issue('127.0.0.1')).toMatch(/^Bearer eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(await issue('192.0.2.2')).toBeUndefined();
    expect(await developmentTokenIssuer(productionWithDevSecret)('127.0.0.1')).toBeUndefined();
  });
});

describe('GraphiQL page over real HTTP, gateway bound to 0.0.0.0 with the development secret', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ HOST: '0.0.0.0', AUTH_JWT_SECRET: '' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('holds a development token for a loopback client, served uncached', async () => {
    const page = await graphiqlPage(stack.url);
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(pageOptions(page.html).headers).toMatch(/"Authorization": "Bearer eyJ/);
  });

  it.skipIf(!LAN_ADDRESS)(
    'holds no token for a client on a non-loopback address, whatever it forwards',
    async () => {
      const port = new URL(stack.url).port;
      const lanUrl = `http://${LAN_ADDRESS}:${port}`;
      const forgedHeaders: Record<string, string>[] = [
        {},
        { 'x-forwarded-for': '127.0.0.1' },
        { 'x-real-ip': '127.0.0.1' },
        { forwarded: 'for=127.0.0.1' },
        { host: '127.0.0.1' },
      ];
      for (const forged of forgedHeaders) {
        const page = await graphiqlPage(lanUrl, forged);
        expect(page.status).toBe(200);
        expectNoToken(page.html);
      }
    },
  );
});

describe('GraphiQL page with an operator secret, and in production', () => {
  it('holds no token when the gateway verifies with its own secret (development)', async () => {
    const stack = leftover(await startStack(), (started) => started.stop());
    const page = await graphiqlPage(stack.url);
    expect(page.status).toBe(200);
    expectNoToken(page.html);
  });

  it('is off in production, and holds no token when GRAPHIQL=on turns it on', async () => {
    const production = { NODE_ENV: 'production', UPSTREAM: 'embedded' };
    const off = leftover(await startStack(production), (started) => started.stop());
    const on = leftover(await startStack({ ...production, GRAPHIQL: 'on' }), (started) => started.stop());
    const refused = await graphiqlPage(off.url);
    expect(refused.status).toBe(406);
    expect(refused.html).not.toContain('graphiql');
    const page = await graphiqlPage(on.url);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expectNoToken(page.html);
  });
});
