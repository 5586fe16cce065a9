import { z } from 'zod';
import {
  cardCheckDocument,
  documentedCardCheckRequest,
  documentedEnrolRequest,
  type merchant as merchantAnswer,
  merchantIdOf,
  v1CardDocument,
} from '../../contracts/account-updater.ts';
import { type billingAddress, FORMAT_PRESERVING_ALIAS_PATTERN, isPanAlias } from '../../contracts/common.ts';
import { type CamelCaseKeys, camelCaseKeys, snakeCaseKeys } from '../../lib/case.ts';
import { maskedPanOf, redactPans } from '../../lib/pan.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { JsonReviver } from '../http.ts';
import { withoutUndefined } from '../wire.ts';

/**
 * The account updater v1 client's view of its contract (src/contracts/account-updater.ts): answers
 * parsed with the contract's schemas, in the documented form or the specification's (sandbox contract
 * §8: tolerant reader), and projected into camelCase domain values; requests built in the documented
 * form only and checked against what the provider accepts before they leave (strict writer). No
 * domain value holds a PAN or CVC: a plain card number an answer carries is masked to BIN and last
 * four here (the card interface check's rule, `maskedPanOf` in src/lib/pan.ts), a CVV is dropped.
 */

/**
 * JSON reviver of v1 answers: a JSON number under `number` or `cvv` is kept as its source text, so a
 * 19-digit PAN the documented card check answers (sandbox contract §8) keeps every digit until it is
 * masked. Values of other members are untouched.
 */
export const v1AnswerReviver: JsonReviver = (key, value, context) =>
  typeof value === 'number' && (key === 'number' || key === 'cvv') && context?.source !== undefined
    ? context.source
    : value;

/**
 * The card number of a v1 answer, as the domain may hold it:
 * - an alias in a documented form (`isPanAlias`: `tok_…`, format-preserving, all-digit non-PAN) →
 *   `numberAlias`, plus `maskedNumber` (BIN, `*`, last four) when format-preserving;
 * - a plain PAN (digits, or a JSON number read as its source text) → `maskedNumber` only;
 * - anything else → `numberAlias` when no card number hides in it, otherwise nothing.
 */
export function cardNumberOf(value: string | number): { numberAlias?: string; maskedNumber?: string } {
  if (typeof value === 'string' && isPanAlias(value)) {
    return FORMAT_PRESERVING_ALIAS_PATTERN.test(value)
      ? { numberAlias: value, maskedNumber: `${value.slice(0, 6)}******${value.slice(-4)}` }
      : { numberAlias: value };
  }
  const masked = maskedPanOf(value);
  if (masked !== undefined) return { maskedNumber: masked };
  return typeof value === 'string' && redactPans(value) === value ? { numberAlias: value } : {};
}

/**
 * Merchant of a v1 answer (spec "Merchant object (version 1)"; sandbox contract §8):
 * `serviceMerchantId` (the wire's `vgs_merchant_id`, or the specification's `service_merchant_id`),
 * `subMerchantName`, `subMerchantMid` (a number). Absent or null members are left out.
 */
export interface Merchant {
  serviceMerchantId?: string;
  subMerchantName?: string;
  subMerchantMid?: number;
}

function merchantOf(wire: z.output<typeof merchantAnswer>): Merchant {
  const id = merchantIdOf(wire);
  return withoutUndefined({
    serviceMerchantId: id,
    subMerchantName: wire.sub_merchant_name ?? undefined,
    subMerchantMid: wire.sub_merchant_mid ?? undefined,
  });
}

/** Billing address of a v1 card (also network token `holder_info.billing_address`). */
export type BillingAddress = CamelCaseKeys<z.output<typeof billingAddress>>;

/**
 * A v1 card (spec "Card (account updater, version 1)"; docs/gap-decisions.md "Account updater v1"):
 * `id` (`CRD…`), `name`, `numberAlias` (the alias; should the provider ever answer a plain PAN, its
 * masked form), `maskedNumber` (BIN and last four, when the number shows them), `expMonth`, `expYear`,
 * `billingAddress`, `merchant`, `capabilities`, `state` (`enrolling`, `enrolled`; others kept),
 * `event` (latest network event; `au_card.enrolling` while enrolling; others kept),
 * `createdAt`/`updatedAt` (ISO 8601 UTC with milliseconds). Members the answer lacks are absent.
 */
export const cardEnvelopeSchema = v1CardDocument.transform((card, ctx) => {
  const { numberAlias, maskedNumber } = cardNumberOf(card.number);
  const alias = numberAlias ?? maskedNumber;
  if (alias === undefined) {
    // The issue names the member only: the value may be card data.
    ctx.addIssue({ code: 'custom', message: 'expected an alias of a card number', path: ['number'] });
    return z.NEVER;
  }
  return {
    id: card.id,
    ...(card.name == null ? {} : { name: card.name }),
    numberAlias: alias,
    ...(maskedNumber === undefined ? {} : { maskedNumber }),
    expMonth: card.exp_month,
    expYear: card.exp_year,
    ...(card.billing_address == null ? {} : { billingAddress: camelCaseKeys(card.billing_address) }),
    ...(card.merchant == null ? {} : { merchant: merchantOf(card.merchant) }),
    capabilities: card.capabilities,
    createdAt: card.created_at,
    updatedAt: card.updated_at,
    state: card.state,
    ...(card.event == null ? {} : { event: card.event }),
  };
});

/** A v1 card, see {@link cardEnvelopeSchema}. */
export type AccountUpdaterCard = z.output<typeof cardEnvelopeSchema>;

/**
 * Result of `POST /card-check` (docs/gap-decisions.md "Account updater v1", Card-check result;
 * sandbox contract §8): `numberAlias` (when the provider answers an alias: the specification's
 * reading), `maskedNumber` (BIN and last four: of the plain PAN the documented answer carries, or of
 * a format-preserving alias), `expMonth`, `expYear`, `merchant`, `failureCode` (absent on success),
 * `event` (`au_card.valid`, `au_card.updated`, …; others kept), `name` when echoed. The CVV the
 * documented answer echoes is dropped here and never part of it.
 */
export const cardCheckEnvelopeSchema = cardCheckDocument.transform((result) => ({
  ...(result.name == null ? {} : { name: result.name }),
  ...cardNumberOf(result.number),
  expMonth: result.exp_month,
  expYear: result.exp_year,
  ...(result.merchant == null ? {} : { merchant: merchantOf(result.merchant) }),
  ...(result.failure_code == null ? {} : { failureCode: result.failure_code }),
  event: result.event,
}));

/** Result of a card check, see {@link cardCheckEnvelopeSchema}. */
export type CardCheckResult = z.output<typeof cardCheckEnvelopeSchema>;

/**
 * `merchant` of a request (spec "Enroll request rules" 1-3): `serviceMerchantId`, sent as the
 * documented `vgs_merchant_id` (sandbox contract §8), and `subMerchantName`.
 */
export interface MerchantInput {
  serviceMerchantId?: string;
  subMerchantName?: string;
}

/**
 * Input of v1 `POST /cards`: `name`, `number` (an alias of the PAN, `tok_…` or format-preserving, or,
 * in the sandbox only, a plain PAN; it travels in the body only), `expMonth` 1-12, `expYear`,
 * `billingAddress`, `merchant`.
 */
export interface EnrollCardInput {
  name: string;
  number: string;
  expMonth: number;
  expYear: number;
  billingAddress?: BillingAddress;
  merchant?: MerchantInput;
}

/**
 * Input of `POST /card-check` (documented card-check request, sandbox contract §8): `name` at most
 * 255 characters, `number` 13-19 characters (a PAN or a format-preserving alias, not `tok_`),
 * `expMonth` 1-12, `expYear` two digits, `cvv` `^\d{3,4}$`, `merchant`.
 */
export interface CardCheckInput {
  name?: string;
  number: string;
  expMonth: number;
  expYear: number;
  cvv?: string;
  merchant?: MerchantInput;
}

/** The documented request `merchant`: `vgs_merchant_id`, `sub_merchant_name`; nothing else. */
function merchantBody(merchant: MerchantInput | undefined) {
  if (!merchant) return undefined;
  return withoutUndefined({
    vgs_merchant_id: merchant.serviceMerchantId,
    sub_merchant_name: merchant.subMerchantName,
  });
}

/**
 * Checks a request body against what the provider accepts before it is sent (strict writer).
 * @throws InvalidArgumentError with argument `input.<member>` (camelCase path of the first bad
 *   member, e.g. `input.expYear`); the message names the rule, never the value.
 */
function acceptedBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map((key) =>
    String(key).replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
  );
  throw new InvalidArgumentError(['input', ...path].join('.'), 'the provider does not accept this value');
}

/**
 * Body of v1 `POST /cards` (spec "Endpoints, Account updater"; documented enroll-card request):
 * undefined members omitted, the merchant id as `vgs_merchant_id`.
 * @throws InvalidArgumentError (`input.<member>`) for a body the provider would refuse.
 */
export function enrollCardBody(input: EnrollCardInput): unknown {
  const { merchant, billingAddress, ...card } = input;
  return acceptedBody(
    documentedEnrolRequest,
    withoutUndefined({
      ...(snakeCaseKeys(card) as object),
      billing_address: billingAddress === undefined ? undefined : snakeCaseKeys(billingAddress),
      merchant: merchantBody(merchant),
    }),
  );
}

/**
 * Body of v1 `POST /card-check` (documented card-check request, sandbox contract §8): undefined
 * members omitted, the merchant id as `vgs_merchant_id`.
 * @throws InvalidArgumentError (`input.<member>`) for a body the provider would refuse (`exp_year`
 *   over 99, a `tok_` or malformed `number`, a `cvv` not of 3 or 4 digits, a `name` over 255).
 */
export function cardCheckBody(input: CardCheckInput): unknown {
  const { merchant, ...card } = input;
  return acceptedBody(
    documentedCardCheckRequest,
    withoutUndefined({ ...(snakeCaseKeys(card) as object), merchant: merchantBody(merchant) }),
  );
}
