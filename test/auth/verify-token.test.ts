import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueDevToken } from '../../src/auth/issue-dev-token.ts';
import { AuthenticationError, CLOCK_TOLERANCE_S, createTokenVerifier } from '../../src/auth/verify-token.ts';

const SECRET = 'test-secret-of-at-least-thirty-two-characters';
const key = new TextEncoder().encode(SECRET);
const nowS = () => Math.floor(Date.now() / 1000);

function sign(claims: JWTPayload, secret: Uint8Array = key, alg = 'HS256') {
  return new SignJWT(claims).setProtectedHeader({ alg }).sign(secret);
}

async function rejection(promise: Promise<unknown>): Promise<AuthenticationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AuthenticationError);
  return error as AuthenticationError;
}

describe('createTokenVerifier with an HS256 secret', () => {
  const verify = createTokenVerifier({ jwtSecret: SECRET });

  it('returns the viewer of a valid token', async () => {
    const token = await issueDevToken({
      secret: SECRET,
      subject: 'dev-user',
      vaults: ['tntsandbox1', 'tntsandbox2'],
      scopes: ['cards:read', 'cards:write'],
      expiresInS: 600,
    });
    const viewer = await verify(`Bearer ${token}`);
    expect(viewer).not.toBeNull();
    expect(viewer?.subject).toBe('dev-user');
    expect([...(viewer?.scopes ?? [])]).toEqual(['cards:read', 'cards:write']);
    expect(viewer?.vaults).toEqual(['tntsandbox1', 'tntsandbox2']);
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp;
    expect(viewer?.expiresAt).toBe(exp * 1000);
    expect(await verify(`bearer ${token}`)).toEqual(viewer);
  });

  it('keeps only known upstream scope names and treats a missing scope as none', async () => {
    const withOthers = await sign({
      sub: 'u',
      vaults: ['tntsandbox1'],
      scope: 'openid cards:read  profile',
      exp: nowS() + 60,
    });
    expect([...((await verify(`Bearer ${withOthers}`))?.scopes ?? [])]).toEqual(['cards:read']);
    const without = await sign({ sub: 'u', vaults: ['tntsandbox1'], exp: nowS() + 60 });
    expect((await verify(`Bearer ${without}`))?.scopes.size).toBe(0);
  });

  it('returns null when no header was sent', async () => {
    expect(await verify(undefined)).toBeNull();
    expect(await verify('')).toBeNull();
  });

  it('refuses an expired token with token-expired, allowing 5 s of clock skew', async () => {
    const expired = await sign({ sub: 'u', vaults: ['tntsandbox1'], exp: nowS() - 10 });
    const error = await rejection(verify(`Bearer ${expired}`));
    expect(error.code).toBe('token-expired');
    expect(error.message).toBe('The token has expired');

    const withinSkew = await sign({ sub: 'u', vaults: ['tntsandbox1'], exp: nowS() - 2 });
    expect((await verify(`Bearer ${withinSkew}`))?.subject).toBe('u');
  });

  it('refuses a token signed with another secret', async () => {
    const token = await sign(
      { sub: 'u', vaults: ['tntsandbox1'], exp: nowS() + 60 },
      new TextEncoder().encode('x'.repeat(40)),
    );
    const error = await rejection(verify(`Bearer ${token}`));
    expect(error.code).toBe('invalid-token');
    expect(error.message).toBe('Invalid token: signature verification failed');
    expect(error.message).not.toContain(token);
  });

  it('refuses another algorithm and a header that is not a bearer JWT', async () => {
    const hs512 = await sign({ sub: 'u', vaults: ['tntsandbox1'], exp: nowS() + 60 }, key, 'HS512');
    expect((await rejection(verify(`Bearer ${hs512}`))).message).toBe(
      'Invalid token: signing algorithm not allowed',
    );
    for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer not-a-jwt', 'Bearer a.b.c']) {
      expect((await rejection(verify(header))).code).toBe('invalid-token');
    }
  });

  it.each([
    [
      'exp',
      { sub: 'u', vaults: ['tntsandbox1'], exp: 'soon' },
      'Invalid token: the "exp" claim is malformed',
    ],
    ['sub', { vaults: ['tntsandbox1'] }, 'Invalid token: the "sub" claim is missing'],
    ['exp', { sub: 'u', vaults: ['tntsandbox1'] }, 'Invalid token: the "exp" claim is missing'],
    ['vaults', { sub: 'u' }, 'Invalid token: "vaults" must be a non-empty array of 11-character vault ids'],
    [
      'vaults',
      { sub: 'u', vaults: [] },
      'Invalid token: "vaults" must be a non-empty array of 11-character vault ids',
    ],
    [
      'vaults',
      { sub: 'u', vaults: ['tnt'] },
      'Invalid token: "vaults" must be a non-empty array of 11-character vault ids',
    ],
    [
      'vaults',
      { sub: 'u', vaults: 'tntsandbox1' },
      'Invalid token: "vaults" must be a non-empty array of 11-character vault ids',
    ],
    [
      'scope',
      { sub: 'u', vaults: ['tntsandbox1'], scope: ['cards:read'] },
      'Invalid token: "scope" must be a space-separated string of scope names',
    ],
  ] as [string, Record<string, unknown>, string][])(
    'refuses a token with a missing or malformed %s claim',
    async (claim, claims, message) => {
      const payload: JWTPayload = { ...claims };
      if (!('exp' in claims) && claim !== 'exp') payload.exp = nowS() + 60;
      const error = await rejection(verify(`Bearer ${await sign(payload)}`));
      expect(error.code).toBe('invalid-token');
      expect(error.message).toBe(message);
    },
  );

  it('checks issuer and audience when configured', async () => {
    const strict = createTokenVerifier({
      jwtSecret: SECRET,
      issuer: 'https://issuer.test',
      audience: 'cardgraph',
    });
    const claims = { sub: 'u', vaults: ['tntsandbox1'], exp: nowS() + 60 };
    const good = await sign({ ...claims, iss: 'https://issuer.test', aud: 'cardgraph' });
    expect((await strict(`Bearer ${good}`))?.subject).toBe('u');
    const wrongIssuer = await sign({ ...claims, iss: 'https://other.test', aud: 'cardgraph' });
    expect((await rejection(strict(`Bearer ${wrongIssuer}`))).message).toBe(
      'Invalid token: the "iss" claim does not match',
    );
    const noAudience = await sign({ ...claims, iss: 'https://issuer.test' });
    expect((await rejection(strict(`Bearer ${noAudience}`))).message).toBe(
      'Invalid token: the "aud" claim is missing',
    );
  });
});

describe('createTokenVerifier with a JWKS', () => {
  let server: Server;
  let jwksUrl: string;
  let privateKey: CryptoKey;
  let requests = 0;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'key-1', alg: 'ES256', use: 'sig' };
    server = createServer((req, res) => {
      requests++;
      if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const es256 = (claims: JWTPayload, signingKey: CryptoKey, kid = 'key-1') =>
    new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid }).sign(signingKey);

  it('verifies a token signed by a key of the key set', async () => {
    const verify = createTokenVerifier({ jwksUrl });
    const token = await es256(
      { sub: 'svc', scope: 'cards:read', vaults: ['tntsandbox2'], exp: nowS() + 60 },
      privateKey,
    );
    const viewer = await verify(`Bearer ${token}`);
    expect(viewer?.subject).toBe('svc');
    expect(viewer?.vaults).toEqual(['tntsandbox2']);
    expect(requests).toBeGreaterThanOrEqual(1);
  });

  it('refuses a token signed by another key, or with HS256', async () => {
    const verify = createTokenVerifier({ jwksUrl });
    const other = await generateKeyPair('ES256');
    const claims = { sub: 'svc', vaults: ['tntsandbox2'], exp: nowS() + 60 };
    const forged = await es256(claims, other.privateKey);
    expect((await rejection(verify(`Bearer ${forged}`))).message).toBe(
      'Invalid token: signature verification failed',
    );
    const unknownKid = await es256(claims, other.privateKey, 'key-2');
    expect((await rejection(verify(`Bearer ${unknownKid}`))).code).toBe('invalid-token');
    const hs256 = await sign(claims);
    expect((await rejection(verify(`Bearer ${hs256}`))).message).toBe(
      'Invalid token: signing algorithm not allowed',
    );
  });

  it('throws a non-authentication error when the key set cannot be fetched', async () => {
    const verify = createTokenVerifier({ jwksUrl: jwksUrl.replace('jwks.json', 'missing.json') });
    const token = await es256({ sub: 'svc', vaults: ['tntsandbox2'], exp: nowS() + 60 }, privateKey);
    const error = await verify(`Bearer ${token}`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(AuthenticationError);
  });
});

describe('createTokenVerifier: verified tokens remembered until exp', () => {
  it('answers a repeated token with the same (frozen) viewer, and refuses it once exp has passed', async () => {
    let clock = Date.now();
    const verify = createTokenVerifier({ jwtSecret: SECRET }, () => clock);
    const exp = Math.floor(clock / 1000) + 60;
    const token = await sign({ sub: 'u', vaults: ['tntsandbox1'], scope: 'cards:read', exp });
    const first = await verify(`Bearer ${token}`);
    expect(await verify(`Bearer ${token}`)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // Past exp (and the clock tolerance) the remembered viewer is not handed out: jose decides again.
    clock = (exp + CLOCK_TOLERANCE_S + 1) * 1000;
    expect((await rejection(verify(`Bearer ${token}`))).code).toBe('token-expired');
    expect((await rejection(verify(`Bearer ${token}`))).code).toBe('token-expired');
  });

  it('hands out the remembered viewer synchronously (remembered) only between its verification and exp', async () => {
    let clock = Date.now();
    const verify = createTokenVerifier({ jwtSecret: SECRET }, () => clock);
    const exp = Math.floor(clock / 1000) + 60;
    const token = await sign({ sub: 'u', vaults: ['tntsandbox1'], exp });
    expect(verify.remembered?.(undefined)).toBeNull();
    expect(verify.remembered?.('  ')).toBeNull();
    expect(verify.remembered?.(`Bearer ${token}`)).toBeUndefined();
    const viewer = await verify(`Bearer ${token}`);
    expect(verify.remembered?.(`Bearer ${token}`)).toBe(viewer);
    expect(verify.remembered?.(`Bearer ${token}x`)).toBeUndefined();
    // At exp the remembered viewer is dropped; jose decides again (within its clock tolerance here).
    clock = exp * 1000;
    expect(verify.remembered?.(`Bearer ${token}`)).toBeUndefined();
    expect((await verify(`Bearer ${token}`))?.subject).toBe('u');
  });

  it('never remembers a refusal: a bad signature is refused every time', async () => {
    const verify = createTokenVerifier({ jwtSecret: SECRET });
    const forged = await sign(
      { sub: 'u', vaults: ['tntsandbox1'], exp: nowS() + 60 },
      new TextEncoder().encode('another-secret-of-at-least-thirty-two-chars'),
    );
    for (let i = 0; i < 2; i++)
      expect((await rejection(verify(`Bearer ${forged}`))).code).toBe('invalid-token');
  });

  it('keeps a token of another subject apart (keyed by the whole token)', async () => {
    const verify = createTokenVerifier({ jwtSecret: SECRET });
    const a = await sign({ sub: 'a', vaults: ['tntsandbox1'], exp: nowS() + 60 });
    const b = await sign({ sub: 'b', vaults: ['tntsandbox2'], exp: nowS() + 60 });
    expect((await verify(`Bearer ${a}`))?.subject).toBe('a');
    expect((await verify(`Bearer ${b}`))?.subject).toBe('b');
    expect((await verify(`Bearer ${a}`))?.vaults).toEqual(['tntsandbox1']);
  });
});
