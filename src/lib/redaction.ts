import { type ExecutionResult, GraphQLError } from 'graphql';
import { mapAsyncIterator } from 'graphql-yoga';
import { isDigitsAndSeparators, mayHoldPan, redactPans } from './pan.ts';

/**
 * The one redaction mechanism of cardgraph: everything that leaves the process (GraphQL errors with
 * all their extensions, HTTP error bodies, graphql-ws close reasons, log lines, span attributes,
 * stored free text, every value read from a webhook notification) passes through these functions.
 * Two rules, applied together:
 * - card numbers: any Luhn-valid run of 13 to 19 digits, however its digits are written and
 *   separated, wherever it stands in a string, and split over array items (or sibling members of a
 *   stored notification body), is masked to BIN and last four ({@link redactPans});
 * - security codes: the value of any member named like a CVC (`cvc`, `cvv`, `cvc2`, `cid`, `csc`,
 *   `security code`, `verification value`, in any case, with any separators and prefixes:
 *   {@link isSecurityCodeName}), of a name/value pair naming one, or written after such a name in
 *   text, becomes `[redacted]`, since a 3-4 digit code cannot be recognised by its shape.
 * GraphQL errors additionally never echo the client's invalid values ({@link redactGraphQLError}).
 * docs/security.md describes what this means for notifications.
 */

/** Replacement of a security code's value. */
export const REDACTED = '[redacted]';

/** Words that name a card security code when they stand as a word of a member name. */
const SECURITY_CODE_WORDS = /^(?:cvc|cvv|csc|cid)2?$/;

/**
 * True when `name` names a card security code member, whatever its case, separators and prefixes or
 * suffixes: it holds `cvc`, `cvv`, `csc` (and their `2` forms), `security code` or `verification
 * value` / `verification code` once case and every character but letters and digits are dropped
 * (`card_cvc`, `cvcNumber`, `CVV2`, `cvv_code`, `security-code-value`, `verification_value`,
 * `cardSecurityCode`), or `cid` as a word of its own (`cid`, `card_cid`, `cardCid`, `cidNumber`; not
 * `docId` or `acid`).
 */
export function isSecurityCodeName(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  const compact = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (/cv[cv]|csc|securitycode|verification(?:value|code|number)/.test(compact)) return true;
  if (!compact.includes('cid')) return false;
  if (/(?:^|card|payment)cid2?(?:$|number|code|value|no|num)/.test(compact)) return true;
  // Words: split at separators and at lower-to-upper case changes.
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((word) => SECURITY_CODE_WORDS.test(word));
}

/** `word` as a pattern of either case per letter (no `i` flag, so `cid` can look at its neighbours' case). */
function anyCase(word: string): string {
  return [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');
}

/** Characters that may stand between a security code's name and its value in text (JSON escapes included). */
const CODE_GAP = String.raw`(?:[\s"'\\:=,;|\[\](){}<>#.\-/*\u200b-\u200d\u2060\ufeff]|\\[nrt"\\/]|\\u[0-9a-fA-F]{4}){0,16}`;

/**
 * A security code written in text after its name: `cvv: 123`, `CVC2=1234`, `"card_cvc":"123"`,
 * `{\"cvcNumber\":\"123\"}` (a JSON-encoded member), `security code 123`, `"name":"cvv","value":"123"`.
 * Group 1 is everything before the digits, group 2 the digits (any Unicode decimal digits).
 */
const SECURITY_CODE_IN_TEXT = new RegExp(
  `((?:(?:${anyCase('cvc')}|${anyCase('cvv')}|${anyCase('csc')})2?` +
    `|(?<![A-Za-z])${anyCase('cid')}2?(?![a-z])|(?<=[a-z0-9_])C[iI][dD]2?(?![a-z])` +
    `|${anyCase('secur')}(?:${anyCase('ity')})?[\\s_.\\-]*${anyCase('code')}` +
    `|${anyCase('verification')}[\\s_.\\-]*(?:${anyCase('value')}|${anyCase('code')}|${anyCase('number')}))` +
    `(?:[_\\-. ]?[A-Za-z]+){0,3}${CODE_GAP}(?:(?:${anyCase('value')}|${anyCase('val')}|${anyCase('data')}|${anyCase('text')}|${anyCase('is')}|v)${CODE_GAP})?)` +
    `(\\p{Nd}{3,4})(?!\\p{Nd})`,
  'gu',
);

/** Quick test before {@link SECURITY_CODE_IN_TEXT}: a name it could match. */
const SECURITY_CODE_HINT = /cv[cv]|csc|cid|secur|verif/i;

/**
 * Replaces by `[redacted]` every security code written after its name in free text (see
 * {@link SECURITY_CODE_IN_TEXT}); a 3-4 digit code cannot be recognised by its shape alone.
 * @returns the same instance when nothing changed.
 */
export function redactSecurityCodesInText(text: string): string {
  if (!SECURITY_CODE_HINT.test(text)) return text;
  SECURITY_CODE_IN_TEXT.lastIndex = 0;
  return text.replace(SECURITY_CODE_IN_TEXT, (_match, before: string) => `${before}${REDACTED}`);
}

/**
 * The one masker of free text: card numbers however written ({@link redactPans}) and security codes
 * written after their name ({@link redactSecurityCodesInText}).
 * @returns the same instance when nothing needed masking.
 */
export function redactCardText(text: string): string {
  return redactSecurityCodesInText(redactPans(text));
}

/** Deepest nesting {@link redactCardData} walks; deeper values are replaced by `[redacted]`. */
const MAX_DEPTH = 64;

/**
 * Member names whose value names another member of the same object (`{"name":"cvv","value":"123"}`):
 * when such a member names a security code, the object's other values are the code.
 */
const PAIR_NAME_MEMBERS = new Set([
  'name',
  'key',
  'field',
  'fieldname',
  'type',
  'label',
  'attribute',
  'attr',
  'param',
  'parameter',
  'id',
  'k',
  'n',
]);

/** Options of {@link redactCardData}. */
export interface RedactCardDataOptions {
  /**
   * Also read the member names and string values of each object, in order, as one digit sequence
   * (a card number split over sibling members: `{"a":"4000","b":"0566",…}`). Array items are always
   * read so. Off for log lines and errors, whose numeric siblings (BIN beside last four) would
   * otherwise be taken for a card number; on for stored notification bodies.
   */
  joinMembers?: boolean;
}

/**
 * Redacts card data in any JSON-like value, the one masker of everything that leaves a
 * notification, a log line or an error:
 * - strings through {@link redactCardText} (card numbers however written, security codes after
 *   their name); a string holding JSON (`"{\"cvc\":\"123\"}"`, at any depth) is decoded, redacted as
 *   a value and encoded again;
 * - integers of 13 to 19 digits that look like a PAN become the masked string;
 * - members named like a security code ({@link isSecurityCodeName}) become `[redacted]`, and so do
 *   the other values of a name/value pair naming one (`{"name":"cvv","value":"123"}`, `["cvv","123"]`);
 * - a card number split over array items (`["4000","0566","5566","5556"]`), and with
 *   `joinMembers` over sibling members, is masked in the items that hold its digits (a number item
 *   becomes the masked string);
 * - arrays and plain objects are walked (Errors become `{ name, message }`). Other objects (Date,
 *   Buffer, class instances) are returned as they are. Cycles and nesting beyond 64 levels are cut
 *   with `[redacted]`.
 * Use it for log objects, error extensions, HTTP error bodies, span attributes and stored bodies.
 * @returns the same value (same instance) when nothing needed masking, else a redacted copy.
 */
export function redactCardData<T>(value: T, options: RedactCardDataOptions = {}): T {
  return redactValue(value, 0, new WeakSet(), options.joinMembers === true) as T;
}

function redactString(value: string, depth: number, seen: WeakSet<object>, joinMembers: boolean): string {
  const first = value.trimStart()[0];
  if ((first === '{' || first === '[' || first === '"') && value.length >= 2 && depth < MAX_DEPTH) {
    let decoded: unknown;
    let isJson = true;
    try {
      decoded = JSON.parse(value);
    } catch {
      isJson = false;
    }
    if (isJson) {
      const redacted = redactValue(decoded, depth + 1, seen, joinMembers);
      if (redacted !== decoded) return redactCardText(JSON.stringify(redacted));
    }
  }
  return redactCardText(value);
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>, joinMembers: boolean): unknown {
  switch (typeof value) {
    case 'string':
      return redactString(value, depth, seen, joinMembers);
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
    return { name: value.name, message: redactCardText(value.message) };
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item, index) => {
        const previous = value[index - 1];
        const redacted =
          typeof previous === 'string' && isSecurityCodeName(previous) && isScalar(item)
            ? REDACTED
            : redactValue(item, depth + 1, seen, joinMembers);
        if (redacted !== item) {
          copy ??= [...value];
          copy[index] = redacted;
        }
      });
      const items = copy ?? value;
      const joined = maskSplitNumbers(items.map((item) => (isJoinableNumber(item) ? String(item) : item)));
      if (joined === undefined) return items;
      return joined.map((item, index) => (item === undefined ? items[index] : item));
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return value;
    const entries = Object.entries(value);
    const pairNamesCode = entries.some(
      ([key, item]) =>
        PAIR_NAME_MEMBERS.has(key.toLowerCase().replace(/[^a-z]/g, '')) &&
        typeof item === 'string' &&
        isSecurityCodeName(item),
    );
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of entries) {
      const isPairName =
        pairNamesCode &&
        PAIR_NAME_MEMBERS.has(key.toLowerCase().replace(/[^a-z]/g, '')) &&
        typeof item === 'string';
      const redacted =
        (isSecurityCodeName(key) || (pairNamesCode && !isPairName)) && item !== null && item !== undefined
          ? REDACTED
          : redactValue(item, depth + 1, seen, joinMembers);
      const maskedKey = redactCardText(key);
      if (redacted !== item || maskedKey !== key) {
        copy ??= { ...(value as Record<string, unknown>) };
        if (maskedKey !== key) delete copy[key];
        copy[maskedKey] = redacted;
      }
    }
    const object = copy ?? (value as Record<string, unknown>);
    if (!joinMembers) return object;
    // String values in order, with the names that are digits too: a number split over members, or
    // over their names. A name with letters neither joins nor ends a sequence; any other value ends it.
    const keys = Object.keys(object);
    const sequence: unknown[] = [];
    const slots: { key: string; isName: boolean }[] = [];
    for (const key of keys) {
      if (isDigitsAndSeparators(key)) {
        sequence.push(key);
        slots.push({ key, isName: true });
      }
      sequence.push(object[key]);
      slots.push({ key, isName: false });
    }
    const joined = maskSplitNumbers(sequence);
    if (joined === undefined) return object;
    const names = new Map<string, string>();
    const values = new Map<string, unknown>();
    slots.forEach((slot, index) => {
      const masked = joined[index];
      if (masked === undefined) return;
      if (slot.isName) names.set(slot.key, masked as string);
      else values.set(slot.key, masked);
    });
    const rebuilt: Record<string, unknown> = {};
    for (const key of keys) rebuilt[names.get(key) ?? key] = values.has(key) ? values.get(key) : object[key];
    return rebuilt;
  } finally {
    seen.delete(value);
  }
}

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint';
}

function isJoinableNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Masks card numbers whose digits are spread over consecutive items of `items` (strings of digits
 * and separators only; any other item ends a sequence): each sequence of two or more such items is
 * read by {@link redactPans} as one text, the items separated by a space.
 * @returns the items with masked ones replaced (undefined where unchanged), or undefined when none changed.
 */
function maskSplitNumbers(items: readonly unknown[]): (unknown | undefined)[] | undefined {
  let out: (unknown | undefined)[] | undefined;
  let start = 0;
  const flush = (end: number) => {
    if (end - start >= 2) {
      const parts = items.slice(start, end) as string[];
      const joined = parts.join(' ');
      const masked = redactPans(joined);
      if (masked !== joined) {
        out ??= Array.from({ length: items.length }, () => undefined);
        let at = 0;
        parts.forEach((part, k) => {
          const piece = masked.slice(at, at + part.length);
          if (piece !== part) out![start + k] = piece;
          at += part.length + 1;
        });
      }
    }
  };
  items.forEach((item, index) => {
    if (typeof item === 'string' && isDigitsAndSeparators(item)) return;
    flush(index);
    start = index + 1;
  });
  flush(items.length);
  return out;
}

/**
 * Redacts one pino JSON line (pino's `hooks.streamWrite`): the line is parsed, redacted with
 * {@link redactCardData} (the top-level `time` stays a number) and serialised again.
 * @param line one JSON object followed by a newline, as pino writes it.
 * @returns the line unchanged when it needs no masking; a line that is not JSON is masked as text.
 */
export function redactLogLine(line: string): string {
  // Fast path: no digit stretch long enough for a PAN and no name of a security code.
  if (!mayHoldPan(line.replace(/"time":\d+/, '')) && !SECURITY_CODE_HINT.test(line)) return line;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return redactCardText(line);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return redactCardText(line);
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
  const message = redactCardText(withoutEchoedValues(error.message, error.originalError?.message));
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
