import type { z } from 'zod';
import {
  ACCOUNT_UPDATER_META,
  type cardRecord,
  type checkDocument,
  createCardRequest,
  type duplicateCardDocument,
  echoedCardAttributes,
  type subscriptionDocument,
} from '../contracts/card-interface.ts';
import type { SandboxWire } from '../contracts/wire-reading.ts';
import { type CardBrand, cardBrandOf, isLuhnValid } from '../lib/pan.ts';
import { VaultCardStore } from './card-store.ts';
import {
  type AuthContext,
  badRequest,
  httpError,
  JSON_API_MEDIA_TYPE,
  type Router,
  readValidJsonBody,
  sendJson,
  sendNoContent,
} from './http.ts';
import { cardInterfaceTimestamp, newCardId, newSubscriptionId, randomBase62 } from './ids.ts';
import { cardInterfaceScenario, checkScenario, replacementPan } from './test-cards.ts';
import type { TimerSet } from './timers.ts';
import type { AliasVault } from './vault.ts';

/**
 * Card interface area (`{base_url}` = `/card-interface`, application/vnd.api+json): cards, account
 * updater subscriptions and on-demand checks. Spec "Card interface"; contract §5.3, §5.4; gap decisions
 * "Card interface".
 */

/** Path prefix of the area in the sandbox (contract §1). */
export const CARD_INTERFACE_PREFIX = '/card-interface';

/** Default time a 4998 card leaves `POST /cards` unanswered: 120 000 ms (contract §5.4). */
export const DEFAULT_HANG_MS = 120_000;

/**
 * A new card interface card id: in the documented wire `CRD` + 49 Base62 characters, 52 in all, the
 * length of the card interface's own test table (sandbox contract §8); in the specification's reading
 * the 25 characters of v1 (`newCardId`).
 */
function newCardInterfaceCardId(wire: SandboxWire): string {
  return wire === 'documented' ? `CRD${randomBase62(49)}` : newCardId();
}

interface Subscription {
  id: string;
  createdAtMs: number;
  updatedAtMs: number;
}

type CheckDocument = z.input<typeof checkDocument>;

/** A card of the card interface as stored (never serialised as is: it holds the PAN). */
interface StoredCard {
  id: string;
  vault: string;
  pan: string;
  brand: CardBrand;
  panAlias: string;
  cvcAlias?: string;
  expMonth: number;
  expYear: number;
  /** The optional attributes the record echoes as sent (contract `echoedCardAttributes`). */
  echoed: z.output<typeof echoedCardAttributes>;
  meta: Record<string, unknown>;
  createdAtMs: number;
  updatedAtMs: number;
  subscription?: Subscription;
}

/** In-memory card store of the card interface, all vaults. */
export class CardInterfaceStore extends VaultCardStore<StoredCard> {
  /** True when a card of this vault with this PAN holds an account updater subscription. */
  hasSubscribedPan(vault: string, pan: string): boolean {
    return this.someWithPan(vault, pan, (card) => card.subscription !== undefined);
  }

  /** The oldest card of this vault holding this PAN (Duplicate Card Check), or undefined. */
  firstWithPan(vault: string, pan: string): StoredCard | undefined {
    for (const card of this.cards.values()) {
      if (card.vault === vault && card.pan === pan) return card;
    }
    return undefined;
  }
}

const ATTRIBUTES = '/data/attributes';

/** The card record of the contract (`cardRecord`); typed by it, so a member it lacks fails to compile. */
function cardDocument(card: StoredCard): z.input<typeof cardRecord> {
  const meta: Record<string, unknown> = { ...card.meta };
  if (card.subscription) {
    meta[ACCOUNT_UPDATER_META] = { subscription_id: card.subscription.id, state: 'enrolled' };
  }
  return {
    data: {
      type: 'cards',
      id: card.id,
      attributes: {
        pan_alias: card.panAlias,
        ...(card.cvcAlias ? { cvc_alias: card.cvcAlias } : {}),
        bin: card.pan.slice(0, 6),
        last4: card.pan.slice(-4),
        brand: card.brand,
        exp_month: card.expMonth,
        exp_year: card.expYear,
        ...card.echoed,
        created_at: cardInterfaceTimestamp(card.createdAtMs),
        updated_at: cardInterfaceTimestamp(card.updatedAtMs),
      },
      meta,
    },
  };
}

/**
 * The documented `POST /cards` 201 (sandbox contract §8, provider-docs `examples.json`): `pan`,
 * `cvc_status`, `pan_alias`, `cvc` and `cvc_alias` (when a CVC was given), `bin`, `first8`, `last4`,
 * the expiry and the echoed optional attributes; no `brand` and no timestamps. `cvc` is the one
 * submitted (or behind the submitted `cvc_alias`).
 */
function documentedCreatedCardDocument(
  card: StoredCard,
  cvc: string | undefined,
): z.input<typeof cardRecord> {
  return {
    data: {
      id: card.id,
      type: 'cards',
      attributes: {
        pan: card.pan,
        ...card.echoed,
        pan_alias: card.panAlias,
        ...(cvc !== undefined ? { cvc } : {}),
        ...(card.cvcAlias ? { cvc_alias: card.cvcAlias } : {}),
        bin: card.pan.slice(0, 6),
        first8: card.pan.slice(0, 8),
        last4: card.pan.slice(-4),
        exp_month: card.expMonth,
        exp_year: card.expYear,
      },
      ...(Object.keys(card.meta).length > 0 ? { meta: { ...card.meta } } : {}),
    },
  };
}

function subscriptionDocumentOf(
  id: string,
  state: 'enrolled' | 'failed',
  createdAtMs: number,
  updatedAtMs: number,
): z.input<typeof subscriptionDocument> {
  return {
    data: {
      type: 'card_update_subscriptions',
      id,
      attributes: {
        created_at: cardInterfaceTimestamp(createdAtMs),
        state,
        updated_at: cardInterfaceTimestamp(updatedAtMs),
      },
    },
  };
}

/** Marker wrapping PAN digits so they can be written as exact JSON numbers (beyond 2^53 for 19 digits). */
const RAW_NUMBER_MARK = '\u0000raw-number:';

/** JSON text in which strings produced by `rawNumber` become bare JSON numbers with all their digits. */
function stringifyWithRawNumbers(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0000raw-number:(\d+)"/g, '$1');
}

function rawNumber(digits: string): string {
  return `${RAW_NUMBER_MARK}${digits}`;
}

/** Dependencies of {@link registerCardInterfaceRoutes}. */
export interface CardInterfaceDeps {
  store: CardInterfaceStore;
  aliases: AliasVault;
  timers: TimerSet;
  now: () => number;
  /** How long a 4998 card leaves `POST /cards` unanswered before a 504, in ms. */
  hangMs: number;
  /** The wire reading to answer in (`SandboxOptions.wire`); `documented` when absent. */
  wire?: SandboxWire;
  /**
   * Vaults whose account has Duplicate Card Check on (sandbox contract §8: the provider turns it on
   * per account): `POST /cards` of a PAN already on file in the vault answers 303 with the existing
   * card's id. None by default; the specification's reading has no duplicate detection, so the list is
   * read in the documented wire only.
   */
  duplicateCardCheckVaults?: readonly string[];
}

/**
 * Registers under {@link CARD_INTERFACE_PREFIX}:
 * - `POST /cards` (`cards:write`): 201 card record (documented wire: the documented members, `pan`
 *   and `cvc` included, no `brand` nor timestamps); 303 `{"data":{"type":"cards","id"}}` with
 *   `Location: /card-interface/cards/{id}` when the vault has Duplicate Card Check on
 *   (`duplicateCardCheckVaults`, documented wire) and a card of the vault holds the PAN; 400
 *   `bad-request` (validation, pointer under `/data/attributes`), 415, 413; fault cards
 *   4401/4403/4500/4502/4503/4504 answer that status; 4998 answers 504 `gateway-timeout` only after
 *   `hangMs`.
 * - `GET /cards/{card_id}` (`cards:read`): 200 card record; 404 `card-not-found`.
 * - `POST /cards/{card_id}/card-update-subscriptions` (`cards:write`): 200 subscription (state
 *   `enrolled`, existing one when already subscribed, `failed` for 4002 cards); 404; 422
 *   `card-brand-not-supported` (Diners Club, JCB).
 * - `DELETE /cards/{card_id}/card-update-subscriptions` (`cards:write`): 204 (also when not subscribed); 404.
 * - `POST /cards/{card_id}/check` (`cards:write`): 200 `card_updates`; 404; 422
 *   `account-updater-not-supported` (Amex/Discover without subscription).
 */
export function registerCardInterfaceRoutes(router: Router, deps: CardInterfaceDeps): void {
  const { store, aliases, timers, now } = deps;
  const wire = deps.wire ?? 'documented';
  const duplicateCardCheck = new Set(wire === 'documented' ? (deps.duplicateCardCheckVaults ?? []) : []);
  const cardOr404 = (auth: AuthContext, id: string): StoredCard => {
    const card = store.find(auth.vault, id);
    if (!card) throw httpError(404, 'card-not-found', 'no card with this id in the vault');
    return card;
  };

  router.add('POST', `${CARD_INTERFACE_PREFIX}/cards`, 'cards:write', async ({ req, res, auth }) => {
    const { data } = await readValidJsonBody(req, JSON_API_MEDIA_TYPE, createCardRequest);
    const { attributes, meta = {} } = data;

    if (ACCOUNT_UPDATER_META in meta) {
      throw badRequest(
        `meta.${ACCOUNT_UPDATER_META} is managed by the service`,
        `/data/meta/${ACCOUNT_UPDATER_META}`,
      );
    }
    // The specification's "complete card with cvc, aliases and cardholder" sends a value with its
    // alias: accepted when the alias is this vault's alias of that very value.
    let pan = attributes.pan;
    if (pan !== undefined && !isLuhnValid(pan))
      throw badRequest('pan: fails the Luhn check', `${ATTRIBUTES}/pan`);
    if (attributes.pan_alias !== undefined) {
      const resolved = aliases.resolvePan(auth.vault, attributes.pan_alias);
      if (!resolved) throw badRequest('pan_alias: unknown alias', `${ATTRIBUTES}/pan_alias`);
      if (pan !== undefined && resolved !== pan) {
        throw badRequest('pan_alias: is not the alias of pan', `${ATTRIBUTES}/pan_alias`);
      }
      pan = resolved;
    }
    if (pan === undefined) throw badRequest('one of pan and pan_alias is required', `${ATTRIBUTES}/pan`);
    const brand = cardBrandOf(pan);
    if (!brand) throw badRequest('pan: not a card number of a supported card family', `${ATTRIBUTES}/pan`);
    let cvcAlias: string | undefined;
    let cvc = attributes.cvc;
    if (attributes.cvc_alias !== undefined) {
      const resolved = aliases.resolveCvc(auth.vault, attributes.cvc_alias);
      if (resolved === undefined) throw badRequest('cvc_alias: unknown alias', `${ATTRIBUTES}/cvc_alias`);
      if (attributes.cvc !== undefined && resolved !== attributes.cvc) {
        throw badRequest('cvc_alias: is not the alias of cvc', `${ATTRIBUTES}/cvc_alias`);
      }
      cvcAlias = attributes.cvc_alias;
      cvc = resolved;
    }

    const scenario = cardInterfaceScenario(pan);
    if (scenario.kind === 'fault') {
      throw httpError(scenario.status, scenario.code, 'simulated upstream fault (sandbox test card)');
    }
    if (scenario.kind === 'hang') {
      // The answer comes only after hangMs; stop() cancels the timer and closes the socket.
      await new Promise<void>((resolve) => timers.schedule(deps.hangMs, resolve));
      throw httpError(504, 'gateway-timeout', 'simulated upstream hang (sandbox test card)');
    }

    if (duplicateCardCheck.has(auth.vault)) {
      const existing = store.firstWithPan(auth.vault, pan);
      if (existing) {
        const reference: z.input<typeof duplicateCardDocument> = {
          data: { type: 'cards', id: existing.id },
        };
        sendJson(res, 303, reference, JSON_API_MEDIA_TYPE, {
          location: `${CARD_INTERFACE_PREFIX}/cards/${existing.id}`,
        });
        return;
      }
    }
    // A new CVC alias only for a card that is created (a duplicate stores nothing).
    if (cvcAlias === undefined && cvc !== undefined) cvcAlias = aliases.cvcAlias(auth.vault, cvc);

    const createdAtMs = now();
    const card: StoredCard = {
      id: newCardInterfaceCardId(wire),
      vault: auth.vault,
      pan,
      brand,
      panAlias: aliases.panAlias(auth.vault, pan),
      ...(cvcAlias !== undefined ? { cvcAlias } : {}),
      expMonth: attributes.exp_month,
      expYear: attributes.exp_year,
      echoed: echoedCardAttributes.parse(attributes),
      meta,
      createdAtMs,
      updatedAtMs: createdAtMs,
    };
    store.cards.set(card.id, card);
    const created = wire === 'documented' ? documentedCreatedCardDocument(card, cvc) : cardDocument(card);
    sendJson(res, 201, created, JSON_API_MEDIA_TYPE);
  });

  router.add('GET', `${CARD_INTERFACE_PREFIX}/cards/:card_id`, 'cards:read', ({ res, auth, params }) => {
    sendJson(res, 200, cardDocument(cardOr404(auth, params.card_id!)), JSON_API_MEDIA_TYPE);
  });

  const subscriptionsPath = `${CARD_INTERFACE_PREFIX}/cards/:card_id/card-update-subscriptions`;
  router.add('POST', subscriptionsPath, 'cards:write', ({ req, res, auth, params }) => {
    req.resume();
    const card = cardOr404(auth, params.card_id!);
    if (card.brand === 'diners' || card.brand === 'jcb') {
      throw httpError(422, 'card-brand-not-supported', 'account updater does not support this card brand');
    }
    if (card.subscription) {
      const { id, createdAtMs, updatedAtMs } = card.subscription;
      sendJson(
        res,
        200,
        subscriptionDocumentOf(id, 'enrolled', createdAtMs, updatedAtMs),
        JSON_API_MEDIA_TYPE,
      );
      return;
    }
    const at = now();
    if (cardInterfaceScenario(card.pan).kind === 'subscription-fails') {
      sendJson(res, 200, subscriptionDocumentOf(newSubscriptionId(), 'failed', at, at), JSON_API_MEDIA_TYPE);
      return;
    }
    card.subscription = { id: newSubscriptionId(), createdAtMs: at, updatedAtMs: at };
    card.updatedAtMs = at;
    sendJson(res, 200, subscriptionDocumentOf(card.subscription.id, 'enrolled', at, at), JSON_API_MEDIA_TYPE);
  });

  router.add('DELETE', subscriptionsPath, 'cards:write', ({ req, res, auth, params }) => {
    req.resume();
    const card = cardOr404(auth, params.card_id!);
    if (card.subscription) {
      delete card.subscription;
      card.updatedAtMs = now();
    }
    sendNoContent(res);
  });

  router.add(
    'POST',
    `${CARD_INTERFACE_PREFIX}/cards/:card_id/check`,
    'cards:write',
    ({ req, res, auth, params }) => {
      req.resume();
      const card = cardOr404(auth, params.card_id!);
      let event: string;
      const updatedValues: NonNullable<CheckDocument['data']['attributes']['updated_values']> = [];
      if (card.brand === 'diners' || card.brand === 'jcb') {
        event = 'non_participating';
      } else {
        if ((card.brand === 'amex' || card.brand === 'discover') && !card.subscription) {
          throw httpError(
            422,
            'account-updater-not-supported',
            'American Express and Discover cards can be checked only when subscribed to account updater',
          );
        }
        const scenario = checkScenario(card.pan);
        event = scenario.event.slice('au_card.'.length);
        if (scenario.update === 'number') {
          updatedValues.push({
            field_name: 'pan',
            old_value: rawNumber(card.pan),
            new_value: rawNumber(replacementPan(card.pan)),
          });
        } else if (scenario.update === 'expiry') {
          updatedValues.push({
            field_name: 'exp_year',
            old_value: card.expYear,
            new_value: (card.expYear + 3) % 100,
          });
        }
      }
      const document: CheckDocument = {
        data: { type: 'card_updates', id: card.id, attributes: { event, updated_values: updatedValues } },
      };
      sendJson(res, 200, stringifyWithRawNumbers(document), JSON_API_MEDIA_TYPE);
    },
  );
}
