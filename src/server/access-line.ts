import type { Logger } from '../lib/logger.ts';
import { redactPans } from '../lib/pan.ts';
import type { RequestRecord } from '../lib/request-record.ts';

/**
 * The logger access lines go through: `logger`'s child without pino's structured redaction paths
 * (src/lib/logger.ts), made once per logger. Those paths name keys (`pan`, `number`, `authorization`,
 * `secret`...) an access line never has, so walking them on every request changed nothing and cost a
 * few µs (issue 21 item 3); the child keeps the logger's stream hook, so every access line still
 * passes through `redactLogLine` (PANs masked wherever they appear), as every other line does.
 */
const accessLoggers = new WeakMap<Logger, Logger>();
function accessLogger(logger: Logger): Logger {
  let child = accessLoggers.get(logger);
  if (!child) {
    // Same level as `logger` (levels are set once, at start: src/config/server.ts `LOG_LEVEL`).
    child = logger.child({}, { redact: { paths: [] } });
    accessLoggers.set(logger, child);
  }
  return child;
}

/**
 * Writes the access line of one request (HTTP) or connection (graphql-ws): `info` (`error` for 5xx)
 * with `reqId`, `transport`, `method`, `route`, `operation` (masked names), `status`, `closeCode`
 * (sockets), `durationMs` (0.1 ms) and `errorCodes`; never the query text, the variables or a header
 * value.
 */
export function writeAccessLine(
  logger: Logger,
  line: {
    record: RequestRecord;
    method: string;
    route: string;
    status: number;
    durationMs: number;
    closeCode?: number;
  },
): void {
  const level = line.status >= 500 ? 'error' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const { record } = line;
  // Built member by member (no spread objects), in the line's order.
  const fields: Record<string, unknown> = {
    reqId: record.id,
    transport: record.transport,
    method: line.method,
    route: line.route,
  };
  if (record.operationNames.size > 0) {
    fields.operation = [...record.operationNames].map((name) => maskDigitRuns(name).slice(0, 100)).join(',');
  }
  fields.status = line.status;
  if (line.closeCode !== undefined) fields.closeCode = line.closeCode;
  fields.durationMs = Math.round(line.durationMs * 10) / 10;
  if (record.errorCodes.size > 0) {
    fields.errorCodes = [...record.errorCodes].map((code) => redactPans(code).slice(0, 64));
  }
  accessLogger(logger)[level](fields, 'request');
}

/**
 * A client-chosen name with every run of 12 or more digits cut to its first six and last four
 * (`Q4000210000192002` → `Q400021…2002`): redactPans needs word boundaries, which a GraphQL name
 * glued to a PAN does not have.
 */
function maskDigitRuns(name: string): string {
  return redactPans(name).replace(/\d{12,}/g, (digits) => `${digits.slice(0, 6)}…${digits.slice(-4)}`);
}
