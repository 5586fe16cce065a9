import { z } from 'zod';
import { httpUrl, integer, optionalString, type SettingsSection } from './fields.ts';
import type { UpstreamProxyConfig } from './proxy.ts';
import type { SandboxSettings } from './sandbox.ts';

/** Upstream client credentials of one vault (OAuth 2.0 client credentials, contract §2). */
export interface VaultCredentials {
  clientId: string;
  clientSecret: string;
}

/** Sandbox vault credentials of contract §2, used as the default in embedded mode. */
export const SANDBOX_CREDENTIALS: Record<string, VaultCredentials> = {
  tntsandbox1: { clientId: 'sandbox-client-1', clientSecret: 'sandbox-secret-1' },
  tntsandbox2: { clientId: 'sandbox-client-2', clientSecret: 'sandbox-secret-2' },
};

/** Base addresses of the upstream areas (contract §1) and its OAuth 2.0 token endpoint. */
export interface UpstreamAddresses {
  /** `{base_url}` of the card interface. */
  cardInterfaceUrl: string;
  /** `{account_updater_url}`: account updater v1 and network tokens. */
  accountUpdaterUrl: string;
  /** `{card_enrichment_url}`. */
  cardAttributesUrl: string;
  /** `{accounts_url}`. */
  accountsUrl: string;
  /** OAuth 2.0 token endpoint. */
  tokenUrl: string;
}

/** How the gateway calls the upstream, whichever it is. */
export interface UpstreamClientSettings {
  /** Client credentials per vault id (tenant). */
  credentials: Record<string, VaultCredentials>;
  /**
   * Total deadline of one upstream call in ms: connect, retries, response headers and the whole
   * body (`UPSTREAM_TIMEOUT_MS`).
   */
  timeoutMs: number;
  /**
   * How the token request authenticates the client (`UPSTREAM_TOKEN_AUTH`): `form` sends
   * `client_id` and `client_secret` as form fields, as the provider documents (sandbox contract §8);
   * `basic` sends them as HTTP Basic (RFC 6749 §2.3.1).
   */
  tokenAuth: 'form' | 'basic';
  /** Space-separated scopes the token request asks for (`UPSTREAM_TOKEN_SCOPE`); none by default (§8). */
  tokenScope?: string;
  /** The outbound forward proxy; undefined when every call connects directly (`UPSTREAM_PROXY` unset). */
  proxy?: UpstreamProxyConfig;
}

/**
 * The upstream of a gateway that can start (src/upstream/index.ts): `remote` from `UPSTREAM_*`
 * addresses, or `embedded` once the development sandbox listens (`onSandbox` in src/config/index.ts).
 */
export interface UpstreamConfig extends UpstreamAddresses, UpstreamClientSettings {
  mode: 'remote' | 'embedded';
}

/**
 * `UPSTREAM=embedded` before the development sandbox has started: its settings, no addresses yet.
 * Only src/dev.ts starts it; src/main.ts refuses this mode (`gatewayConfig` in src/config/index.ts).
 */
export interface EmbeddedUpstreamConfig extends UpstreamClientSettings {
  mode: 'embedded';
  sandbox: SandboxSettings;
}

/** The address variables remote mode requires, in the order messages name them. */
export const UPSTREAM_ADDRESS_VARIABLES = [
  'CARD_INTERFACE_URL',
  'ACCOUNT_UPDATER_URL',
  'CARD_ATTRIBUTES_URL',
  'ACCOUNTS_URL',
  'TOKEN_URL',
] as const;

/**
 * `UPSTREAM_CREDENTIALS`: `vault=client_id:client_secret` pairs separated by commas, e.g.
 * `tntsandbox1=sandbox-client-1:sandbox-secret-1,tntsandbox2=sandbox-client-2:sandbox-secret-2`.
 */
const credentialsList = z.string().transform((raw, ctx) => {
  const out: Record<string, VaultCredentials> = {};
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z0-9]{1,64})=([^:]+):(.+)$/.exec(entry);
    if (!match) {
      ctx.addIssue({ code: 'custom', message: 'expected vault=client_id:client_secret[,…]' });
      return z.NEVER;
    }
    out[match[1]!] = { clientId: match[2]!, clientSecret: match[3]! };
  }
  return out;
});

const address = (what: string) =>
  httpUrl.optional().describe(`${what} Required when UPSTREAM=remote; the started sandbox's own otherwise.`);

/** Where the upstream is and how the gateway calls it. */
export const upstreamSettings = {
  title: 'Upstream',
  about: '',
  shape: {
    // No default here: production must choose (src/config/production.ts); development defaults to embedded.
    UPSTREAM: z
      .enum(['embedded', 'remote'])
      .optional()
      .describe(
        'embedded: `npm start` (src/dev.ts) starts the sandbox in-process and gives the gateway its addresses; remote: the addresses below. Development defaults to embedded; production requires it to be set. The production entry (`npm run serve`, the Docker image) contains no sandbox and refuses embedded.',
      ),
    CARD_INTERFACE_URL: address('Base address of the card interface.'),
    ACCOUNT_UPDATER_URL: address('Base address of the account updater and network tokens.'),
    CARD_ATTRIBUTES_URL: address('Base address of card attributes (card enrichment).'),
    ACCOUNTS_URL: address('Base address of accounts (organization members).'),
    TOKEN_URL: address('OAuth 2.0 token endpoint.'),
    UPSTREAM_CREDENTIALS: credentialsList
      .optional()
      .describe(
        'Per-vault OAuth client credentials: vault=client_id:client_secret[,…]. Required when UPSTREAM=remote; embedded default: the two sandbox vaults.',
      ),
    UPSTREAM_TIMEOUT_MS: integer(100, 300_000, 10_000).describe(
      'Total deadline of one upstream call (ms): connect, retries, headers and the whole body. An upstream that trickles its answer is cut off here with the retryable code upstream-timeout.',
    ),
    UPSTREAM_TOKEN_AUTH: z
      .enum(['form', 'basic'])
      .default('form')
      .describe(
        'How the token request authenticates: form (client_id and client_secret form fields, as the provider documents) or basic (HTTP Basic).',
      ),
    UPSTREAM_TOKEN_SCOPE: optionalString.describe(
      'Space-separated scopes the token request asks for; none unless set.',
    ),
  },
} satisfies SettingsSection;

type UpstreamEnv = z.output<z.ZodObject<typeof upstreamSettings.shape>>;

/** The vault credentials of `env`: `UPSTREAM_CREDENTIALS`, else the sandbox's in embedded mode, else none. */
export function knownCredentials(env: UpstreamEnv): Record<string, VaultCredentials> {
  return env.UPSTREAM_CREDENTIALS ?? (env.UPSTREAM === 'remote' ? {} : SANDBOX_CREDENTIALS);
}

/** Remote mode needs every address and the credentials. */
export function refineUpstream(env: UpstreamEnv, ctx: z.RefinementCtx): void {
  if (env.UPSTREAM !== 'remote') return;
  for (const key of [...UPSTREAM_ADDRESS_VARIABLES, 'UPSTREAM_CREDENTIALS'] as const) {
    if (env[key] === undefined)
      ctx.addIssue({ code: 'custom', path: [key], message: 'required when UPSTREAM=remote' });
  }
}

/**
 * The upstream of the configuration from the parsed variables: remote with its addresses, or
 * embedded with the sandbox's settings and no addresses yet.
 */
export function upstreamConfig(
  env: UpstreamEnv,
  sandbox: SandboxSettings,
  proxy: UpstreamProxyConfig | undefined,
): UpstreamConfig | EmbeddedUpstreamConfig {
  const client: UpstreamClientSettings = {
    credentials: knownCredentials(env),
    timeoutMs: env.UPSTREAM_TIMEOUT_MS,
    tokenAuth: env.UPSTREAM_TOKEN_AUTH,
    ...(env.UPSTREAM_TOKEN_SCOPE ? { tokenScope: env.UPSTREAM_TOKEN_SCOPE } : {}),
    ...(proxy ? { proxy } : {}),
  };
  if (env.UPSTREAM !== 'remote') return { mode: 'embedded', sandbox, ...client };
  return {
    mode: 'remote',
    // Required in remote mode (refineUpstream).
    cardInterfaceUrl: env.CARD_INTERFACE_URL!,
    accountUpdaterUrl: env.ACCOUNT_UPDATER_URL!,
    cardAttributesUrl: env.CARD_ATTRIBUTES_URL!,
    accountsUrl: env.ACCOUNTS_URL!,
    tokenUrl: env.TOKEN_URL!,
    ...client,
  };
}
