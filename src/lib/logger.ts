import { GraphQLError } from 'graphql';
import { type DestinationStream, type Logger, pino } from 'pino';
import { redactCardText, redactLogLine, withoutEchoedValues } from './redaction.ts';

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

/** Yoga's logger interface (`createYoga({ logging })`), as {@link yogaLoggerOf} implements it. */
export interface YogaLogger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/**
 * Yoga's logger over pino. Yoga passes errors and request details: each is written as masked text
 * ({@link logTextOf}), never as a raw object, and a GraphQL error never with its document: its
 * `toString()` prints an excerpt of the query around the error, literals (a CVC, a card number
 * written with odd spacing) included, so only its message (without echoed values), code, path,
 * position and request id are written.
 */
export function yogaLoggerOf(logger: Logger): YogaLogger {
  const details = (args: unknown[]) => ({ yoga: args.slice(1).map(logTextOf) });
  return {
    // Yoga logs three debug lines per request: nothing is built for them below debug (issue 21 item 3).
    debug: (...args) => {
      if (logger.isLevelEnabled('debug')) logger.debug(details(args), logTextOf(args[0]));
    },
    info: (...args) => logger.info(details(args), logTextOf(args[0])),
    warn: (...args) => logger.warn(details(args), logTextOf(args[0])),
    error: (...args) => logger.error(details(args), logTextOf(args[0])),
  };
}

/**
 * One value Yoga logs, as masked text without document text: a GraphQL error as
 * `GraphQLError: <message> (code <code>, path <a.b>, at <line>:<column>, request <id>)` with the
 * values graphql-js echoes removed; another Error as `<name>: <message>`; anything else as its
 * string. Everything passes {@link redactCardText}.
 */
export function logTextOf(value: unknown): string {
  if (value instanceof GraphQLError) {
    const { code, requestId } = value.extensions;
    const facts = [
      typeof code === 'string' ? `code ${code}` : undefined,
      value.path ? `path ${value.path.join('.')}` : undefined,
      value.locations?.length
        ? `at ${value.locations.map((l) => `${l.line}:${l.column}`).join(', ')}`
        : undefined,
      typeof requestId === 'string' ? `request ${requestId}` : undefined,
    ].filter((fact) => fact !== undefined);
    const message = withoutEchoedValues(value.message, value.originalError?.message);
    return redactCardText(`${value.name}: ${message}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}`);
  }
  if (value instanceof Error) return redactCardText(`${value.name}: ${value.message}`);
  return redactCardText(String(value));
}
