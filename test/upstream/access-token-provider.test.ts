import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import { CREDENTIALS, rejectionOf, useUpstream } from '../support/fixtures.ts';

/** OAuth 2.0 client credentials per vault against the sandbox token endpoint (contract §2). */

const fixture = useUpstream();

const tokenRequests = () => fixture.requestsTo('POST', '/oauth/token');

function provider(
  options: {
    clock?: () => number;
    scope?: string;
    credentials?: typeof CREDENTIALS;
    clientAuth?: 'form' | 'basic';
  } = {},
) {
  return new AccessTokenProvider({
    tokenUrl: `${fixture.url}/oauth/token`,
    credentials: options.credentials ?? CREDENTIALS,
    http: fixture.http,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.scope ? { scope: options.scope } : {}),
    ...(options.clientAuth ? { clientAuth: options.clientAuth } : {}),
  });
}

describe('AccessTokenProvider', () => {
  it('caches a token per vault: a second call makes no token request', async () => {
    const tokens = provider();
    const before = tokenRequests();
    const first = await tokens.getToken('tntsandbox1');
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokenRequests()).toBe(before + 1);
    expect(await tokens.getToken('tntsandbox1')).toBe(first);
    expect(tokenRequests()).toBe(before + 1);

    const second = await tokens.getToken('tntsandbox2');
    expect(second).not.toBe(first);
    expect(tokenRequests()).toBe(before + 2);
  });

  it('shares one token request among concurrent callers', async () => {
    const tokens = provider();
    const before = tokenRequests();
    const results = await Promise.all(Array.from({ length: 5 }, () => tokens.getToken('tntsandbox1')));
    expect(new Set(results).size).toBe(1);
    expect(tokenRequests()).toBe(before + 1);
  });

  it('refreshes 60 s before expires_in (1200 s) runs out', async () => {
    let now = Date.now();
    const tokens = provider({ clock: () => now });
    const before = tokenRequests();
    const first = await tokens.getToken('tntsandbox1');
    now += (1200 - 60) * 1000 - 1;
    expect(await tokens.getToken('tntsandbox1')).toBe(first);
    expect(tokenRequests()).toBe(before + 1);
    now += 1;
    const refreshed = await tokens.getToken('tntsandbox1');
    expect(refreshed).not.toBe(first);
    expect(tokenRequests()).toBe(before + 2);
  });

  it('invalidate drops only the cached token it names', async () => {
    const tokens = provider();
    const before = tokenRequests();
    const first = await tokens.getToken('tntsandbox1');
    tokens.invalidate('tntsandbox1', 'some-other-token');
    expect(await tokens.getToken('tntsandbox1')).toBe(first);
    tokens.invalidate('tntsandbox1', first);
    const second = await tokens.getToken('tntsandbox1');
    expect(second).not.toBe(first);
    expect(tokenRequests()).toBe(before + 2);
  });

  it('rejects an unknown vault without a request', async () => {
    const tokens = provider();
    const before = tokenRequests();
    const error = await rejectionOf(tokens.getToken('tntunknown1'));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      area: 'oauth',
      code: 'unknown-vault',
      status: undefined,
      retryable: false,
    });
    expect(await rejectionOf(tokens.getToken('toString'))).toMatchObject({ code: 'unknown-vault' });
    expect(tokenRequests()).toBe(before);
  });

  it('surfaces invalid_client for wrong credentials, and asks again once the backoff (1 s at most) has passed', async () => {
    let now = Date.now();
    const tokens = provider({
      clock: () => now,
      credentials: { ...CREDENTIALS, tntsandbox1: { clientId: 'sandbox-client-1', clientSecret: 'wrong' } },
    });
    const before = tokenRequests();
    const error = (await rejectionOf(tokens.getToken('tntsandbox1'))) as UpstreamError;
    expect(error).toMatchObject({ area: 'oauth', status: 401, code: 'invalid_client', retryable: false });
    expect(error.message).not.toContain('wrong');
    // Within the backoff the failure is answered without a request; the other vault is unaffected.
    expect(await rejectionOf(tokens.getToken('tntsandbox1'))).toBe(error);
    expect(tokenRequests()).toBe(before + 1);
    await tokens.getToken('tntsandbox2');
    now += 1_000;
    await expect(tokens.getToken('tntsandbox1')).rejects.toMatchObject({ code: 'invalid_client' });
    expect(tokenRequests()).toBe(before + 3);
  });

  it('requests the configured scope; a token without cards:read gets 403 on GET /cards', async () => {
    const tokens = provider({ scope: 'cards:write' });
    const { CardInterfaceClient } = await import('../../src/upstream/card-interface/client.ts');
    const client = new CardInterfaceClient({
      baseUrl: `${fixture.url}/card-interface`,
      tokens,
      http: fixture.http,
    });
    const card = await client.createCard('tntsandbox1', {
      pan: '4000210000993003',
      expMonth: 12,
      expYear: 30,
    });
    await expect(client.getCard('tntsandbox1', card.id)).rejects.toMatchObject({
      area: 'card-interface',
      status: 403,
      code: 'forbidden',
      retryable: false,
    });
    await expect(provider({ scope: 'cards:everything' }).getToken('tntsandbox2')).rejects.toMatchObject({
      area: 'oauth',
      status: 400,
      code: 'invalid_scope',
    });
  });
});
