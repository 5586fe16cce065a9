import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, gatewayConfig, loadConfig } from '../../src/config/index.ts';
import { upstreamProbeOrigins } from '../../src/lib/readiness.ts';
import { proxyLabel } from '../../src/upstream/http.ts';
import { createTestCertificates } from '../support/mitmproxy.ts';

/**
 * The outbound proxy and token request variables of src/config/ (issue 19 items 4 and 6):
 * `UPSTREAM_PROXY`, `UPSTREAM_PROXY_AREAS`, `UPSTREAM_CA_FILE`, `UPSTREAM_TOKEN_AUTH`,
 * `UPSTREAM_TOKEN_SCOPE`. A bad value fails at start with a ConfigError naming the variable, never
 * repeating the value (proxy addresses carry credentials).
 */

const REMOTE = {
  UPSTREAM: 'remote',
  CARD_INTERFACE_URL: 'https://sandbox.vgsapi.com',
  ACCOUNT_UPDATER_URL: 'https://calm.sandbox.verygoodsecurity.app',
  CARD_ATTRIBUTES_URL: 'https://card-enrichment-api.sandbox.verygoodvault.com',
  ACCOUNTS_URL: 'https://accounts.apps.verygoodsecurity.com',
  TOKEN_URL: 'https://auth.verygoodsecurity.com/auth/realms/vgs/protocol/openid-connect/token',
  UPSTREAM_CREDENTIALS: 'tntaaaaaaa1=client-1:secret-one,tntbbbbbbb2=client-2:secret-two',
  WEBHOOK_SECRETS: 'whsec_test_0123456789abcdef0123',
  AUTH_JWT_SECRET: 'test-jwt-secret-0123456789abcdef-0123456789',
};
const PROXY_1 = 'https://US7x1:p4ss%2Cword@tntaaaaaaa1.sandbox.verygoodproxy.com:8443';
const PROXY_2 = 'https://US7x2:other-pass@tntbbbbbbb2.sandbox.verygoodproxy.com:8443';
/** A readable file that holds no certificate. */
const NOT_PEM = join(mkdtempSync(join(tmpdir(), 'cardgraph-ca-')), 'notes.txt');
writeFileSync(NOT_PEM, 'the provider CA goes here\n');

/** The ConfigError message of `env`, failing when it loads. */
function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('UPSTREAM_PROXY, UPSTREAM_PROXY_AREAS, UPSTREAM_CA_FILE', () => {
  const { caFile } = createTestCertificates();

  it('takes one proxy for every vault, account updater and network tokens by default, the CA file as PEM', () => {
    const config = loadConfig({ ...REMOTE, UPSTREAM_PROXY: PROXY_1, UPSTREAM_CA_FILE: caFile });
    expect(config.upstream.proxy).toEqual({
      all: PROXY_1,
      vaults: {},
      areas: ['account-updater', 'network-tokens'],
      caPem: expect.stringMatching(/^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/),
    });
    expect(loadConfig(REMOTE).upstream.proxy).toBeUndefined();
  });

  it('takes vault=address pairs and the areas named', () => {
    const config = loadConfig({
      ...REMOTE,
      UPSTREAM_PROXY: ` tntaaaaaaa1=${PROXY_1} , tntbbbbbbb2=${PROXY_2}`,
      UPSTREAM_PROXY_AREAS: 'account-updater,network-tokens,card-attributes',
    });
    expect(config.upstream.proxy).toEqual({
      vaults: { tntaaaaaaa1: PROXY_1, tntbbbbbbb2: PROXY_2 },
      areas: ['account-updater', 'network-tokens', 'card-attributes'],
    });
  });

  it.each([
    ['not a URL', { UPSTREAM_PROXY: 'verygoodproxy.com:8443' }, 'UPSTREAM_PROXY: expected http(s)://'],
    ['another scheme', { UPSTREAM_PROXY: 'socks5://u:p@proxy:1080' }, 'UPSTREAM_PROXY: expected http(s)://'],
    ['a path', { UPSTREAM_PROXY: 'https://u:p@proxy:8443/x' }, 'UPSTREAM_PROXY: expected http(s)://'],
    ['a bad pair', { UPSTREAM_PROXY: `tntaaaaaaa1=${PROXY_1},tntbbbbbbb2=nope` }, 'UPSTREAM_PROXY: expected'],
    [
      'one address and pairs',
      { UPSTREAM_PROXY: `${PROXY_1},tntbbbbbbb2=${PROXY_2}` },
      'UPSTREAM_PROXY: give one address for every vault, or vault=address pairs',
    ],
    [
      'an unknown vault',
      { UPSTREAM_PROXY: `tntaaaaaaa1=${PROXY_1},tntunknown9=${PROXY_2}` },
      'UPSTREAM_PROXY: names vault tntunknown9, which has no UPSTREAM_CREDENTIALS',
    ],
    [
      'the token endpoint as an area',
      { UPSTREAM_PROXY: PROXY_1, UPSTREAM_PROXY_AREAS: 'account-updater,oauth' },
      'UPSTREAM_PROXY_AREAS.1: each area is one of card-interface, account-updater, network-tokens, card-attributes, accounts (the token endpoint is always called directly)',
    ],
    [
      'an unreadable CA file',
      { UPSTREAM_PROXY: PROXY_1, UPSTREAM_CA_FILE: '/nonexistent/provider-ca.pem' },
      'UPSTREAM_CA_FILE: cannot be read (ENOENT)',
    ],
    [
      'a CA file that holds no certificate',
      { UPSTREAM_PROXY: PROXY_1, UPSTREAM_CA_FILE: NOT_PEM },
      'UPSTREAM_CA_FILE: is not a PEM bundle of X.509 certificates',
    ],
    ['an unknown token auth', { UPSTREAM_TOKEN_AUTH: 'jwt' }, 'UPSTREAM_TOKEN_AUTH: Invalid option'],
  ])('refuses %s, naming the variable and not the value', (_case, env, expected) => {
    const message = configError({ ...REMOTE, ...env });
    expect(message).toContain(expected);
    expect(message).not.toContain('p4ss');
    expect(message).not.toContain('other-pass');
  });

  it('refuses a CA file that is not PEM, and a CA file without a proxy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cardgraph-ca-'));
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n');
    expect(configError({ ...REMOTE, UPSTREAM_PROXY: PROXY_1, UPSTREAM_CA_FILE: garbage })).toContain(
      'UPSTREAM_CA_FILE: is not a PEM bundle of X.509 certificates',
    );
    expect(configError({ ...REMOTE, UPSTREAM_CA_FILE: caFile })).toContain(
      'UPSTREAM_CA_FILE: is trusted for the outbound proxy only: set UPSTREAM_PROXY too',
    );
  });

  it('refuses an http:// proxy when NODE_ENV=production (loopback excepted)', () => {
    const production = { ...REMOTE, NODE_ENV: 'production', UPSTREAM_PROXY_AREAS: 'account-updater' };
    expect(
      configError({ ...production, UPSTREAM_PROXY: 'tntaaaaaaa1=http://US7x1:p4ss@proxy.internal:3128' }),
    ).toContain('UPSTREAM_PROXY: http:// is refused when NODE_ENV=production');
    expect(loadConfig({ ...production, UPSTREAM_PROXY: PROXY_1 }).upstream.proxy?.all).toBe(PROXY_1);
    expect(
      loadConfig({ ...production, UPSTREAM_PROXY: 'http://US7x1:p4ss@127.0.0.1:3128' }).upstream.proxy?.all,
    ).toBe('http://US7x1:p4ss@127.0.0.1:3128');
  });

  it('names a proxy by host and port only', () => {
    expect(proxyLabel(PROXY_1)).toBe('tntaaaaaaa1.sandbox.verygoodproxy.com:8443');
    expect(proxyLabel('http://u:p@proxy.internal')).toBe('proxy.internal:80');
    expect(proxyLabel('https://proxy.internal')).toBe('proxy.internal:443');
  });

  it('checks readiness at the proxy instead of the proxied areas when every vault has one', () => {
    const direct = upstreamProbeOrigins(gatewayConfig(loadConfig(REMOTE)).upstream);
    expect(direct).toEqual([
      'https://auth.verygoodsecurity.com',
      'https://sandbox.vgsapi.com',
      'https://calm.sandbox.verygoodsecurity.app',
      'https://card-enrichment-api.sandbox.verygoodvault.com',
      'https://accounts.apps.verygoodsecurity.com',
    ]);
    const proxied = upstreamProbeOrigins(
      gatewayConfig(
        loadConfig({ ...REMOTE, UPSTREAM_PROXY: `tntaaaaaaa1=${PROXY_1},tntbbbbbbb2=${PROXY_2}` }),
      ).upstream,
    );
    expect(proxied).toEqual([
      'https://auth.verygoodsecurity.com',
      'https://sandbox.vgsapi.com',
      'https://card-enrichment-api.sandbox.verygoodvault.com',
      'https://accounts.apps.verygoodsecurity.com',
      'https://tntaaaaaaa1.sandbox.verygoodproxy.com:8443',
      'https://tntbbbbbbb2.sandbox.verygoodproxy.com:8443',
    ]);
    // One vault without a proxy still calls account updater directly: both are checked.
    const partly = upstreamProbeOrigins(
      gatewayConfig(loadConfig({ ...REMOTE, UPSTREAM_PROXY: `tntaaaaaaa1=${PROXY_1}` })).upstream,
    );
    expect(partly).toContain('https://calm.sandbox.verygoodsecurity.app');
    expect(partly).toContain('https://tntaaaaaaa1.sandbox.verygoodproxy.com:8443');
  });
});

describe('UPSTREAM_TOKEN_AUTH, UPSTREAM_TOKEN_SCOPE', () => {
  it('sends the documented form by default, HTTP Basic when asked, a scope only when configured', () => {
    expect(loadConfig(REMOTE).upstream).toMatchObject({ tokenAuth: 'form' });
    expect(loadConfig(REMOTE).upstream.tokenScope).toBeUndefined();
    expect(
      loadConfig({ ...REMOTE, UPSTREAM_TOKEN_AUTH: 'basic', UPSTREAM_TOKEN_SCOPE: 'cards:read cards:write' })
        .upstream,
    ).toMatchObject({ tokenAuth: 'basic', tokenScope: 'cards:read cards:write' });
  });
});
