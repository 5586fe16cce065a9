import { type ExecutionResult, GraphQLError } from 'graphql';
import { mapAsyncIterator } from 'graphql-yoga';
import { redactPans } from './pan.ts';

/**
 * The one redaction mechanism of cardgraph: everything that leaves the process (GraphQL errors with
 * all their extensions, HTTP error bodies, graphql-ws close reasons, log lines, span attributes,
 * stored free text) passes through these functions. Two rules, applied together:
 * - card numbers: any Luhn-valid run of 13 to 19 digits, wherever it stands in a string, is masked to
 *   BIN and last four ({@link redactPans});
 * - security codes: the value of any member named like a CVC (`cvc`, `cvv`, `cvc2`, `cvv2`, `csc`,
 *   `cid`, `securityCode`, `security_code`, `cardSecurityCode`, …) becomes `[redacted]`, since a
 *   3-4 digit code cannot be recognised by its shape.
 * GraphQL errors additionally never echo the client's invalid values ({@link redactGraphQLError}).
 */

/** Replacement of a security code's value. */
export const REDACTED = '[redacted]';

/** Member names whose values are card security codes (compared without case, `_` and `-`). */
const SECURITY_CODE_NAMES = new Set([
  'cvc',
  'cvv',
  'cvc2',
  'cvv2',
  'csc',
  'cid',
  'securitycode',
  'cardsecuritycode',
  'cardverificationcode',
  'cardverificationvalue',
]);

/** True when `name` names a card security code member (`cvc`, `CVV2`, `security_code`, …). */
export function isSecurityCodeName(name: string): boolean {
  return SECURITY_CODE_NAMES.has(name.toLowerCase().replace(/[_-]/g, ''));
}

/** Deepest nesting {@link redactCardData} walks; deeper values are replaced by `[redacted]`. */
const MAX_DEPTH = 64;

/**
 * Redacts card data in any JSON-like value: strings through {@link redactPans}; integers of 13 to 19
 * digits that look like a PAN become the masked string; members named like a security code become
 * `[redacted]`; arrays and plain objects are walked (Errors become `{ name, message }`). Other
 * objects (Date, Buffer, class instances) are returned as they are. Cycles and nesting beyond 64
 * levels are cut with `[redacted]`.
 * Use it for log objects, error extensions, HTTP error bodies and span attributes (issue 12's
 * tracing: pass each attribute value through it before it is set).
 * @returns the same value (same instance) when nothing needed masking, else a redacted copy.
 */
export function redactCardData<T>(value: T): T {
  return redactValue(value, 0, new WeakSet()) as T;
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  switch (typeof value) {
    case 'string':
      return redactPans(value);
    case 'number': {
      if (!Number.isInteger(value) || Math.abs(value) < 1e12) return value;
      const text = String(value);
      const masked = redactPans(text);
      return masked === text ? value : masked;
    }
    case 'bigint': {
      const text = value.toString();
      const masked = redactPans(text);
      return masked === text ? value : masked;
    }
    case 'object':
      break;
    default:
      return value;
  }
  if (value === null) return value;
  if (depth >= MAX_DEPTH || seen.has(value)) return REDACTED;
  if (value instanceof Error) {
    return { name: value.name, message: redactPans(value.message) };
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item, index) => {
        const redacted = redactValue(item, depth + 1, seen);
        if (redacted !== item) {
          copy ??= [...value];
          copy[index] = redacted;
        }
      });
      return copy ?? value;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return value;
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const redacted =
        isSecurityCodeName(key) && item !== null && item !== undefined
          ? REDACTED
          : redactValue(item, depth + 1, seen);
      const maskedKey = redactPans(key);
      if (redacted !== item || maskedKey !== key) {
        copy ??= { ...(value as Record<string, unknown>) };
        if (maskedKey !== key) delete copy[key];
        copy[maskedKey] = redacted;
      }
    }
    return copy ?? value;
  } finally {
    seen.delete(value);
  }
}

/**
 * Redacts one pino JSON line (pino's `hooks.streamWrite`): the line is parsed, redacted with
 * {@link redactCardData} (the top-level `time` stays a number) and serialised again.
 * @param line one JSON object followed by a newline, as pino writes it.
 * @returns the line unchanged when it needs no masking; a line that is not JSON is masked as text.
 */
export function redactLogLine(line: string): string {
  // Fast path: no digit run long enough for a PAN and no security code member.
  if (
    !/\d(?:[ \-_.x/]?\d){12}/.test(line.replace(/"time":\d+/, '')) &&
    !/"(?:[a-z_-]*)(?:cv[cv]|csc|cid|security)/i.test(line)
  ) {
    return line;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return redactPans(line);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return redactPans(line);
  const { time, ...rest } = parsed as Record<string, unknown>;
  const redacted = redactCardData(rest);
  if (redacted === rest) return line;
  const out = time === undefined ? redacted : { time, ...redacted };
  return `${JSON.stringify(out)}\n`;
}

/**
 * Extension members Yoga may add that carry raw error text (the JSON parser's message quotes the
 * request body, with any CVC in it); only their `name` is kept.
 */
const RAW_ERROR_EXTENSIONS = ['originalError'] as const;

/**
 * Redacts a GraphQL error for a client or a log: the message loses every value the client sent
 * (variable coercion and literal validation messages of graphql-js echo them, see
 * {@link withoutEchoedValues}) and is passed through {@link redactPans}; every extension is passed
 * through {@link redactCardData}; `extensions.originalError` keeps only its `name`. Locations, path
 * and the remaining extensions are kept.
 * @returns the same error when nothing changed, else a new GraphQLError.
 */
export function redactGraphQLError(error: GraphQLError): GraphQLError {
  const message = redactPans(withoutEchoedValues(error.message, error.originalError?.message));
  let extensions: Record<string, unknown> = error.extensions;
  for (const key of RAW_ERROR_EXTENSIONS) {
    const raw = extensions[key];
    if (raw !== undefined) {
      const name = raw && typeof raw === 'object' && 'name' in raw ? String(raw.name) : 'Error';
      extensions = { ...extensions, [key]: { name } };
    }
  }
  extensions = redactCardData(extensions);
  if (message === error.message && extensions === error.extensions) return error;
  return new GraphQLError(message, {
    ...(error.nodes ? { nodes: error.nodes } : {}),
    ...(error.source ? { source: error.source } : {}),
    ...(error.positions ? { positions: error.positions } : {}),
    ...(error.path ? { path: error.path } : {}),
    ...(error.originalError ? { originalError: error.originalError } : {}),
    extensions,
  });
}

/**
 * Redacts an execution result (or an array of them, for batched HTTP requests), or one part of an
 * incremental (`@defer`, `@stream`) answer: its errors with {@link redactGraphQLError} and its
 * `extensions` with {@link redactCardData}, and likewise the errors and extensions of each entry of
 * a later part's `incremental` list. `data` (and streamed `items`) are left alone: the schema never
 * returns card data (MaskedPan, masked metadata and free text).
 */
export function redactExecutionResult<R extends ExecutionResult>(result: R): R {
  const redacted = redactErrorsAndExtensions(result);
  const incremental = (result as { incremental?: unknown }).incremental;
  if (!Array.isArray(incremental)) return redacted;
  const entries = incremental.map((entry: ExecutionResult) => redactErrorsAndExtensions(entry));
  if (entries.every((entry, i) => entry === incremental[i])) return redacted;
  return { ...redacted, incremental: entries };
}

/** The errors and `extensions` of one result (or one incremental entry) redacted; itself when unchanged. */
function redactErrorsAndExtensions<R extends ExecutionResult>(result: R): R {
  const errors = result.errors?.map((e) =>
    redactGraphQLError(e instanceof GraphQLError ? e : toGraphQLError(e)),
  );
  const extensions = result.extensions ? redactCardData(result.extensions) : undefined;
  const errorsChanged = errors?.some((e, i) => e !== result.errors?.[i]) ?? false;
  if (!errorsChanged && extensions === result.extensions) return result;
  return {
    ...result,
    ...(errors ? { errors } : {}),
    ...(extensions ? { extensions } : {}),
  };
}

function toGraphQLError(error: { message: string }): GraphQLError {
  return new GraphQLError(String(error.message));
}

/**
 * Wraps an async stream of execution results (SSE, multipart and graphql-ws subscriptions) so that
 * each result passes {@link redactExecutionResult}; `return` reaches the source at once, even while
 * it waits for its next event.
 */
export function redactExecutionResults<R extends ExecutionResult>(
  source: AsyncIterable<R>,
): AsyncIterableIterator<R> {
  return mapAsyncIterator(source[Symbol.asyncIterator](), redactExecutionResult) as AsyncIterableIterator<R>;
}

/**
 * Removes client values that graphql-js quotes in its messages, so that neither a CVC nor any other
 * input is echoed back or logged:
 * - `Variable "$x" got invalid value <value> at "x.path"; <reason>` keeps the variable, the path and
 *   the reason without its value;
 * - `Expected value of type "T", found <literal>; <reason>` (literal validation) keeps type and
 *   reason;
 * - reasons of the built-in scalars and enums (`String cannot represent a non string value: <value>`,
 *   `Value <value> does not exist in "E" enum.`) lose their value.
 * @param message the error message.
 * @param reason the message of the error's `originalError` (graphql-js builds the outer message as
 *   `<prefix>; <reason>`), when it has one.
 */
export function withoutEchoedValues(message: string, reason?: string): string {
  const variable = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)" got invalid value /.exec(message);
  if (variable) {
    const name = variable[1]!;
    const head = `Variable "$${name}" got invalid value`;
    // Already without its value (redaction runs at several layers and must be idempotent).
    if (/^(?:at "|; |\.$)/.test(message.slice(variable[0].length))) return message;
    if (reason === undefined || !message.endsWith(`; ${reason}`)) return `${head}.`;
    const prefix = message.slice(0, message.length - reason.length - 2);
    const at = new RegExp(` at "${name}(?:[.[][^"]*)"$`).exec(prefix);
    return `${head}${at ? at[0] : ''}; ${withoutEchoedReason(reason)}`;
  }
  const literal = /^(Expected value of type "[^"]+"), found /.exec(message);
  if (literal) {
    if (reason !== undefined && message.endsWith(`; ${reason}`)) {
      return `${literal[1]}; ${withoutEchoedReason(reason)}`;
    }
    return `${literal[1]}.`;
  }
  return withoutEchoedReason(message);
}

function withoutEchoedReason(reason: string): string {
  const cannotRepresent = /^([^:]*? cannot represent [^:]*?): [\s\S]*$/.exec(reason);
  if (cannotRepresent) return `${cannotRepresent[1]}.`;
  const enumValue = /^Value [\s\S]* does not exist in ("[^"]+" enum\.)([\s\S]*)$/.exec(reason);
  if (enumValue) return `Value does not exist in ${enumValue[1]}${enumValue[2]}`;
  return reason;
}
