import { connect } from 'node:net';

/**
 * Readiness of a gateway (`GET /readiness`): ready only when every check passes. Checks run in
 * parallel, each bounded by `timeoutMs`; a failed check names a constant `code`, never a message
 * that could carry configuration or card data.
 */
export interface ReadinessReport {
  /** `ready` (HTTP 200) or `unavailable` (HTTP 503). */
  status: 'ready' | 'unavailable';
  /** One entry per check: `eventLog`, `shutdown`, `upstream:<origin>`, `vault:<id>`. */
  checks: Record<string, { status: 'ok' | 'failed'; code?: string }>;
}

/**
 * What {@link createReadinessProbe} checks.
 * - `eventLog`: resolves when the durable log answers (sqlite `SELECT 1`, Redis `PING`).
 * - `vaults`: configured vault ids; `token(vault)` must resolve (the token provider's cache answers
 *   while a token is fresh, so probes do not fetch tokens).
 * - `upstreamOrigins`: `http(s)://host:port` of every upstream area and the token endpoint; each must
 *   accept a TCP connection (a cached token says nothing about an upstream that went away).
 * - `isShuttingDown`: true once shutdown began (readiness fails first, so balancers drain this replica).
 * - `timeoutMs`: longest wait per check; default 2,000.
 */
export interface ReadinessOptions {
  eventLog: () => Promise<void>;
  vaults: readonly string[];
  token: (vault: string) => Promise<unknown>;
  upstreamOrigins: readonly string[];
  isShuttingDown: () => boolean;
  timeoutMs?: number;
}

/** Builds the readiness probe; each call runs every check afresh. */
export function createReadinessProbe(options: ReadinessOptions): () => Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const origins = [...new Set(options.upstreamOrigins)];
  return async () => {
    const checks: ReadinessReport['checks'] = {};
    const run = async (name: string, check: () => Promise<unknown>) => {
      try {
        await withTimeout(check(), timeoutMs);
        checks[name] = { status: 'ok' };
      } catch (error) {
        checks[name] = { status: 'failed', code: codeOf(error) };
      }
    };
    checks.shutdown = options.isShuttingDown()
      ? { status: 'failed', code: 'shutting-down' }
      : { status: 'ok' };
    await Promise.all([
      run('eventLog', options.eventLog),
      ...origins.map((origin) => run(`upstream:${origin}`, () => tcpConnect(origin, timeoutMs))),
      ...options.vaults.map((vault) => run(`vault:${vault}`, () => options.token(vault))),
    ]);
    const ready = Object.values(checks).every((check) => check.status === 'ok');
    return { status: ready ? 'ready' : 'unavailable', checks };
  };
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
