import { type DestinationStream, type Logger, pino } from 'pino';
import { redactLogLine } from './redaction.ts';

export type { Logger };

/**
 * Options of {@link createLogger}.
 * - `level`: pino level name (`fatal` … `trace`, `silent`).
 * - `destination`: where JSON lines go; stdout when absent (tests pass a file stream).
 * - `name`: the component (`gateway`, `sandbox`).
 */
export interface LoggerOptions {
  level: string;
  name: string;
  destination?: DestinationStream;
}

/**
 * Paths that may carry card data or secrets in structured log objects; pino replaces their values
 * with `[redacted]`. Belt and braces: code never passes a PAN or CVC to the logger in the first place.
 */
const REDACTED_PATHS = [
  'pan',
  'cvc',
  'cvv',
  'number',
  '*.pan',
  '*.cvc',
  '*.cvv',
  '*.number',
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'client_secret',
  '*.client_secret',
  'secret',
  '*.secret',
];

/**
 * JSON logger (pino) with card-data redaction: structured paths above are censored, and every line
 * pino writes (message, serialized errors, every value at any depth) passes through
 * {@link redactLogLine}, the one redaction mechanism of src/lib/redaction.ts: PANs are masked to BIN
 * and last four, security code members become `[redacted]`.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      hooks: { streamWrite: redactLogLine },
    },
    options.destination,
  );
}
