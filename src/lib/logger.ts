import { type DestinationStream, type Logger, pino } from 'pino';
import { redactPans } from './pan.ts';

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
 * JSON logger (pino) with card-data redaction: structured paths above are censored, and every
 * message string passes through {@link redactPans} so a digit run that looks like a PAN is masked to
 * BIN and last four.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      hooks: {
        logMethod(args, method) {
          const masked = args.map((arg) => (typeof arg === 'string' ? redactPans(arg) : arg));
          return method.apply(this, masked as Parameters<typeof method>);
        },
      },
    },
    options.destination,
  );
}
