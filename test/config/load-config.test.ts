import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  EMBEDDED_DEV_JWT_SECRET,
  gatewayConfig,
  loadConfig,
  onSandbox,
  SANDBOX_CREDENTIALS,
} from '../../src/config/index.ts';

/** `graphql` switches of src/config/ with GraphiQL, introspection and field suggestions all on / all off. */
const exposedAll = { graphiql: true, introspection: true, fieldSuggestions: true };
const exposedNone = { graphiql: false, introspection: false, fieldSuggestions: false };

describe('loadConfig', () => {
  it('defaults to the embedded sandbox on ports 4000 and 4010 with the sandbox vaults, and no addresses yet', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4000);
    expect(config.upstream).toEqual({
      mode: 'embedded',
      sandbox: { port: 4010, webhookDelayMs: 1000, wire: 'documented' },
      credentials: SANDBOX_CREDENTIALS,
      timeoutMs: 10_000,
      tokenAuth: 'form',
    });
    expect(config.auth).toEqual({ jwtSecret: EMBEDDED_DEV_JWT_SECRET });
    expect(config.webhooks.secrets).toHaveLength(1);
    expect(config.webhooks.secrets[0]).toMatch(/^whsec_/);
  });

  it('reads SANDBOX_DUPLICATE_CARD_CHECK as a list of vault ids, refusing anything else', () => {
    const config = loadConfig({ SANDBOX_DUPLICATE_CARD_CHECK: 'tntsandbox2, tntsandbox1' });
    expect(config.upstream).toMatchObject({
      sandbox: { duplicateCardCheckVaults: ['tntsandbox2', 'tntsandbox1'] },
    });
    expect(() => loadConfig({ SANDBOX_DUPLICATE_CARD_CHECK: 'tntsandbox2,vault/1' })).toThrow(
      /SANDBOX_DUPLICATE_CARD_CHECK.*11-character vault id/s,
    );
  });

  it('parses per-vault credentials and comma-separated webhook secrets', () => {
    const config = loadConfig({
      UPSTREAM_CREDENTIALS: 'tntsandbox1=id-1:secret:with:colons, tntsandbox2=id-2:s2',
      WEBHOOK_SECRETS: 'whsec_new_0123456789abcdef,whsec_old_0123456789abcdef',
    });
    expect(config.upstream.credentials).toEqual({
      tntsandbox1: { clientId: 'id-1', clientSecret: 'secret:with:colons' },
      tntsandbox2: { clientId: 'id-2', clientSecret: 's2' },
    });
    expect(config.webhooks.secrets).toEqual(['whsec_new_0123456789abcdef', 'whsec_old_0123456789abcdef']);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ UPSTREAM: 'cloud' }, 'UPSTREAM'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL'],
    [{ AUTH_JWT_SECRET: 'short' }, 'AUTH_JWT_SECRET'],
    [{ WEBHOOK_SECRETS: 'tiny' }, 'WEBHOOK_SECRETS'],
    [{ UPSTREAM_CREDENTIALS: 'nonsense' }, 'UPSTREAM_CREDENTIALS'],
    [{ ACCOUNT_UPDATER_URL: 'ftp://x' }, 'ACCOUNT_UPDATER_URL'],
  ])('fails fast on %o naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`\\b${variable}\\b`));
  });

  it('requires every upstream address, credentials, webhook secrets and client auth in remote mode', () => {
    let message = '';
    try {
      loadConfig({ UPSTREAM: 'remote' });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const variable of [
      'CARD_INTERFACE_URL',
      'ACCOUNT_UPDATER_URL',
      'CARD_ATTRIBUTES_URL',
      'ACCOUNTS_URL',
      'TOKEN_URL',
      'UPSTREAM_CREDENTIALS',
      'WEBHOOK_SECRETS',
      'AUTH_JWT_SECRET',
    ]) {
      expect(message).toContain(variable);
    }
  });

  it('never prints a secret value in its message', () => {
    expect(() => loadConfig({ AUTH_JWT_SECRET: 'tooshortsecret' })).toThrow(/^(?![\s\S]*tooshortsecret)/);
  });

  it('exposes GraphiQL, introspection and field suggestions in development unless switched off', () => {
    expect(loadConfig({}).environment).toBe('development');
    expect(loadConfig({}).graphql).toEqual({ ...exposedAll, compiledExecution: true, leanHttp: true });
    expect(loadConfig({ GRAPHIQL: 'off', INTROSPECTION: 'off', FIELD_SUGGESTIONS: 'off' }).graphql).toEqual({
      ...exposedNone,
      compiledExecution: true,
      leanHttp: true,
    });
  });

  it('runs queries compiled and plain requests on the lean path unless GRAPHQL_JIT / GRAPHQL_LEAN_HTTP are off', () => {
    expect(loadConfig({ GRAPHQL_JIT: 'off' }).graphql).toEqual({
      ...exposedAll,
      compiledExecution: false,
      leanHttp: true,
    });
    expect(loadConfig({ GRAPHQL_LEAN_HTTP: 'off', GRAPHQL_JIT: 'on' }).graphql).toEqual({
      ...exposedAll,
      compiledExecution: true,
      leanHttp: false,
    });
  });

  it.each([
    [{ GRAPHIQL: 'yes' }, 'GRAPHIQL'],
    [{ INTROSPECTION: 'true' }, 'INTROSPECTION'],
    [{ FIELD_SUGGESTIONS: '1' }, 'FIELD_SUGGESTIONS'],
    [{ GRAPHQL_JIT: 'no' }, 'GRAPHQL_JIT'],
    [{ GRAPHQL_LEAN_HTTP: 'false' }, 'GRAPHQL_LEAN_HTTP'],
  ])('accepts only on|off: %o names %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`\\b${variable}\\b: Invalid option`));
  });
});

describe('loadConfig: load balancer and Redis failover settings (issue 20, items 11 and 12)', () => {
  it('reads TRUSTED_PROXIES as addresses and CIDR ranges, and refuses anything else', () => {
    expect(loadConfig({}).http.trustedProxies).toEqual([]);
    expect(
      loadConfig({ TRUSTED_PROXIES: ' 10.0.0.5, 172.28.0.0/24,fd00::/64 ,::1' }).http.trustedProxies,
    ).toEqual(['10.0.0.5', '172.28.0.0/24', 'fd00::/64', '::1']);
    for (const bad of ['lb.internal', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/1', '10.0.0.256']) {
      expect(() => loadConfig({ TRUSTED_PROXIES: bad })).toThrow(
        /\bTRUSTED_PROXIES\b.*IP address or CIDR range/,
      );
    }
  });

  it('reads the Sentinel addresses and master name together, and the replicas an append waits for', () => {
    const redis = { EVENTS_BACKEND: 'redis', REDIS_URL: 'redis://:secret@redis:6379/2' };
    expect(loadConfig(redis).events).toMatchObject({
      redisMinReplicasAck: 0,
      redisReplicasAckTimeoutMs: 1_000,
    });
    expect(loadConfig(redis).events.redisSentinel).toBeUndefined();
    const events = loadConfig({
      ...redis,
      REDIS_SENTINELS: 'sentinel-1:26379, 10.0.0.7:26380,[fd00::7]:26381',
      REDIS_SENTINEL_MASTER: 'cardgraph',
      REDIS_MIN_REPLICAS_ACK: '1',
      REDIS_REPLICAS_ACK_TIMEOUT_MS: '250',
    }).events;
    expect(events).toMatchObject({
      redisSentinel: {
        nodes: [
          { host: 'sentinel-1', port: 26379 },
          { host: '10.0.0.7', port: 26380 },
          { host: 'fd00::7', port: 26381 },
        ],
        masterName: 'cardgraph',
      },
      redisMinReplicasAck: 1,
      redisReplicasAckTimeoutMs: 250,
    });
    expect(() => loadConfig({ ...redis, REDIS_SENTINELS: 'sentinel-1:26379' })).toThrow(
      /\bREDIS_SENTINEL_MASTER\b: REDIS_SENTINELS and REDIS_SENTINEL_MASTER go together/,
    );
    expect(() => loadConfig({ ...redis, REDIS_SENTINEL_MASTER: 'cardgraph' })).toThrow(
      /\bREDIS_SENTINELS\b: REDIS_SENTINELS and REDIS_SENTINEL_MASTER go together/,
    );
    expect(() => loadConfig({ ...redis, REDIS_SENTINELS: 'sentinel-1', REDIS_SENTINEL_MASTER: 'm' })).toThrow(
      /\bREDIS_SENTINELS\b.*host:port/,
    );
    expect(() => loadConfig({ ...redis, REDIS_MIN_REPLICAS_ACK: '-1' })).toThrow(
      /\bREDIS_MIN_REPLICAS_ACK\b/,
    );
  });
});

describe('the gateway configuration', () => {
  it('puts the upstream under the address of the started sandbox', () => {
    const config = onSandbox(loadConfig({ SANDBOX_PORT: '0' }), 'http://127.0.0.1:41234');
    expect(config.upstream).toEqual({
      mode: 'embedded',
      cardInterfaceUrl: 'http://127.0.0.1:41234/card-interface',
      accountUpdaterUrl: 'http://127.0.0.1:41234/account-updater',
      cardAttributesUrl: 'http://127.0.0.1:41234/card-attributes',
      accountsUrl: 'http://127.0.0.1:41234/accounts',
      tokenUrl: 'http://127.0.0.1:41234/oauth/token',
      credentials: SANDBOX_CREDENTIALS,
      timeoutMs: 10_000,
      tokenAuth: 'form',
    });
  });

  it('is refused for the production entry in embedded mode, pointing at npm start', () => {
    expect(() => gatewayConfig(loadConfig({}))).toThrow(ConfigError);
    expect(() => gatewayConfig(loadConfig({ UPSTREAM: 'embedded' }))).toThrow(
      /^Invalid configuration:\n {2}UPSTREAM: embedded .*`npm start` \(src\/dev\.ts\)/,
    );
  });

  it('keeps the addresses of a remote upstream', () => {
    const remote = loadConfig({
      UPSTREAM: 'remote',
      CARD_INTERFACE_URL: 'https://ci.example/v1',
      ACCOUNT_UPDATER_URL: 'https://au.example/v1',
      CARD_ATTRIBUTES_URL: 'https://ca.example/v1',
      ACCOUNTS_URL: 'https://accounts.example/v1',
      TOKEN_URL: 'https://auth.example/oauth/token',
      UPSTREAM_CREDENTIALS: 'vault1=client:secret',
      WEBHOOK_SECRETS: 'whsec_0123456789abcdef0123',
      AUTH_JWT_SECRET: 'a-secret-of-at-least-32-characters-long',
    });
    expect(gatewayConfig(remote).upstream).toMatchObject({
      mode: 'remote',
      cardInterfaceUrl: 'https://ci.example/v1',
      tokenUrl: 'https://auth.example/oauth/token',
    });
  });
});

describe('loadConfig with NODE_ENV=production', () => {
  /** A complete remote configuration, as an operator would deploy it. */
  const remote = {
    NODE_ENV: 'production',
    UPSTREAM: 'remote',
    CARD_INTERFACE_URL: 'https://cards.example.com',
    ACCOUNT_UPDATER_URL: 'https://au.example.com',
    CARD_ATTRIBUTES_URL: 'https://bins.example.com',
    ACCOUNTS_URL: 'https://accounts.example.com',
    TOKEN_URL: 'https://auth.example.com/oauth/token',
    UPSTREAM_CREDENTIALS: 'tntlive00001=live-client:live-secret-0123456789',
    WEBHOOK_SECRETS: 'whsec_live_0123456789abcdef',
    AUTH_JWT_SECRET: 'operator-secret-0123456789abcdef-0123456789',
  };

  /** The ConfigError message of `env`, or '' when it loads. */
  function refusal(env: Record<string, string>): string {
    try {
      loadConfig(env);
      return '';
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  }

  it('loads a complete remote configuration with GraphiQL, introspection and suggestions off', () => {
    const config = loadConfig(remote);
    expect(config.environment).toBe('production');
    expect(config.graphql).toEqual({ ...exposedNone, compiledExecution: true, leanHttp: true });
    expect(
      loadConfig({ ...remote, GRAPHIQL: 'on', INTROSPECTION: 'on', FIELD_SUGGESTIONS: 'on' }).graphql,
    ).toEqual({ ...exposedAll, compiledExecution: true, leanHttp: true });
  });

  it('requires UPSTREAM to be set explicitly', () => {
    expect(refusal({ NODE_ENV: 'production' })).toMatch(/^ {2}UPSTREAM: required when NODE_ENV=production/m);
    expect(refusal({ NODE_ENV: 'production', UPSTREAM: '' })).toMatch(/^ {2}UPSTREAM: required/m);
  });

  it('refuses the development JWT secret, given or fallen back to', () => {
    expect(refusal({ ...remote, AUTH_JWT_SECRET: EMBEDDED_DEV_JWT_SECRET })).toMatch(
      /^ {2}AUTH_JWT_SECRET: the development secret is refused when NODE_ENV=production$/m,
    );
    expect(refusal({ NODE_ENV: 'production', UPSTREAM: 'embedded' })).toMatch(
      /^ {2}AUTH_JWT_SECRET: AUTH_JWT_SECRET or AUTH_JWKS_URL is required when NODE_ENV=production/m,
    );
    expect(
      refusal({ NODE_ENV: 'production', UPSTREAM: 'embedded', AUTH_JWT_SECRET: EMBEDDED_DEV_JWT_SECRET }),
    ).toMatch(/^ {2}AUTH_JWT_SECRET: the development secret is refused/m);
  });

  it('refuses the sandbox client credentials of contract §2, by id or by secret', () => {
    for (const credentials of [
      'tntsandbox1=sandbox-client-1:sandbox-secret-1',
      'tntlive00001=sandbox-client-2:another-secret',
      'tntlive00001=live-client:sandbox-secret-1',
    ]) {
      const message = refusal({ ...remote, UPSTREAM_CREDENTIALS: credentials });
      expect(message).toMatch(/^ {2}UPSTREAM_CREDENTIALS: the sandbox client credentials .* are refused/m);
      expect(message).not.toContain('sandbox-secret');
    }
  });

  it('reads NODE_ENV trimmed and without case, and refuses an unknown one naming it (issue 20 item 10)', () => {
    for (const spelling of ['Production', ' production', 'PRODUCTION\n', '\tproduction ']) {
      expect(loadConfig({ ...remote, NODE_ENV: spelling }).environment).toBe('production');
      // A misspelt production is production: its checks apply.
      expect(refusal({ NODE_ENV: spelling })).toMatch(/^ {2}UPSTREAM: required when NODE_ENV=production/m);
    }
    for (const spelling of ['development', 'Development ', 'test', ' TEST', '', '  ']) {
      expect(loadConfig({ NODE_ENV: spelling }).environment).toBe('development');
    }
    for (const unknown of ['prod', 'staging', 'production1', 'live']) {
      expect(refusal({ ...remote, NODE_ENV: unknown })).toMatch(
        new RegExp(
          `^ {2}NODE_ENV: unknown environment "${unknown}": expected production, development or test$`,
          'm',
        ),
      );
    }
  });

  it('refuses http:// for the JWKS, upstream and token addresses, loopback hosts excepted', () => {
    const jwks = { ...remote, AUTH_JWT_SECRET: '', AUTH_JWKS_URL: 'https://idp.example.com/jwks.json' };
    expect(loadConfig(jwks).auth.jwksUrl).toBe('https://idp.example.com/jwks.json');
    const plain = [
      ['AUTH_JWKS_URL', { ...jwks, AUTH_JWKS_URL: 'http://idp.example.com/jwks.json' }],
      ['CARD_INTERFACE_URL', { ...remote, CARD_INTERFACE_URL: 'http://cards.example.com' }],
      ['ACCOUNT_UPDATER_URL', { ...remote, ACCOUNT_UPDATER_URL: 'HTTP://au.example.com' }],
      ['CARD_ATTRIBUTES_URL', { ...remote, CARD_ATTRIBUTES_URL: 'http://10.0.0.7:8080' }],
      ['ACCOUNTS_URL', { ...remote, ACCOUNTS_URL: 'http://127.example.com' }],
      ['TOKEN_URL', { ...remote, TOKEN_URL: 'http://auth.example.com/oauth/token' }],
    ] as const;
    for (const [key, env] of plain) {
      expect(refusal(env)).toMatch(
        new RegExp(
          `^ {2}${key}: http:// is refused when NODE_ENV=production \\(use https://; only a loopback host, localhost, 127\\.0\\.0\\.0/8 or \\[::1\\], may use http://\\)$`,
          'm',
        ),
      );
      // Development keeps accepting plain addresses.
      expect(refusal({ ...env, NODE_ENV: 'development' })).toBe('');
    }
    for (const loopback of [
      'http://127.0.0.1:4010',
      'http://localhost:4010',
      'http://[::1]:4010',
      'http://127.1.2.3',
    ]) {
      expect(refusal({ ...remote, CARD_INTERFACE_URL: loopback, TOKEN_URL: `${loopback}/oauth/token` })).toBe(
        '',
      );
      expect(refusal({ ...jwks, AUTH_JWKS_URL: `${loopback}/jwks.json` })).toBe('');
    }
  });

  it('refuses a JWT secret with too few distinct characters', () => {
    for (const weak of ['a'.repeat(32), 'ab'.repeat(32), '0123456780123456780123456780123456']) {
      expect(refusal({ ...remote, AUTH_JWT_SECRET: weak })).toMatch(
        /^ {2}AUTH_JWT_SECRET: too weak for NODE_ENV=production: needs at least 10 distinct characters/m,
      );
      expect(refusal({ ...remote, AUTH_JWT_SECRET: weak })).not.toContain(weak);
    }
    expect(refusal({ ...remote, AUTH_JWT_SECRET: 'a'.repeat(31) })).toMatch(
      /^ {2}AUTH_JWT_SECRET: needs at least 32 characters$/m,
    );
    expect(loadConfig({ ...remote, AUTH_JWT_SECRET: '0123456789'.repeat(4) }).auth.jwtSecret).toBe(
      '0123456789'.repeat(4),
    );
  });

  it('allows an explicit embedded sandbox deployment with its own secret', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      UPSTREAM: 'embedded',
      AUTH_JWT_SECRET: remote.AUTH_JWT_SECRET,
    });
    expect(config.upstream.mode).toBe('embedded');
    expect(config.auth.jwtSecret).toBe(remote.AUTH_JWT_SECRET);
  });
});

describe('caches kept apart from the event log (issue 20 item 1)', () => {
  it('reads REDIS_CACHE_URL (REDIS_URL when unset) and the APQ caps, 64 KiB of text at least', () => {
    const redis = { EVENTS_BACKEND: 'redis', REDIS_URL: 'redis://events:6379' };
    expect(loadConfig(redis).events.cacheRedisUrl).toBe('redis://events:6379');
    expect(loadConfig({ ...redis, REDIS_CACHE_URL: 'redis://caches:6379/1' }).events.cacheRedisUrl).toBe(
      'redis://caches:6379/1',
    );
    expect(() => loadConfig({ ...redis, REDIS_CACHE_URL: 'http://caches' })).toThrow(/\bREDIS_CACHE_URL\b/);
    const defaults = loadConfig({}).persistedOperations;
    expect([defaults.apqMaxEntries, defaults.apqMaxBytes]).toEqual([1_000, 16 * 1024 * 1024]);
    expect(loadConfig({ APQ_MAX_BYTES: '1048576' }).persistedOperations.apqMaxBytes).toBe(1_048_576);
    expect(() => loadConfig({ APQ_MAX_BYTES: '65535' })).toThrow(/\bAPQ_MAX_BYTES\b/);
  });
});
