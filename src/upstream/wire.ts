import { z } from 'zod';
import { maskPan } from '../lib/pan.ts';
import { InvalidArgumentError } from './errors.ts';

/**
 * Wire-format pieces shared by the upstream clients: error bodies (contract §3), timestamps
 * (docs/gap-decisions.md "Common"), card ids and URL building.
 */

const jsonApiErrorBody = z.object({
  errors: z
    .array(
      z.object({
        status: z.union([z.string(), z.number()]).optional(),
        code: z.string().min(1).optional(),
        title: z.string().optional(),
        detail: z.string().optional(),
        source: z.object({ pointer: z.string().optional() }).optional(),
      }),
    )
    .min(1),
});

const oauthErrorBody = z.object({ error: z.string().min(1), error_description: z.string().optional() });

/**
 * An upstream error body reduced to its first error: contract §3 JSON:API
 * `{"errors":[{"status","code","detail","source":{"pointer"}}]}` or the RFC 6749 token-endpoint form
 * `{"error","error_description"}` (docs/gap-decisions.md "Scopes per endpoint").
 * Output: `{ code?, detail?, pointer? }`.
 */
export const errorBodySchema = z.union([
  jsonApiErrorBody.transform(({ errors }) => {
    const first = errors[0]!;
    return { code: first.code, detail: first.detail ?? first.title, pointer: first.source?.pointer };
  }),
  oauthErrorBody.transform((body) => ({
    code: body.error,
    detail: body.error_description,
    pointer: undefined,
  })),
]);

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * An upstream timestamp normalised to ISO 8601 UTC with milliseconds (`YYYY-MM-DDTHH:mm:ss.sssZ`).
 * Accepts the 24-character v1 form and the card interface's zone-less microsecond form
 * (`2026-11-21T05:01:02.123000`), which is read as UTC (docs/gap-decisions.md "Common"); digits past
 * milliseconds are truncated.
 */
export const isoTimestamp = z.string().transform((value, ctx) => {
  const match = TIMESTAMP.exec(value);
  const fraction = match?.[2] ? match[2].slice(0, 4).padEnd(4, '0') : '';
  const ms = match ? Date.parse(`${match[1]}${fraction}${match[3] ?? 'Z'}`) : Number.NaN;
  if (Number.isNaN(ms)) {
    ctx.addIssue({ code: 'custom', message: 'expected an ISO 8601 timestamp' });
    return z.NEVER;
  }
  return new Date(ms).toISOString();
});

/**
 * A value the specification calls an alias of a PAN (v1 `number`). An upstream that sent a plain card
 * number instead would otherwise leak it, so 12 to 19 digits are masked to BIN and last four.
 */
export const aliasOrMaskedPan = z
  .string()
  .min(1)
  .transform((value) => (/^\d{12,19}$/.test(value) ? maskPan(value) : value));

/**
 * An enumeration the spec leaves open ("complete enumerations not shown"): the known values are typed,
 * and any other non-empty string passes through unchanged, so an upstream value added later never
 * fails a read. Output type `T | (string & {})` (editors still suggest the known values).
 */
export function openEnum<const T extends string>(known: readonly [T, ...T[]]): z.ZodType<T | (string & {})> {
  return z.union([z.enum(known), z.string().min(1)]);
}

/** Card ids of both card areas: `CRD` then Base62 (docs/gap-decisions.md "Identifiers"). */
const CARD_ID = /^CRD[A-Za-z0-9]*$/;
const CARD_ID_MAX_LENGTH = 128;

/** Zod check of a card id in a response body. */
export const cardIdSchema = z.string().regex(CARD_ID);

/**
 * Validates a caller-supplied card id before it reaches a URL.
 * @throws InvalidArgumentError (argument `cardId`) unless it matches `^CRD[A-Za-z0-9]*$` and is at
 *   most 128 characters.
 */
export function assertCardId(cardId: string): void {
  if (typeof cardId !== 'string' || cardId.length > CARD_ID_MAX_LENGTH || !CARD_ID.test(cardId)) {
    throw new InvalidArgumentError('cardId', 'expected CRD followed by letters and digits');
  }
}

/**
 * Joins a base address and path segments, percent-encoding each segment.
 * @example joinUrl('http://h/card-interface/', ['cards', id, 'check']) → `http://h/card-interface/cards/<id>/check`
 */
export function joinUrl(baseUrl: string, segments: readonly string[]): string {
  const base = baseUrl.replace(/\/+$/, '');
  return `${base}/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
}

/**
 * A shallow copy without the members whose value is undefined, so optional inputs are absent from
 * request bodies and optional outputs absent from domain objects.
 */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
