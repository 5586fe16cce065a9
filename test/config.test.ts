import { describe, expect, it } from 'vitest';
import { ConfigError, EMBEDDED_DEV_JWT_SECRET, loadConfig, SANDBOX_CREDENTIALS } from '../src/config.ts';

describe('loadConfig', () => {
  it('defaults to the embedded sandbox on ports 4000 and 4010 with the sandbox vaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4000);
    expect(config.upstream.mode).toBe('embedded');
    expect(config.sandbox).toEqual({ port: 4010, webhookDelayMs: 1000 });
    expect(config.upstream.accountUpdaterUrl).toBe('http://127.0.0.1:4010/account-updater');
    expect(config.upstream.tokenUrl).toBe('http://127.0.0.1:4010/oauth/token');
    expect(config.upstream.credentials).toEqual(SANDBOX_CREDENTIALS);
    expect(config.auth).toEqual({ jwtSecret: EMBEDDED_DEV_JWT_SECRET });
    expect(config.webhooks.secrets).toHaveLength(1);
    expect(config.webhooks.secrets[0]).toMatch(/^whsec_/);
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
});
