import { createLogger, type Logger } from '../../src/lib/logger.ts';
import { isLuhnValid } from '../../src/lib/pan.ts';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox.ts';
import { AccountUpdaterClient } from '../../src/upstream/account-updater/client.ts';
import { CardInterfaceClient } from '../../src/upstream/card-interface/client.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../src/upstream/http.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import { assertNoResponseViolations } from '../sandbox/helpers.ts';

/** Sandbox vault credentials of contract §2. */
export const CREDENTIALS = {
  tntsandbox1: { clientId: 'sandbox-client-1', clientSecret: 'sandbox-secret-1' },
  tntsandbox2: { clientId: 'sandbox-client-2', clientSecret: 'sandbox-secret-2' },
};

/** A pino logger at debug level whose JSON lines are kept in `lines` (for "no PAN in logs" checks). */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    name: 'upstream-test',
    destination: { write: (line) => void lines.push(line) },
  });
  return { logger, lines };
}

/** The parsed log lines whose message is `msg`. */
export function logEntries(lines: readonly string[], msg: string): Record<string, unknown>[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.msg === msg);
}

/** Everything a test needs: a started sandbox and upstream clients pointed at it. */
export interface UpstreamFixture {
  sandbox: Sandbox;
  url: string;
  http: UpstreamHttp;
  tokens: AccessTokenProvider;
  cardInterface: CardInterfaceClient;
  accountUpdater: AccountUpdaterClient;
  logLines: string[];
  /** Sandbox request log entries for `method path` (path below the sandbox root). */
  requestsTo(method: string, path: string): number;
  close(): Promise<void>;
}

/**
 * Starts the embedded sandbox on a free port and builds the clients of contract §1's addresses.
 * @param options `timeoutMs` of the HTTP client (default 5000), `hangMs` of card 4998 (default 2000).
 */
export async function startFixture(
  options: { timeoutMs?: number; hangMs?: number } = {},
): Promise<UpstreamFixture> {
  const sandbox = createSandbox({
    port: 0,
    logger: createLogger({ level: 'silent', name: 'sandbox' }),
    webhookDelayMs: 50,
    hangMs: options.hangMs ?? 2000,
    validateResponses: true,
  });
  const { url } = await sandbox.start();
  const { logger, lines } = captureLogger();
  const http = createUpstreamHttp({ timeoutMs: options.timeoutMs ?? 5000, logger });
  const tokens = new AccessTokenProvider({ tokenUrl: `${url}/oauth/token`, credentials: CREDENTIALS, http });
  return {
    sandbox,
    url,
    http,
    tokens,
    cardInterface: new CardInterfaceClient({ baseUrl: `${url}/card-interface`, tokens, http }),
    accountUpdater: new AccountUpdaterClient({ baseUrl: `${url}/account-updater`, tokens, http }),
    logLines: lines,
    requestsTo: (method, path) =>
      sandbox.requests().filter((r) => r.method === method && r.path === path).length,
    async close() {
      await sandbox.stop();
      await http.close();
      assertNoResponseViolations(sandbox);
    },
  };
}

/**
 * A Luhn-valid PAN of `length` digits starting with `prefix` and ending with `suffix` (the sandbox picks
 * test scenarios by the last four digits), adjusting the digit just before the suffix.
 */
export function panWith(prefix: string, suffix: string, length: number): string {
  const fill = '0'.repeat(length - prefix.length - suffix.length - 1);
  for (let d = 0; d <= 9; d++) {
    const pan = `${prefix}${fill}${d}${suffix}`;
    if (isLuhnValid(pan)) return pan;
  }
  throw new Error('unreachable: one digit always satisfies Luhn');
}

/** Runs `work` and returns what it rejected with; fails when it resolves. */
export async function rejectionOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** True when `text` holds a run of 12 or more consecutive digits (an unmasked card number). */
export function containsDigitRun(text: string): boolean {
  return /\d{12,}/.test(text);
}
