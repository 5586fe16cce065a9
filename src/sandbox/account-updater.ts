import type { z } from 'zod';
import {
  ACCOUNT_UPDATER_CAPABILITY,
  CARD_CHECK_NAME_MAX_LENGTH,
  cardCheckRequest,
  type cardCheckResult,
  ENROLLING_EVENT,
  enrolRequest,
  isCardCheckNumber,
  type merchant as merchantAnswer,
  merchantIdOf,
  type merchantRequest,
  type v1Card as v1CardAnswer,
} from '../contracts/account-updater.ts';
import type { billingAddress } from '../contracts/common.ts';
import { FORMAT_PRESERVING_ALIAS_PATTERN } from '../contracts/common.ts';
import type { SandboxWire } from '../contracts/wire-reading.ts';
import type { Logger } from '../lib/logger.ts';
import { type CardBrand, cardBrandOf, isLuhnValid } from '../lib/pan.ts';
import { VaultCardStore } from './card-store.ts';
import {
  type ErrorObject,
  HttpError,
  httpError,
  JSON_MEDIA_TYPE,
  type Router,
  readValidJsonBody,
  sendJson,
} from './http.ts';
import { isoUtc, newCardId } from './ids.ts';
import { checkScenario, enrolmentScenario, replacementPan } from './test-cards.ts';
import type { TimerSet } from './timers.ts';
import { type AliasVault, TOK_ALIAS_PATTERN } from './vault.ts';
import type { CardNotificationInput } from './webhooks.ts';

/**
 * Account updater version 1 (`{account_updater_url}` = `/account-updater`, application/json): enrol,
 * get card, card check. Spec "Account updater and network tokens, version 1"; contract §5.1-§5.3;
 * gap decisions "Account updater v1".
 */

/** Path prefix of the area in the sandbox (contract §1). */
export const ACCOUNT_UPDATER_PREFIX = '/account-updater';

/** A merchant registered for account updater in a vault (gap decisions, "Merchants"). */
export interface RegisteredMerchant {
  serviceMerchantId: string;
  subMerchantMid: number;
}

/** Merchants registered per sandbox vault: one in `tntsandbox1`, two in `tntsandbox2`. */
export const SANDBOX_MERCHANTS: Readonly<Record<string, readonly RegisteredMerchant[]>> = {
  tntsandbox1: [{ serviceMerchantId: 'SMsandbox1merchant00001', subMerchantMid: 100001 }],
  tntsandbox2: [
    { serviceMerchantId: 'SMsandbox2merchant00001', subMerchantMid: 200001 },
    { serviceMerchantId: 'SMsandbox2merchant00002', subMerchantMid: 200002 },
  ],
};

/** The merchant a v1 card or check names: the registered one with the request's `sub_merchant_name`. */
interface MerchantOut {
  serviceMerchantId: string;
  subMerchantName: string;
  subMerchantMid: number;
}

/**
 * The `merchant` member of v1 answers in the wire reading: the merchant id as `vgs_merchant_id`
 * (documented, sandbox contract §8) or `service_merchant_id` (specification).
 */
function merchantAnswerOf(merchant: MerchantOut, wire: SandboxWire): z.input<typeof merchantAnswer> {
  return {
    ...(wire === 'documented'
      ? { vgs_merchant_id: merchant.serviceMerchantId }
      : { service_merchant_id: merchant.serviceMerchantId }),
    sub_merchant_name: merchant.subMerchantName,
    sub_merchant_mid: merchant.subMerchantMid,
  };
}

/** A card check result on the wire (`cardCheckResult` of the contract, its input side). */
type CheckResult = z.input<typeof cardCheckResult>;

/**
 * `JSON.rawJSON` (Node 21+, not in the es2024 library types): a JSON number written from its digits,
 * so a 19-digit PAN the documented card check answers keeps every digit.
 */
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

type Merchant = z.output<typeof merchantRequest>;

/** A saved (non-mock) v1 card. Holds the PAN; never serialised as is. */
interface V1Card {
  id: string;
  vault: string;
  pan: string;
  name: string;
  expMonth: number;
  expYear: number;
  billingAddress?: z.output<typeof billingAddress>;
  merchant?: MerchantOut;
  state: 'enrolling' | 'enrolled';
  event: string;
  createdAtMs: number;
  updatedAtMs: number;
}

/** In-memory store of saved v1 cards, all vaults. */
export class AccountUpdaterStore extends VaultCardStore<V1Card> {
  /** True when a card of this vault with this PAN completed enrolment. */
  hasEnrolledPan(vault: string, pan: string): boolean {
    return this.someWithPan(vault, pan, (card) => card.state === 'enrolled');
  }
}

/** Dependencies of {@link registerAccountUpdaterRoutes}. */
export interface AccountUpdaterDeps {
  store: AccountUpdaterStore;
  aliases: AliasVault;
  timers: TimerSet;
  now: () => number;
  logger: Logger;
  /** Delay before an `enrolling` card completes and its notification is sent, in ms. */
  webhookDelayMs: number;
  /** Starts delivery of a notification to the vault's endpoints. */
  notify: (input: CardNotificationInput) => void;
  /** True when the PAN is enrolled in the vault through another area (card interface subscription). */
  isSubscribedElsewhere: (vault: string, pan: string) => boolean;
  /** Registered merchants per vault; {@link SANDBOX_MERCHANTS} by default. */
  merchants?: Readonly<Record<string, readonly RegisteredMerchant[]>>;
  /** The wire reading to answer in (`SandboxOptions.wire`); `documented` when absent. */
  wire?: SandboxWire;
}

/**
 * Resolves v1 `number` to a PAN: a `tok_sandbox_…` or format-preserving alias of the vault, or a plain
 * Luhn-valid PAN of the six families.
 * @throws HttpError 400 `bad-request` (pointer `/number`) for anything else or an unknown alias.
 */
function resolveNumber(
  aliases: AliasVault,
  vault: string,
  number: string,
): { pan: string; brand: CardBrand } {
  let pan: string | undefined;
  if (TOK_ALIAS_PATTERN.test(number) || FORMAT_PRESERVING_ALIAS_PATTERN.test(number)) {
    pan = aliases.resolvePan(vault, number);
    if (!pan) throw httpError(400, 'bad-request', 'number: unknown alias', { pointer: '/number' });
  } else if (/^\d{13,19}$/.test(number) && isLuhnValid(number)) {
    pan = number;
  } else {
    throw httpError(400, 'bad-request', 'number: must be an alias or a Luhn-valid card number', {
      pointer: '/number',
    });
  }
  const brand = cardBrandOf(pan);
  if (!brand) {
    throw httpError(400, 'bad-request', 'number: not a card number of a supported card family', {
      pointer: '/number',
    });
  }
  return { pan, brand };
}

/**
 * Applies enrol rules 1-3 of the spec to the `merchant` member, whose id may be named
 * `vgs_merchant_id` (documented) or `service_merchant_id` (specification), read as the same.
 * @returns the merchant to echo, or undefined when none was given (and none is required).
 * @throws HttpError 400 (rule 1+3: the merchant id missing in a vault with several merchants, pointer
 *   at the wire reading's name; rule 2: `sub_merchant_name` missing), 404 `merchant-not-found`.
 */
function resolveMerchant(
  registered: readonly RegisteredMerchant[],
  merchant: Merchant | undefined,
  wire: SandboxWire,
): MerchantOut | undefined {
  const errors: ErrorObject[] = [];
  const givenId = merchant ? merchantIdOf(merchant) : undefined;
  if (registered.length > 1 && !givenId) {
    const name = wire === 'documented' ? 'vgs_merchant_id' : 'service_merchant_id';
    errors.push({
      status: '400',
      code: 'bad-request',
      detail: `merchant.${name} is required: several merchants are registered in this vault`,
      source: { pointer: `/merchant/${name}` },
    });
  }
  if (merchant && !merchant.sub_merchant_name) {
    errors.push({
      status: '400',
      code: 'bad-request',
      detail: 'merchant.sub_merchant_name is required when submitting on behalf of a merchant',
      source: { pointer: '/merchant/sub_merchant_name' },
    });
  }
  if (errors.length > 0) throw new HttpError(400, errors);
  if (!merchant) return undefined;
  const id = givenId ?? (registered.length === 1 ? registered[0]!.serviceMerchantId : undefined);
  const found = registered.find((m) => m.serviceMerchantId === id);
  if (!found) throw httpError(404, 'merchant-not-found', 'no merchant with this merchant id in the vault');
  return {
    serviceMerchantId: found.serviceMerchantId,
    subMerchantName: merchant.sub_merchant_name!,
    subMerchantMid: found.subMerchantMid,
  };
}

/**
 * The documented card-check request limits (sandbox contract §8), which the sandbox enforces when it
 * answers in the documented reading: `name` at most 255 characters, `number` 13-19 characters (a PAN
 * or a format-preserving alias, not `tok_`), `exp_year` two digits.
 * @throws HttpError 400 `bad-request`, one error per member with its `source.pointer`.
 */
function checkDocumentedCardCheck(body: { name?: string; number: string; exp_year: number }): void {
  const errors: ErrorObject[] = [];
  const refuse = (member: string, detail: string) =>
    errors.push({
      status: '400',
      code: 'bad-request',
      detail: `${member}: ${detail}`,
      source: { pointer: `/${member}` },
    });
  if (body.name !== undefined && body.name.length > CARD_CHECK_NAME_MAX_LENGTH) {
    refuse('name', `at most ${CARD_CHECK_NAME_MAX_LENGTH} characters`);
  }
  if (!isCardCheckNumber(body.number)) {
    refuse('number', 'must be 13 to 19 characters, a card number or a format-preserving alias');
  }
  if (body.exp_year > 99) refuse('exp_year', 'must be two digits');
  if (errors.length > 0) throw new HttpError(400, errors);
}

/** `exp_year` + 3, keeping a two-digit year two digits. */
function yearPlusThree(year: number): number {
  return year < 100 ? (year + 3) % 100 : year + 3;
}

/**
 * Registers under {@link ACCOUNT_UPDATER_PREFIX}, answering in `deps.wire` (sandbox contract §8:
 * `documented` by default, or `specification`):
 * - `POST /cards` (`cards:write`): 202 (documented) or 201 (specification) `{data: card}`; 400, 404
 *   `merchant-not-found`, 422 `card-brand-not-supported` / `account-updater-not-supported`.
 * - `GET /cards/{card_id}` (`cards:read`): 200 `{data: card}`; 400 (id not `^CRD.*$`); 404 `card-not-found`.
 * - `POST /card-check` (`cards:write`): documented 202 `{data: result}` whose `number` is the plain
 *   PAN and `cvv` the given CVV, both JSON numbers, merchant id as `vgs_merchant_id`; specification
 *   200 with `number` the format-preserving alias, no `cvv`, `service_merchant_id`; 400, 404, 422 as
 *   for enrol. Documented, the request is held to the documented limits too (400 for a `name` over
 *   255 characters, a `tok_` or malformed `number`, an `exp_year` over 99).
 * Requests are read in both readings alike (the merchant id as `vgs_merchant_id` or
 * `service_merchant_id`).
 */
export function registerAccountUpdaterRoutes(router: Router, deps: AccountUpdaterDeps): void {
  const { store, aliases, timers, now, logger } = deps;
  const merchants = deps.merchants ?? SANDBOX_MERCHANTS;
  const wire: SandboxWire = deps.wire ?? 'documented';
  const enrolStatus = wire === 'documented' ? 202 : 201;
  const checkStatus = wire === 'documented' ? 202 : 200;

  const cardDocument = (card: V1Card, vault: string): { data: z.input<typeof v1CardAnswer> } => ({
    data: {
      id: card.id,
      name: card.name,
      number: aliases.formatPreservingAlias(vault, card.pan),
      exp_month: card.expMonth,
      exp_year: card.expYear,
      ...(card.billingAddress ? { billing_address: card.billingAddress } : {}),
      ...(card.merchant ? { merchant: merchantAnswerOf(card.merchant, wire) } : {}),
      capabilities: card.state === 'enrolled' ? [ACCOUNT_UPDATER_CAPABILITY] : [],
      created_at: isoUtc(card.createdAtMs),
      updated_at: isoUtc(card.updatedAtMs),
      state: card.state,
      event: card.event,
    },
  });

  router.add('POST', `${ACCOUNT_UPDATER_PREFIX}/cards`, 'cards:write', async ({ req, res, auth }) => {
    const body = await readValidJsonBody(req, JSON_MEDIA_TYPE, enrolRequest);
    const { pan, brand } = resolveNumber(aliases, auth.vault, body.number);
    const merchant = resolveMerchant(merchants[auth.vault] ?? [], body.merchant, wire);
    if (brand === 'diners' || brand === 'jcb') {
      throw httpError(422, 'card-brand-not-supported', 'account updater does not support this card brand');
    }
    const scenario = enrolmentScenario(pan);
    if (scenario.kind === 'error') {
      throw httpError(
        422,
        scenario.code,
        'account updater is not supported for this card (sandbox test card)',
      );
    }
    const createdAtMs = now();
    const card: V1Card = {
      id: newCardId(),
      vault: auth.vault,
      pan,
      name: body.name,
      expMonth: body.exp_month,
      expYear: body.exp_year,
      ...(body.billing_address ? { billingAddress: body.billing_address } : {}),
      ...(merchant ? { merchant } : {}),
      state: 'enrolling',
      event: ENROLLING_EVENT,
      createdAtMs,
      updatedAtMs: createdAtMs,
    };

    if (scenario.kind === 'immediate') {
      // Mock card: answered as enrolled, never saved, no webhook.
      const answered: V1Card = {
        ...card,
        state: 'enrolled',
        event: scenario.event,
        ...(scenario.update === 'number' ? { pan: replacementPan(pan) } : {}),
        ...(scenario.update === 'expiry' ? { expYear: yearPlusThree(card.expYear) } : {}),
      };
      sendJson(res, enrolStatus, cardDocument(answered, auth.vault), JSON_MEDIA_TYPE);
      return;
    }

    const notifyLater = (event: string, newPan: string, onComplete?: () => void): void => {
      timers.schedule(deps.webhookDelayMs, () => {
        try {
          onComplete?.();
          deps.notify({
            vault: card.vault,
            event,
            cardId: card.id,
            oldPan: pan,
            newPan,
            oldExpMonth: card.expMonth,
            oldExpYear: card.expYear,
            newExpMonth: card.expMonth,
            newExpYear: card.expYear,
            createdAtMs,
            occurredAtMs: now(),
          });
        } catch (error) {
          logger.error({ cardId: card.id, errorName: (error as Error).name }, 'enrolment completion failed');
        }
      });
    };

    if (scenario.kind === 'webhook') {
      // Mock card: enrolling, the table's notification follows, never saved.
      notifyLater(scenario.event, scenario.update === 'number' ? replacementPan(pan) : pan);
    } else {
      store.cards.set(card.id, card);
      notifyLater('au_card.enrolled', pan, () => {
        card.state = 'enrolled';
        card.event = 'au_card.enrolled';
        card.updatedAtMs = now();
      });
    }
    logger.debug({ cardId: card.id, vault: auth.vault, state: card.state }, 'v1 enrolment accepted');
    sendJson(res, enrolStatus, cardDocument(card, auth.vault), JSON_MEDIA_TYPE);
  });

  router.add('GET', `${ACCOUNT_UPDATER_PREFIX}/cards/:card_id`, 'cards:read', ({ res, auth, params }) => {
    const id = params.card_id!;
    if (!/^CRD/.test(id)) throw httpError(400, 'bad-request', 'card_id must match ^CRD.*$');
    const card = store.find(auth.vault, id);
    if (!card) throw httpError(404, 'card-not-found', 'no card with this id in the vault');
    sendJson(res, 200, cardDocument(card, auth.vault), JSON_MEDIA_TYPE);
  });

  router.add('POST', `${ACCOUNT_UPDATER_PREFIX}/card-check`, 'cards:write', async ({ req, res, auth }) => {
    const body = await readValidJsonBody(req, JSON_MEDIA_TYPE, cardCheckRequest);
    if (wire === 'documented') checkDocumentedCardCheck(body);
    const { pan, brand } = resolveNumber(aliases, auth.vault, body.number);
    const merchant = resolveMerchant(merchants[auth.vault] ?? [], body.merchant, wire);
    /**
     * The answer in the wire reading: documented, `number` is the current plain PAN and `cvv` the
     * given CVV, both JSON numbers (sandbox contract §8); specification, `number` is the
     * format-preserving alias and the CVV is never echoed.
     */
    const answer = (currentPan: string, result: Pick<CheckResult, 'exp_year' | 'event' | 'failure_code'>) => {
      const documented = wire === 'documented';
      const data: Omit<CheckResult, 'number' | 'cvv'> & { number: unknown; cvv?: number } = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        number: documented ? rawJson(currentPan) : aliases.formatPreservingAlias(auth.vault, currentPan),
        exp_month: body.exp_month,
        ...result,
        ...(documented && body.cvv !== undefined ? { cvv: Number(body.cvv) } : {}),
        ...(merchant ? { merchant: merchantAnswerOf(merchant, wire) } : {}),
      };
      sendJson(res, checkStatus, { data }, JSON_MEDIA_TYPE);
    };
    if (brand === 'diners' || brand === 'jcb') {
      answer(pan, {
        exp_year: body.exp_year,
        failure_code: 'account-updater-not-supported',
        event: 'au_card.non_participating',
      });
      return;
    }
    if (
      (brand === 'amex' || brand === 'discover') &&
      !store.hasEnrolledPan(auth.vault, pan) &&
      !deps.isSubscribedElsewhere(auth.vault, pan)
    ) {
      throw httpError(
        422,
        'account-updater-not-supported',
        'American Express and Discover cards can be checked only when enrolled in account updater',
      );
    }
    const scenario = checkScenario(pan);
    answer(scenario.update === 'number' ? replacementPan(pan) : pan, {
      exp_year: scenario.update === 'expiry' ? yearPlusThree(body.exp_year) : body.exp_year,
      event: scenario.event,
    });
  });
}
