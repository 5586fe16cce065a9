import type { Logger } from '../lib/logger.ts';
import { redactPans } from '../lib/pan.ts';
import type { RequestRecord } from '../lib/request-record.ts';

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
  const { record } = line;
  const fields = {
    reqId: record.id,
    transport: record.transport,
    method: line.method,
    route: line.route,
    ...(record.operationNames.size > 0
      ? { operation: [...record.operationNames].map((name) => maskDigitRuns(name).slice(0, 100)).join(',') }
      : {}),
    status: line.status,
    ...(line.closeCode === undefined ? {} : { closeCode: line.closeCode }),
    durationMs: Math.round(line.durationMs * 10) / 10,
    ...(record.errorCodes.size > 0
      ? { errorCodes: [...record.errorCodes].map((code) => redactPans(code).slice(0, 64)) }
      : {}),
  };
  if (line.status >= 500) logger.error(fields, 'request');
  else logger.info(fields, 'request');
}

/**
 * A client-chosen name with every run of 12 or more digits cut to its first six and last four
 * (`Q4000210000192002` → `Q400021…2002`): redactPans needs word boundaries, which a GraphQL name
 * glued to a PAN does not have.
 */
function maskDigitRuns(name: string): string {
  return redactPans(name).replace(/\d{12,}/g, (digits) => `${digits.slice(0, 6)}…${digits.slice(-4)}`);
}
