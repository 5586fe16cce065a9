import { z } from 'zod';
import { cardBrandOf } from '../lib/pan.ts';

/**
 * Rules shared by several REST areas, each written once: identifiers, aliases, card data formats,
 * expiry ranges, timestamps and the error body. The area contracts (src/contracts/<area>.ts) build on
 * them; the upstream clients, the sandbox and the GraphQL input validation import them. Sources: the
 * interface specification ("Limits", resource tables), the sandbox contract and docs/gap-decisions.md.
 */

/**
 * Card id of both card areas: `CRD` + 1 to 64 letters or digits. The specification fixes the v1
 * pattern `^CRD.*$`; v1 ids are 25 characters (`CRD` + 22), the card interface's own test table has
 * 52-character ids (`CRDnKQt89XXFRQVBEzcRvkhvmhs5rpBvxkv3PbeAFPB52zFFqjCR`, sandbox contract §8), so the
 * one rule read everywhere (GraphQL arguments, upstream clients, sandbox, notifications) takes both and
 * keeps an id a safe URL path segment (docs/gap-decisions.md "Identifiers"; earlier copies fixed 22
 * after `CRD`).
 */
export const CARD_ID_PATTERN = /^CRD[A-Za-z0-9]{1,64}$/;
/** Longest card id {@link CARD_ID_PATTERN} admits, in characters: `CRD` + 64. */
export const CARD_ID_LENGTH = 67;
/** A card id (see {@link CARD_ID_PATTERN}). */
export const cardId = z.string().regex(CARD_ID_PATTERN, 'must be a card id (CRD…)');

/**
 * A `tok_` alias (spec: "tok_-prefixed form"; contract §6: `tok_sandbox_…`, the provider's live form
 * is `tok_live_…`): `tok_` then 1 to 124 letters, digits or `_`, at most 128 characters (earlier
 * copies said 120 or 124 after `tok_`; docs/gap-decisions.md "Identifiers").
 */
export const TOK_ALIAS_PATTERN = /^tok_[A-Za-z0-9_]{1,124}$/;
/** A `tok_` alias (see {@link TOK_ALIAS_PATTERN}). */
export const tokAlias = z.string().regex(TOK_ALIAS_PATTERN, 'must be a tok_ alias');

/**
 * Format-preserving alias of a PAN (spec "Card check request", `number`): six leading digits, up to
 * nine characters, a letter, up to nine characters, four trailing digits.
 */
export const FORMAT_PRESERVING_ALIAS_PATTERN = /^\d{6}[0-9A-Za-z]{0,9}[A-Za-z][0-9A-Za-z]{0,9}\d{4}$/;

/**
 * An all-digit alias of a PAN, as the provider's network token documentation shows one
 * (`9914040119524512000`, 19 digits; sandbox contract §8 "Network token `pan_alias`"): 13 to 19
 * digits. Such a value has the shape of a PAN, so {@link isPanAlias} takes it only when it does not
 * start like a card of a known family (a PAN passed by mistake, even mistyped, never becomes an alias;
 * the documented example starts with 99, which no card family uses).
 */
export const DIGIT_ALIAS_PATTERN = /^\d{13,19}$/;

/** Most characters of an alias wherever one is taken (the `tok_` form's bound, {@link TOK_ALIAS_PATTERN}). */
export const PAN_ALIAS_MAX_LENGTH = 128;

/**
 * A value safe to put as one URL path segment as it is: 1 to {@link PAN_ALIAS_MAX_LENGTH}
 * characters, none of `/`, `?`, `#`, `%`, `\`, white space or control characters, and not `.` or
 * `..` (which would move up the path). The issue 19 rule for every alias that goes into a path.
 */
export function isSafePathSegment(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= PAN_ALIAS_MAX_LENGTH &&
    value !== '.' &&
    value !== '..' &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    !/[/?#%\\\s\u0000-\u001f\u007f]/.test(value)
  );
}

/**
 * Whether `value` is an alias of a PAN in one of the documented forms (sandbox contract §6, §8): a
 * `tok_` alias (`tok_sandbox_…`, `tok_svzgzzX8SDJMRjk93GVKG6b`), a format-preserving alias
 * (`5573495XTjZP21V7312`), or an all-digit alias ({@link DIGIT_ALIAS_PATTERN},
 * `9914040119524512000`) that does not start like a card of a known family; and always a safe path
 * segment ({@link isSafePathSegment}). A plain PAN is never an alias.
 */
export function isPanAlias(value: unknown): value is string {
  if (!isSafePathSegment(value)) return false;
  if (TOK_ALIAS_PATTERN.test(value) || FORMAT_PRESERVING_ALIAS_PATTERN.test(value)) return true;
  // Digits starting like a card of a known family are taken for a PAN, Luhn-valid or mistyped.
  return DIGIT_ALIAS_PATTERN.test(value) && cardBrandOf(value) === undefined;
}

/** Vault (tenant) id: 11 letters or digits (spec, notification `tenant` 11 to 11; contract §2). */
export const VAULT_ID_PATTERN = /^[A-Za-z0-9]{11}$/;
/** A vault id (see {@link VAULT_ID_PATTERN}). */
export const vaultId = z.string().regex(VAULT_ID_PATTERN, 'must be an 11-character vault id');

/** A PAN as sent in a request body: 13 to 19 digits (docs/gap-decisions.md "Card interface"). */
export const PAN_PATTERN = /^\d{13,19}$/;
/** Card security code (spec "Limits": cvv `^\d{3,4}$`; the card interface's `cvc` alike). */
export const CVC_PATTERN = /^\d{3,4}$/;
/** A CVC or CVV (see {@link CVC_PATTERN}). */
export const cvc = z.string().regex(CVC_PATTERN, 'must be 3 or 4 digits');
/** BIN as card records carry it: the first 6 digits (8 for an 8-digit IIN). */
export const BIN_PATTERN = /^\d{6}(\d{2})?$/;
/** Last four digits of a PAN or network token. */
export const LAST4_PATTERN = /^\d{4}$/;

/** Expiry month: 1 to 12. */
export const expMonth = z.int().min(1, 'must be 1 to 12').max(12, 'must be 1 to 12');
/** Two-digit expiry year (spec: card interface `exp_year`, network tokens): 0 to 99. */
export const twoDigitYear = z.int().min(0, 'must be a two-digit year').max(99, 'must be a two-digit year');

/** Year and month, `YYYY-MM` (spec "Network token": `expires_at`). */
export const YEAR_MONTH_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;
/** A `YYYY-MM` value (see {@link YEAR_MONTH_PATTERN}). */
export const yearMonth = z.string().regex(YEAR_MONTH_PATTERN, 'must be YYYY-MM');

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * Normalised forms of timestamps already read, by their upstream text: the same timestamps come back
 * on every read of a resource (a network token's `created_at` on every joined query), and the
 * normalisation (regex, `Date.parse`, `toISOString`) is a pure function of the text (issue 21 item
 * 3). Texts up to 40 characters (every accepted form but absurd fractions), at most
 * {@link NORMALISED_TIMESTAMPS_MAX} of them (cleared when full).
 */
const normalisedTimestamps = new Map<string, string>();
const NORMALISED_TIMESTAMPS_MAX = 10_000;

/**
 * An upstream timestamp, read as ISO 8601 UTC with milliseconds (`YYYY-MM-DDTHH:mm:ss.sssZ`).
 * Accepts the 24-character v1 form and the card interface's zone-less microsecond form
 * (`2026-11-21T05:01:02.123000`), which is read as UTC (docs/gap-decisions.md "Common"); digits past
 * milliseconds are truncated. Input: string; output: the normalised string.
 */
export const isoTimestamp = z
  .string()
  .regex(TIMESTAMP, 'must be an ISO 8601 timestamp')
  .transform((value, ctx) => {
    const known = normalisedTimestamps.get(value);
    if (known !== undefined) return known;
    const match = TIMESTAMP.exec(value);
    const fraction = match?.[2] ? match[2].slice(0, 4).padEnd(4, '0') : '';
    const ms = match ? Date.parse(`${match[1]}${fraction}${match[3] ?? 'Z'}`) : Number.NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'expected an ISO 8601 timestamp' });
      return z.NEVER;
    }
    const normalised = new Date(ms).toISOString();
    if (value.length <= 40) {
      if (normalisedTimestamps.size >= NORMALISED_TIMESTAMPS_MAX) normalisedTimestamps.clear();
      normalisedTimestamps.set(value, normalised);
    }
    return normalised;
  });

/**
 * An enumeration the spec leaves open ("complete enumerations not shown"): the known values are typed,
 * and any other non-empty string passes through unchanged, so an upstream value added later never
 * fails a read. Output type `T | (string & {})` (editors still suggest the known values).
 */
export function openEnum<const T extends string>(
  known: readonly [T, ...T[]],
): z.ZodType<T | (string & {}), T | (string & {})> {
  return z.union([z.enum(known), z.string().min(1)]);
}

/**
 * The v1 `billing_address` object (spec "Card (account updater, version 1)"), also network token
 * `holder_info.billing_address` (spec "Network token": same members). All members strings, optional.
 */
export const billingAddress = z.object({
  name: z.string().optional(),
  company: z.string().optional(),
  address1: z.string().optional(),
  address2: z.string().optional(),
  city: z.string().optional(),
  region: z.string().optional(),
  country: z.string().optional(),
  postal_code: z.string().optional(),
  phone: z.string().optional(),
});

/** A member of an answer's address that may be absent or `null`, read as absent (tolerant reader). */
const answerAddressLine = z
  .string()
  .nullish()
  .transform((line) => line ?? undefined);

/**
 * {@link billingAddress} as upstream answers carry it (issue 19, tolerant reader): each member may also
 * be `null`, read as absent, and unknown members are ignored, so an address line the provider leaves
 * empty never fails the read. Output type equals {@link billingAddress}'s.
 */
export const billingAddressAnswer = z.object({
  name: answerAddressLine,
  company: answerAddressLine,
  address1: answerAddressLine,
  address2: answerAddressLine,
  city: answerAddressLine,
  region: answerAddressLine,
  country: answerAddressLine,
  postal_code: answerAddressLine,
  phone: answerAddressLine,
});

/**
 * One JSON:API error object (contract §3): `status` the HTTP status as a string, `code` of the
 * specification's Errors table or of contract §3, `detail` naming fields (never a PAN or CVC), and
 * `source.pointer` (the offending request member, docs/gap-decisions.md "Common") or
 * `source.parameter` (the offending query parameter).
 */
export const errorObject = z.object({
  status: z.string().regex(/^[45]\d\d$/),
  code: z.string().min(1),
  detail: z.string(),
  source: z.union([z.object({ pointer: z.string() }), z.object({ parameter: z.string() })]).optional(),
});

/** Error body of every area (contract §3): `{"errors":[…]}`, at least one error object. */
export const errorDocument = z.object({ errors: z.array(errorObject).min(1) });
