import { parseArgs } from 'node:util';
import { ConfigError, EMBEDDED_DEV_JWT_SECRET, loadConfig } from '../config/index.ts';
import { issueDevToken } from './issue-dev-token.ts';
import { GATEWAY_SCOPES, UPSTREAM_SCOPES } from './viewer.ts';

const USAGE = `Usage: npm run token -- [--vault <id>]... [--scope "<names>"] [--subject <sub>] [--expires-in <s>]

Prints a client token (HS256 JWT) signed with the gateway's AUTH_JWT_SECRET (read from the environment
or .env). Only on the development defaults (UPSTREAM unset or embedded, NODE_ENV not production) does an
unset AUTH_JWT_SECRET mean the built-in development secret; a set but empty one is refused.

  --vault <id>        vault the token grants; repeat for several (default: the configured vaults)
  --scope "<names>"   space-separated scopes (default: every upstream scope: ${UPSTREAM_SCOPES.join(' ')};
                      the gateway's ${GATEWAY_SCOPES.join(' ')} only when named)
  --subject <sub>     the sub claim (default: dev-user)
  --expires-in <s>    lifetime in seconds (default: 3600)
`;

/** Streams the CLI writes to; `process.stdout`/`process.stderr` when run from the shell. */
export interface CliOutput {
  write(text: string): void;
  error(text: string): void;
}

/**
 * `npm run token`: issues a development client token with {@link issueDevToken}. The token alone
 * goes to `out.write` (so `TOKEN=$(npm run -s token)` works); everything else to `out.error`.
 * Refuses when the configuration verifies tokens with a JWKS (a token signed here would not verify),
 * when `AUTH_JWT_SECRET` is set but empty (`AUTH_JWT_SECRET=$UNSET_VARIABLE npm run token` would
 * otherwise sign with the development secret, which the gateway it is meant for rejects), and when it
 * is missing outside the embedded development defaults; the refusal names the variable.
 * @param argv the arguments after the script name.
 * @param env the environment read by loadConfig.
 * @returns the process exit code: 0 when a token was printed, 1 otherwise.
 */
export async function runTokenCli(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  out: CliOutput,
): Promise<number> {
  let values: { vault?: string[]; scope?: string; subject?: string; 'expires-in'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        vault: { type: 'string', multiple: true },
        scope: { type: 'string' },
        subject: { type: 'string', default: 'dev-user' },
        'expires-in': { type: 'string', default: '3600' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    out.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 1;
  }
  if (values.help) {
    out.error(USAGE);
    return 0;
  }

  if (env.AUTH_JWT_SECRET !== undefined && env.AUTH_JWT_SECRET.trim() === '') {
    out.error(
      'Refusing to issue a token: AUTH_JWT_SECRET is set but empty. Set it to the secret of the gateway the ' +
        'token is for (e.g. export AUTH_JWT_SECRET=…), or unset it for the development gateway of `npm start`.\n',
    );
    return 1;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      out.error(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
  if (config.auth.jwksUrl !== undefined || config.auth.jwtSecret === undefined) {
    out.error(
      'Refusing to issue a token: the gateway verifies client tokens with a JWKS (AUTH_JWKS_URL), so a token ' +
        'signed here would be rejected. Get a token from the identity provider that serves that JWKS.\n',
    );
    return 1;
  }

  // loadConfig falls back to the development secret on the development defaults only (it refuses a
  // missing AUTH_JWT_SECRET in production and in remote mode, naming it).
  const developmentSecret = config.auth.jwtSecret === EMBEDDED_DEV_JWT_SECRET;

  const expiresIn = values['expires-in'] ?? '3600';
  if (!/^\d+$/.test(expiresIn) || Number(expiresIn) < 1) {
    out.error('--expires-in must be a positive number of seconds\n');
    return 1;
  }
  const vaults = values.vault?.length ? values.vault : Object.keys(config.upstream.credentials);
  if (vaults.length === 0) {
    out.error('No vault: pass --vault <id> (UPSTREAM_CREDENTIALS names none)\n');
    return 1;
  }
  const scopes = (values.scope ?? UPSTREAM_SCOPES.join(' ')).split(/\s+/).filter(Boolean);

  try {
    const token = await issueDevToken({
      secret: config.auth.jwtSecret,
      subject: values.subject ?? 'dev-user',
      vaults,
      scopes,
      expiresInS: Number(expiresIn),
      ...(config.auth.issuer !== undefined ? { issuer: config.auth.issuer } : {}),
      ...(config.auth.audience !== undefined ? { audience: config.auth.audience } : {}),
    });
    out.write(`${token}\n`);
    if (developmentSecret) {
      out.error(
        'Signed with the development secret (AUTH_JWT_SECRET unset): only a gateway on its development defaults (npm start) accepts it.\n',
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof RangeError) {
      out.error(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

if (import.meta.main) {
  const code = await runTokenCli(process.argv.slice(2), process.env, {
    write: (text) => process.stdout.write(text),
    error: (text) => process.stderr.write(text),
  });
  process.exitCode = code;
}
