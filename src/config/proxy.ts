import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { commaList, type SettingsSection } from './fields.ts';

/**
 * The upstream areas whose calls may go through the vault's outbound forward proxy
 * (`UPSTREAM_PROXY_AREAS`), named as src/upstream/errors.ts `UpstreamArea` names them. The token
 * endpoint (`oauth`) is not one of them: it is always called directly.
 */
export const PROXIABLE_AREAS = [
  'card-interface',
  'account-updater',
  'network-tokens',
  'card-attributes',
  'accounts',
] as const;

/** One of {@link PROXIABLE_AREAS}. */
export type ProxiableArea = (typeof PROXIABLE_AREAS)[number];

/**
 * The vaults' outbound forward proxy (sandbox contract §8: account updater and network token calls go
 * through `https://<user>:<password>@<vault>.<environment>.verygoodproxy.com:8443`, whose TLS and the
 * intercepted upstream TLS are signed by the provider's CA).
 * - `all`: the proxy address of every vault without its own (`UPSTREAM_PROXY=<url>`);
 * - `vaults`: proxy address per vault id (`UPSTREAM_PROXY=<vault>=<url>,…`); a vault in neither
 *   connects directly;
 * - `areas`: the areas whose calls go through it (`UPSTREAM_PROXY_AREAS`, default account updater
 *   and network tokens);
 * - `caPem`: the PEM bundle of `UPSTREAM_CA_FILE`, trusted besides the system roots for the TLS to
 *   the proxy and for the upstream TLS it intercepts.
 * The addresses carry the proxy credentials: they are sent only as `Proxy-Authorization` and never
 * logged (src/upstream/http.ts names a proxy by `host:port`).
 */
export interface UpstreamProxyConfig {
  all?: string;
  vaults: Record<string, string>;
  areas: readonly ProxiableArea[];
  caPem?: string;
}

function isProxyAddress(address: string): boolean {
  if (!URL.canParse(address)) return false;
  const parsed = new URL(address);
  return (
    (parsed.protocol === 'https:' || parsed.protocol === 'http:') &&
    parsed.hostname !== '' &&
    (parsed.pathname === '' || parsed.pathname === '/') &&
    parsed.search === '' &&
    parsed.hash === ''
  );
}

/**
 * `UPSTREAM_PROXY`: one proxy address for every vault (`https://user:password@host:8443`), or
 * `vault=address` pairs separated by commas (a comma inside the credentials is percent-encoded, as
 * in any URL). Each address is `http(s)://[user[:password]@]host[:port]` with no path or query.
 * Messages never repeat a value: the addresses carry credentials.
 */
const proxyList = z.string().transform((raw, ctx): { all?: string; vaults: Record<string, string> } => {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const vaults: Record<string, string> = {};
  let all: string | undefined;
  for (const entry of entries) {
    const pair = /^([A-Za-z0-9]{1,64})=(.+)$/.exec(entry);
    const address = pair ? pair[2]! : entry;
    if (!isProxyAddress(address)) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected http(s)://[user:password@]host[:port] or vault=http(s)://…[,…] (no path or query)',
      });
      return z.NEVER;
    }
    if (pair) vaults[pair[1]!] = address;
    else all = address;
  }
  if (all !== undefined && entries.length > 1) {
    ctx.addIssue({ code: 'custom', message: 'give one address for every vault, or vault=address pairs' });
    return z.NEVER;
  }
  return { ...(all === undefined ? {} : { all }), vaults };
});

/** `UPSTREAM_CA_FILE`: a readable file of one or more PEM certificates; its text. */
const caFile = z.string().transform((path, ctx) => {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `cannot be read (${(error as NodeJS.ErrnoException).code})` });
    return z.NEVER;
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    if (blocks.length === 0) throw new Error('no certificate');
    for (const block of blocks) new X509Certificate(block);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not a PEM bundle of X.509 certificates' });
    return z.NEVER;
  }
  return pem;
});

/** The vaults' outbound forward proxy. */
export const proxySettings = {
  title: 'Outbound proxy',
  about:
    "The vaults' outbound forward proxy, e.g. https://<user>:<password>@<vault>.<environment>.verygoodproxy.com:8443. The credentials are sent as Proxy-Authorization only, never logged.",
  shape: {
    UPSTREAM_PROXY: proxyList
      .optional()
      .describe(
        'One address for every vault, or vault=address pairs separated by commas (vaults not named connect directly). Percent-encode a comma, @ or : inside the password. Unset: every call connects directly.',
      ),
    UPSTREAM_PROXY_AREAS: commaList
      .pipe(
        z
          .array(
            z.enum(PROXIABLE_AREAS, {
              error: `each area is one of ${PROXIABLE_AREAS.join(', ')} (the token endpoint is always called directly)`,
            }),
          )
          .min(1),
      )
      .default(['account-updater', 'network-tokens'])
      .describe(
        `Areas whose calls go through the proxy, comma-separated: ${PROXIABLE_AREAS.join(', ')}. The token endpoint is always called directly.`,
      ),
    UPSTREAM_CA_FILE: caFile
      .optional()
      .describe(
        "The provider's CA (PEM file), trusted besides the system roots for the TLS to the proxy and for the upstream TLS the proxy intercepts and re-signs. Needs UPSTREAM_PROXY.",
      ),
  },
} satisfies SettingsSection;

type ProxyEnv = z.output<z.ZodObject<typeof proxySettings.shape>>;

/**
 * Cross-variable rules of the proxy: the CA file needs a proxy, and every vault the proxy names
 * needs credentials (`knownVaults`, the vaults of `UPSTREAM_CREDENTIALS` or the embedded default).
 */
export function refineProxy(env: ProxyEnv, knownVaults: ReadonlySet<string>, ctx: z.RefinementCtx): void {
  if (env.UPSTREAM_CA_FILE && !env.UPSTREAM_PROXY) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM_CA_FILE'],
      message: 'is trusted for the outbound proxy only: set UPSTREAM_PROXY too',
    });
  }
  for (const vault of Object.keys(env.UPSTREAM_PROXY?.vaults ?? {})) {
    if (!knownVaults.has(vault)) {
      ctx.addIssue({
        code: 'custom',
        path: ['UPSTREAM_PROXY'],
        message: `names vault ${vault}, which has no UPSTREAM_CREDENTIALS`,
      });
    }
  }
}

/** Every proxy address of `env`, for the production policy's scheme check. */
export function proxyAddresses(env: ProxyEnv): string[] {
  if (!env.UPSTREAM_PROXY) return [];
  return [
    ...(env.UPSTREAM_PROXY.all ? [env.UPSTREAM_PROXY.all] : []),
    ...Object.values(env.UPSTREAM_PROXY.vaults),
  ];
}

/** {@link UpstreamProxyConfig} from the parsed variables; undefined when `UPSTREAM_PROXY` is unset. */
export function proxyConfig(env: ProxyEnv): UpstreamProxyConfig | undefined {
  if (!env.UPSTREAM_PROXY) return undefined;
  return {
    ...env.UPSTREAM_PROXY,
    areas: env.UPSTREAM_PROXY_AREAS,
    ...(env.UPSTREAM_CA_FILE ? { caPem: env.UPSTREAM_CA_FILE } : {}),
  };
}
