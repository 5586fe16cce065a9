import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { issueDevToken } from '../../src/auth/issue-dev-token.ts';
import { runTokenCli } from '../../src/auth/token-cli.ts';
import { createTokenVerifier } from '../../src/auth/verify-token.ts';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import { EMBEDDED_DEV_JWT_SECRET } from '../../src/config/index.ts';

async function run(argv: string[], env: Record<string, string | undefined> = { UPSTREAM: 'embedded' }) {
  let stdout = '';
  let stderr = '';
  const code = await runTokenCli(argv, env, {
    write: (text) => {
      stdout += text;
    },
    error: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

const verifyEmbedded = createTokenVerifier({ jwtSecret: EMBEDDED_DEV_JWT_SECRET });

describe('npm run token', () => {
  it('prints a token for the embedded development secret', async () => {
    const { code, stdout, stderr } = await run([
      '--vault',
      'tntsandbox1',
      '--scope',
      'cards:read cards:write',
    ]);
    expect(code).toBe(0);
    expect(stderr).toBe(
      'Signed with the development secret (AUTH_JWT_SECRET unset): only a gateway on its development defaults (npm start) accepts it.\n',
    );
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const viewer = await verifyEmbedded(`Bearer ${stdout.trim()}`);
    expect(viewer?.subject).toBe('dev-user');
    expect(viewer?.vaults).toEqual(['tntsandbox1']);
    expect([...(viewer?.scopes ?? [])]).toEqual(['cards:read', 'cards:write']);
    const expiresInS = Math.round(((viewer?.expiresAt ?? 0) - Date.now()) / 1000);
    expect(expiresInS).toBeGreaterThanOrEqual(3598);
    expect(expiresInS).toBeLessThanOrEqual(3600);
  });

  it('takes repeated vaults, a subject, a lifetime, and defaults to all six scopes', async () => {
    const { code, stdout } = await run([
      '--vault',
      'tntsandbox1',
      '--vault',
      'tntsandbox2',
      '--subject',
      'alice',
      '--expires-in',
      '120',
    ]);
    expect(code).toBe(0);
    const viewer = await verifyEmbedded(`Bearer ${stdout.trim()}`);
    expect(viewer?.subject).toBe('alice');
    expect(viewer?.vaults).toEqual(['tntsandbox1', 'tntsandbox2']);
    expect([...(viewer?.scopes ?? [])]).toEqual([...UPSTREAM_SCOPES]);
    expect(Math.round(((viewer?.expiresAt ?? 0) - Date.now()) / 1000)).toBeLessThanOrEqual(120);
  });

  it('signs with AUTH_JWT_SECRET and sets the configured issuer and audience', async () => {
    const secret = 'another-secret-of-at-least-32-characters!';
    const { code, stdout, stderr } = await run(['--vault', 'tntsandbox2'], {
      UPSTREAM: 'embedded',
      AUTH_JWT_SECRET: secret,
      AUTH_ISSUER: 'https://issuer.test',
      AUTH_AUDIENCE: 'cardgraph',
    });
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const verify = createTokenVerifier({
      jwtSecret: secret,
      issuer: 'https://issuer.test',
      audience: 'cardgraph',
    });
    expect((await verify(`Bearer ${stdout.trim()}`))?.vaults).toEqual(['tntsandbox2']);
  });

  it('refuses when the gateway verifies tokens with a JWKS', async () => {
    const { code, stdout, stderr } = await run(['--vault', 'tntsandbox1'], {
      UPSTREAM: 'embedded',
      AUTH_JWKS_URL: 'https://idp.test/.well-known/jwks.json',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      'Refusing to issue a token: the gateway verifies client tokens with a JWKS (AUTH_JWKS_URL)',
    );
  });

  it.each([{}, { UPSTREAM: 'embedded' }, { NODE_ENV: 'production', UPSTREAM: 'remote' }])(
    'refuses an empty AUTH_JWT_SECRET (%o), naming it, rather than signing with the development secret',
    async (env) => {
      for (const empty of ['', '  ']) {
        const { code, stdout, stderr } = await run(['--vault', 'tntsandbox1'], {
          ...env,
          AUTH_JWT_SECRET: empty,
        });
        expect(code).toBe(1);
        expect(stdout).toBe('');
        expect(stderr).toBe(
          'Refusing to issue a token: AUTH_JWT_SECRET is set but empty. Set it to the secret of the gateway the ' +
            'token is for (e.g. export AUTH_JWT_SECRET=…), or unset it for the development gateway of `npm start`.\n',
        );
      }
    },
  );

  it.each([
    [
      { NODE_ENV: 'production' },
      /^ {2}AUTH_JWT_SECRET: AUTH_JWT_SECRET or AUTH_JWKS_URL is required when NODE_ENV=production/m,
    ],
    [
      { NODE_ENV: 'production', UPSTREAM: 'embedded' },
      /^ {2}AUTH_JWT_SECRET: AUTH_JWT_SECRET or AUTH_JWKS_URL is required when NODE_ENV=production/m,
    ],
    [
      { UPSTREAM: 'remote' },
      /^ {2}AUTH_JWT_SECRET: AUTH_JWT_SECRET or AUTH_JWKS_URL is required when UPSTREAM=remote$/m,
    ],
  ])(
    'refuses a missing AUTH_JWT_SECRET off the development defaults (%o), naming it',
    async (env, message) => {
      const { code, stdout, stderr } = await run(['--vault', 'tntsandbox1'], env);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toMatch(message);
    },
  );

  it('refuses unknown scopes, bad vault ids, bad lifetimes and unknown options', async () => {
    expect(await run(['--vault', 'tntsandbox1', '--scope', 'cards:delete'])).toMatchObject({
      code: 1,
      stdout: '',
    });
    expect(await run(['--vault', 'tnt'])).toMatchObject({ code: 1, stdout: '' });
    expect(await run(['--vault', 'tntsandbox1', '--expires-in', '0'])).toMatchObject({ code: 1, stdout: '' });
    expect(await run(['--vaults', 'tntsandbox1'])).toMatchObject({ code: 1, stdout: '' });
  });

  it('runs as a script with node', async () => {
    const script = fileURLToPath(new URL('../../src/auth/token-cli.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--vault', 'tntsandbox1'], {
      env: { PATH: process.env.PATH, UPSTREAM: 'embedded' },
    });
    expect((await verifyEmbedded(`Bearer ${stdout.trim()}`))?.vaults).toEqual(['tntsandbox1']);
  });
});

describe('issueDevToken', () => {
  it('refuses invalid options', async () => {
    const base = {
      secret: 's'.repeat(32),
      subject: 'u',
      vaults: ['tntsandbox1'],
      scopes: ['cards:read'],
      expiresInS: 60,
    };
    await expect(issueDevToken({ ...base, vaults: [] })).rejects.toThrow(RangeError);
    await expect(issueDevToken({ ...base, subject: '' })).rejects.toThrow(RangeError);
    await expect(issueDevToken({ ...base, scopes: ['admin'] })).rejects.toThrow(RangeError);
    await expect(issueDevToken({ ...base, expiresInS: 1.5 })).rejects.toThrow(RangeError);
  });
});
