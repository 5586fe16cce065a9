import { z } from 'zod';
import { CARD_ID_PATTERN, cardId } from '../contracts/common.ts';
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

export { isoTimestamp, openEnum } from '../contracts/common.ts';

/**
 * A value the specification calls an alias of a PAN (v1 `number`). An upstream that sent a plain card
 * number instead would otherwise leak it, so 12 to 19 digits are masked to BIN and last four.
 */
export const aliasOrMaskedPan = z
  .string()
  .min(1)
  .transform((value) => (/^\d{12,19}$/.test(value) ? maskPan(value) : value));

/** Zod check of a card id in a response body (src/contracts/common.ts). */
export const cardIdSchema = cardId;

/**
 * Validates a caller-supplied card id before it reaches a URL.
 * @throws InvalidArgumentError (argument `cardId`) unless it is `CRD` + 1 to 64 letters or digits
 *   (src/contracts/common.ts, CARD_ID_PATTERN).
 */
export function assertCardId(id: string): void {
  if (typeof id !== 'string' || !CARD_ID_PATTERN.test(id)) {
    throw new InvalidArgumentError('cardId', 'expected CRD followed by 1 to 64 letters or digits', id);
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
