import { connect } from 'node:net';
import type { UpstreamConfig } from '../config/index.ts';

/**
 * Readiness of a gateway: ready only when every check passes. Checks run in parallel, each bounded by
 * `timeoutMs`; a failed check names a constant `code`, never a message that could carry
 * configuration or card data. The public `GET /readiness` answers {@link PublicReadiness} only; this
 * full report (vault ids, upstream origins) is served on the metrics listener (issue 20 item 4).
 */
export interface ReadinessReport {
  /** `ready` (HTTP 200) or `unavailable` (HTTP 503). */
  status: 'ready' | 'unavailable';
  /** One entry per check: `eventLog`, `shutdown`, `upstream:<origin>`, `vault:<id>`. */
  checks: Record<string, { status: 'ok' | 'failed'; code?: string }>;
}

/** What anonymous callers of the public `GET /readiness` learn: the status alone. */
export interface PublicReadiness {
  status: ReadinessReport['status'];
}

/** The anonymous view of `report`: its status, without vault ids or upstream origins. */
export function publicReadiness(report: ReadinessReport): PublicReadiness {
  return { status: report.status };
}

/** How long a readiness result is reused, ms: probes within it share one run of the checks. */
export const READINESS_CACHE_MS = 1_000;

/**
 * What {@link createReadinessProbe} checks.
 * - `eventLog`: resolves when the durable log answers (sqlite `SELECT 1`, Redis `PING`).
 * - `vaults`: configured vault ids; `token(vault)` must resolve (the token provider's cache answers
 *   while a token is fresh, so probes do not fetch tokens).
 * - `upstreamOrigins`: `http(s)://host:port` the gateway connects to (see {@link upstreamProbeOrigins});
 *   each must accept a TCP connection (a cached token says nothing about an upstream that went away).
 * - `isShuttingDown`: true once shutdown began (readiness fails first, so balancers drain this replica).
 * - `timeoutMs`: longest wait per check; default 2,000.
 * - `cacheMs`: how long one run's result answers further probes; default {@link READINESS_CACHE_MS}.
 * - `clock`: ms since the epoch; `Date.now` by default.
 */
export interface ReadinessOptions {
  eventLog: () => Promise<void>;
  vaults: readonly string[];
  token: (vault: string) => Promise<unknown>;
  upstreamOrigins: readonly string[];
  isShuttingDown: () => boolean;
  timeoutMs?: number;
  cacheMs?: number;
  clock?: () => number;
}

/**
 * Builds the readiness probe. The checks run at most once per `cacheMs`: concurrent probes share the
 * run in flight, and later ones reuse its result until it is `cacheMs` old, so a balancer probing
 * every few hundred ms, or many balancers, open at most one TCP connection per upstream origin and
 * ask the token provider once per interval (issue 20 item 4). The shutdown check is read on every
 * call, so readiness fails at once when shutdown begins.
 */
export function createReadinessProbe(options: ReadinessOptions): () => Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const cacheMs = options.cacheMs ?? READINESS_CACHE_MS;
  const clock = options.clock ?? Date.now;
  const origins = [...new Set(options.upstreamOrigins)];
  let last: { at: number; checks: Promise<ReadinessReport['checks']> } | undefined;

  const runChecks = async (): Promise<ReadinessReport['checks']> => {
    const checks: ReadinessReport['checks'] = {};
    const run = async (name: string, check: () => Promise<unknown>) => {
      try {
        await withTimeout(check(), timeoutMs);
        checks[name] = { status: 'ok' };
      } catch (error) {
        checks[name] = { status: 'failed', code: codeOf(error) };
      }
    };
    await Promise.all([
      run('eventLog', options.eventLog),
      ...origins.map((origin) => run(`upstream:${origin}`, () => tcpConnect(origin, timeoutMs))),
      ...options.vaults.map((vault) => run(`vault:${vault}`, () => options.token(vault))),
    ]);
    return checks;
  };

  return async () => {
    const now = clock();
    // A run still in flight is shared whatever its age; a finished one answers until cacheMs old.
    if (!last || now - last.at >= cacheMs) {
      const checks = runChecks();
      last = { at: now, checks };
      // The age counts from when the run finished, so a slow run is not followed at once by another.
      void checks.then(() => {
        if (last?.checks === checks) last.at = clock();
      });
    }
    const shutdown = options.isShuttingDown()
      ? { status: 'failed' as const, code: 'shutting-down' }
      : { status: 'ok' as const };
    const checks = { shutdown, ...(await last.checks) };
    const ready = Object.values(checks).every((check) => check.status === 'ok');
    return { status: ready ? 'ready' : 'unavailable', checks };
  };
}

/**
 * The origins readiness connects to for `upstream`: the token endpoint's and every area's base
 * address, except that an area whose calls all go through the outbound forward proxy
 * (`UPSTREAM_PROXY` for every vault, or a proxy for each vault with credentials) is checked at its
 * proxy instead (the gateway may have no direct route to it). Proxy origins carry no credentials.
 */
export function upstreamProbeOrigins(upstream: UpstreamConfig): string[] {
  const areas = [
    { address: upstream.cardInterfaceUrl, names: ['card-interface'] },
    { address: upstream.accountUpdaterUrl, names: ['account-updater', 'network-tokens'] },
    { address: upstream.cardAttributesUrl, names: ['card-attributes'] },
    { address: upstream.accountsUrl, names: ['accounts'] },
  ] as const;
  const proxy = upstream.proxy;
  if (!proxy) return [...new Set([upstream.tokenUrl, ...areas.map(({ address }) => address)].map(originOf))];
  const proxyOrigins = [...(proxy.all ? [proxy.all] : []), ...Object.values(proxy.vaults)].map(originOf);
  const everyVaultProxied =
    proxy.all !== undefined ||
    Object.keys(upstream.credentials).every((vault) => Object.hasOwn(proxy.vaults, vault));
  const proxied = new Set<string>(proxy.areas);
  const direct = areas
    .filter(({ names }) => !everyVaultProxied || !names.every((name) => proxied.has(name)))
    .map(({ address }) => originOf(address));
  return [...new Set([originOf(upstream.tokenUrl), ...direct, ...proxyOrigins])];
}

/** The `http(s)://host:port` origin of an address. */
export function originOf(address: string): string {
  const url = new URL(address);
  return `${url.protocol}//${url.host}`;
}

function tcpConnect(origin: string, timeoutMs: number): Promise<void> {
  const url = new URL(origin);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(Object.assign(new Error('connect timeout'), { code: 'timeout' }));
    });
    socket.once('error', (error) => {
      socket.destroy();
      reject(error);
    });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('check timed out'), { code: 'timeout' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A constant code for a failed check: the error's `code` when it is a short token, else `failed`. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : 'failed';
}
