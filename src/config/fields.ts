import { isIP } from 'node:net';
import { z } from 'zod';
import { VAULT_ID_PATTERN } from '../contracts/common.ts';

/**
 * The zod building blocks the configuration modules share. Every value they parse arrives after
 * {@link parseSettings} (src/config/parse.ts) has dropped empty variables, so an empty value is never
 * seen here: it is unset and its `.default()` applies.
 */

/** A TCP port, 0…65535 (0 picks a free port). */
export const port = z.coerce.number().int().min(0).max(65535);

/** An `http://` or `https://` address. */
export const httpUrl = z.url({ protocol: /^https?$/ });

/** A `redis://` or `rediss://` address. */
export const redisUrl = z.url({ protocol: /^rediss?$/ });

/** An integer variable within [min, max], `fallback` when unset. */
export const integer = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** A comma-separated list: items trimmed, empty ones dropped. */
export const commaList = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);

/** A string variable that may be unset (an empty value is unset too). */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** A switch variable: `on` or `off`; unset takes the default the setting's description gives. */
export const onOff = optionalString.pipe(z.enum(['on', 'off']).optional());

/** pino's levels, as `LOG_LEVEL` names them. */
export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

/** A comma-separated list of 11-character vault ids. */
export const vaultIdList = commaList.pipe(
  z.array(z.string().regex(VAULT_ID_PATTERN, 'each must be an 11-character vault id')),
);

/**
 * W3C Baggage-style `key=value` pairs separated by commas (values percent-decoded), the format of
 * `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES`.
 */
export const keyValueList = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const out: Record<string, string> = {};
    for (const entry of (raw ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const at = entry.indexOf('=');
      if (at <= 0) {
        ctx.addIssue({ code: 'custom', message: 'expected key=value[,…]' });
        return z.NEVER;
      }
      try {
        out[decodeURIComponent(entry.slice(0, at).trim())] = decodeURIComponent(entry.slice(at + 1).trim());
      } catch {
        ctx.addIssue({ code: 'custom', message: 'bad percent-encoding' });
        return z.NEVER;
      }
    }
    return out;
  });

/** An IPv4/IPv6 address, or a CIDR range (`address/prefix`, prefix within the family's bits). */
export function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The variables of one concern: each variable's name and its zod shape, described with `.describe()`. */
export type SettingsShape = Record<string, z.ZodType>;

/**
 * One concern's variables as `.env.example` lists them (scripts/env-example.ts): a heading, a
 * paragraph about them all, and the shape whose `.describe()` texts and `.default()` values it prints.
 */
export interface SettingsSection {
  /** Heading, e.g. `Upstream`. */
  title: string;
  /** What the variables have in common, in words for an operator; may be empty. */
  about: string;
  shape: SettingsShape;
}
