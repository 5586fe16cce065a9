import { createHash, randomInt } from 'node:crypto';
import { z } from 'zod';
import {
  holderInfo as holderInfoSchema,
  type NETWORK_TOKEN_STATES,
  type networkToken,
  PHONE_NUMBER_MAX_DIGITS,
} from '../contracts/account-updater.ts';
import { isPanAlias } from '../contracts/common.ts';
import type { SandboxWire } from '../contracts/wire-reading.ts';
import type { Logger } from '../lib/logger.ts';
import { cardBrandOf } from '../lib/pan.ts';
import { ACCOUNT_UPDATER_PREFIX } from './account-updater.ts';
import {
  type ErrorObject,
  HttpError,
  httpError,
  JSON_MEDIA_TYPE,
  type Router,
  readValidJsonBody,
  type Scope,
  sendJson,
} from './http.ts';
import { isoUtc, isoUtcSeconds } from './ids.ts';
import { networkTokenScenario } from './test-cards.ts';
import type { TimerSet } from './timers.ts';
import type { AliasVault } from './vault.ts';
import { type NotificationEnvelope, notificationOf } from './webhooks.ts';

/**
 * Network tokens (`{account_updater_url}` = `/account-updater`, application/json): provision, get and
 * delete the network token of a vaulted card, named by the alias of its PAN. Provisioning completes
 * asynchronously and is reported by a signed notification. Spec "Network token", "States and
 * transitions", "Errors"; contract §5.5, §6; gap decisions "Network tokens".
 */

/** Final states of a network token. While provisioning is pending a token has no `state`. */
export type NetworkTokenState = (typeof NETWORK_TOKEN_STATES)[number];

/** `description` of network token notifications (31 characters, the length the spec's table fixes). */
export const NETWORK_TOKEN_NOTIFICATION_DESCRIPTION = 'Network token state change sent';

/** `description` of the documented network token notification (§8 example, 21 characters). */
export const DOCUMENTED_NETWORK_TOKEN_DESCRIPTION = 'Network Token updated';

/**
 * What a network token notification reports: provisioning reached `state`. `card` (BIN, last four
 * and expiry `YYYY-MM` of the card behind the token) fills the documented notification's card
 * members; without it they are left out.
 */
export interface NetworkTokenNotificationInput {
  card?: { bin: string; last4: string; expiresAt: string };
  vault: string;
  /** The alias the token was provisioned with. */
  panAlias: string;
  state: 'ACTIVE' | 'SUSPENDED';
  /** Four digits. */
  networkTokenLast4: string;
  /** Token expiry, `YYYY-MM`. */
  expiresAt: string;
  /** When provisioning was requested, unix ms. */
  createdAtMs: number;
  /** When the final state was reached (and the notification produced), unix ms. */
  occurredAtMs: number;
}

/** The object encoded in `details` of a network token notification. */
export interface NetworkTokenNotificationDetails {
  pan_alias: string;
  state: 'ACTIVE' | 'SUSPENDED';
  network_token_last4: string;
  /** `YYYY-MM`. */
  expires_at: string;
  /** 24 characters, `YYYY-MM-DDTHH:mm:ss.sssZ`. */
  occurred_at: string;
  /** 20 characters, `YYYY-MM-DDTHH:mm:ssZ`. */
  created_at: string;
}

/**
 * The documented `network_token.updated` details (sandbox contract §8, the provider's example): a
 * JSON object of strings, times without a zone and with microseconds, `network_token` and
 * `payment_account_reference` empty as in the example, `state` the token's state.
 */
export interface DocumentedNetworkTokenDetails {
  card_bin?: string;
  card_exp_month?: string;
  card_exp_year?: string;
  card_last4?: string;
  created_at: string;
  exp_month: string;
  exp_year: string;
  network_token: '';
  network_token_id: string;
  network_token_last4: string;
  pan_alias: string;
  payment_account_reference: '';
  state: 'ACTIVE' | 'SUSPENDED';
  tenant_id: string;
  updated_at: string;
}

/** A time as the documented network token notification writes it: UTC, no zone, microseconds. */
function zonelessMicros(ms: number): string {
  return `${isoUtc(ms).slice(0, -1)}000`;
}

/** A stable UUID-shaped id of the token of `alias` in `vault` (the sandbox keeps no token id). */
function networkTokenIdOf(vault: string, alias: string): string {
  const hex = createHash('sha256').update(`network-token:${vault}:${alias}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Builds a network token notification in `wire`'s reading, with the envelope of contract §4 (same
 * signing and delivery as card notifications) and `producer.application_name` `network-tokens`:
 * - `documented` (default; sandbox contract §8, the provider's example): `event`
 *   `network_token.updated`, description "Network Token updated", `scope` `vault`, and `details` a
 *   JSON object ({@link DocumentedNetworkTokenDetails}) with `state` the token's state;
 * - `specification` (gap decisions, "Network token notifications"): `event` `network_token.active`
 *   or `network_token.suspended` and `details` a JSON string of
 *   {@link NetworkTokenNotificationDetails} (no `card_id`: a network token is named by its alias).
 * @returns the envelope and its exact body bytes (UTF-8 JSON), which every retry re-sends unchanged.
 */
export function buildNetworkTokenNotification(
  input: NetworkTokenNotificationInput,
  wire: SandboxWire = 'documented',
): {
  envelope: NotificationEnvelope;
  body: string;
} {
  if (wire === 'documented') {
    const [expYear, expMonth] = input.expiresAt.split('-') as [string, string];
    const card = input.card;
    const [cardExpYear, cardExpMonth] = card ? (card.expiresAt.split('-') as [string, string]) : [];
    const details: DocumentedNetworkTokenDetails = {
      ...(card ? { card_bin: card.bin, card_exp_month: cardExpMonth, card_exp_year: cardExpYear } : {}),
      ...(card ? { card_last4: card.last4 } : {}),
      created_at: zonelessMicros(input.createdAtMs),
      exp_month: expMonth,
      exp_year: expYear,
      network_token: '',
      network_token_id: networkTokenIdOf(input.vault, input.panAlias),
      network_token_last4: input.networkTokenLast4,
      pan_alias: input.panAlias,
      payment_account_reference: '',
      state: input.state,
      tenant_id: input.vault,
      updated_at: zonelessMicros(input.occurredAtMs),
    };
    return notificationOf({
      event: 'network_token.updated',
      vault: input.vault,
      occurredAtMs: input.occurredAtMs,
      description: DOCUMENTED_NETWORK_TOKEN_DESCRIPTION,
      summary: `A Network Token for ${input.panAlias} pan alias has been updated in vault ${input.vault}`,
      application: 'network-tokens',
      details,
      detailsAsObject: true,
      scope: 'vault',
    });
  }
  const event = `network_token.${input.state.toLowerCase()}`;
  const details: NetworkTokenNotificationDetails = {
    pan_alias: input.panAlias,
    state: input.state,
    network_token_last4: input.networkTokenLast4,
    expires_at: input.expiresAt,
    occurred_at: isoUtc(input.occurredAtMs),
    created_at: isoUtcSeconds(input.createdAtMs),
  };
  return notificationOf({
    event,
    vault: input.vault,
    occurredAtMs: input.occurredAtMs,
    description: NETWORK_TOKEN_NOTIFICATION_DESCRIPTION,
    summary: `Network token ${input.panAlias} ${event}`,
    application: 'network-tokens',
    details,
  });
}

/** `holder_info` as stored and answered: the members given at provisioning, null ones left out. */
type HolderInfo = {
  [K in keyof z.infer<typeof holderInfoSchema>]?: NonNullable<z.infer<typeof holderInfoSchema>[K]>;
};

/**
 * Types of the provision body. Required members are nullish here so that an absent one is told apart
 * from a mistyped one: absent or null is 422 `required-fields-missing`, a wrong JSON type is 400.
 */
const provisionTypesSchema = z.object({
  pan_alias: z.string().nullish(),
  exp_month: z.int().nullish(),
  exp_year: z.int().nullish(),
  holder_info: holderInfoSchema.nullish(),
});

const REQUIRED_FIELDS = ['pan_alias', 'exp_month', 'exp_year'] as const;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** A phone number: optional `+`, digits with spaces, dots, hyphens or parentheses; at most 15 digits (E.164). */
const PHONE_PATTERN = /^\+?[0-9][0-9 ().-]{3,24}$/;

/** A network token as stored. Holds the PAN; never serialised as is. */
interface StoredNetworkToken {
  vault: string;
  pan: string;
  /** The alias provisioning was requested with (named in notifications). */
  panAlias: string;
  /** Absent while provisioning is pending. */
  state?: NetworkTokenState;
  /** Set when provisioning reaches its final state. */
  tokenLast4?: string;
  tokenExpiresAt?: string;
  /** Card expiry, `YYYY-MM`. */
  cardExpiresAt: string;
  holderInfo: HolderInfo;
  createdAtMs: number;
  updatedAtMs: number;
  /**
   * Cancels what is still to come: the pending completion (specification reading) or the pending
   * notification of a provisioning already answered in its final state (documented reading).
   */
  cancelCompletion?: () => void;
}

/** Dependencies of {@link registerNetworkTokenRoutes}. */
export interface NetworkTokenDeps {
  aliases: AliasVault;
  timers: TimerSet;
  /** Clock in ms since the epoch (timestamps, the expiry check). */
  now: () => number;
  logger: Logger;
  /** Delay in ms before provisioning reaches its final state and its notification is sent. */
  webhookDelayMs: number;
  /** Starts delivery of a built notification to the vault's endpoints (`WebhookDispatcher.deliver`). */
  deliver: (vault: string, notification: { envelope: NotificationEnvelope; body: string }) => void;
  /** The wire reading to answer in (`SandboxOptions.wire`); `documented` when absent. */
  wire?: SandboxWire;
}

/** `YYYY-MM` of a month 1-12 and a two- or four-digit year. */
function yearMonth(month: number, year: number): string {
  return `${year < 100 ? 2000 + year : year}-${String(month).padStart(2, '0')}`;
}

/** Four random digits, different from `avoid` (the card's last four, so the two are never confused). */
function tokenLast4(avoid: string): string {
  for (;;) {
    const digits = String(randomInt(10_000)).padStart(4, '0');
    if (digits !== avoid) return digits;
  }
}

function problem(status: number, code: string, detail: string, pointer: string): ErrorObject {
  return { status: String(status), code, detail, source: { pointer } };
}

/**
 * Registers under {@link ACCOUNT_UPDATER_PREFIX}, answering in `deps.wire` (sandbox contract §8):
 * documented (default), every answer is the token alone (no `data` envelope) and provisioning answers
 * 200 with the token already in its final state (`ACTIVE`, `SUSPENDED` for cards ending 5002, its
 * last four and expiry issued), its notification following after `webhookDelayMs`; specification,
 * answers are `{data: token}` and provisioning is asynchronous as below.
 * - `POST /network-tokens` (`network-tokens:write`), body `{pan_alias, exp_month, exp_year,
 *   holder_info?}`: documented 200 as above; specification 202 `{data: token}` without `state`,
 *   `network_token_last4` nor `expires_at` (provisioning pending); both 200 with the existing token
 *   when the card already has one that is not `DELETED`. Errors: 400 `bad-request` (malformed JSON, wrong JSON types); 422
 *   `required-fields-missing`, `invalid-format` (one error per member); 404 `not-found` (alias unknown
 *   to the vault); 422 `card-brand-not-supported` (Diners Club, JCB); 422 `card-not-allowed` (expired
 *   card); then the §5.5 test cards: 404 `declined`, 422 `card-not-allowed`, 422 `rejected`.
 * - `GET /network-tokens/{pan_alias}` (`network-tokens:read`): 200 `{data: token}`; 404 `not-found`.
 * - `DELETE /network-tokens/{pan_alias}` (`network-tokens:write`): 200 `{data: token}` in state
 *   `DELETED` with `card` {last4, bin, expires_at} only (idempotent); 404 `not-found`.
 * After `webhookDelayMs` a pending token becomes `ACTIVE` (`SUSPENDED` for cards ending 5002) and a
 * notification built by {@link buildNetworkTokenNotification} is delivered.
 */
export function registerNetworkTokenRoutes(router: Router, deps: NetworkTokenDeps): void {
  const { aliases, timers, now, logger } = deps;
  const wire: SandboxWire = deps.wire ?? 'documented';
  /** `vault` + NUL + PAN → token: a card has at most one network token, whichever alias names it. */
  const tokens = new Map<string, StoredNetworkToken>();
  const keyOf = (vault: string, pan: string): string => `${vault}\u0000${pan}`;

  /** The token as answered: bare (documented) or in `data` (specification). */
  const tokenDocument = (token: StoredNetworkToken, panAlias: string, view: 'full' | 'deleted') => {
    const body = tokenBody(token, panAlias, view);
    return wire === 'documented' ? body : { data: body };
  };

  const tokenBody = (
    token: StoredNetworkToken,
    panAlias: string,
    view: 'full' | 'deleted',
  ): z.input<typeof networkToken> => ({
    pan_alias: panAlias,
    ...(token.tokenLast4 !== undefined ? { network_token_last4: token.tokenLast4 } : {}),
    ...(token.tokenExpiresAt !== undefined ? { expires_at: token.tokenExpiresAt } : {}),
    ...(token.state !== undefined ? { state: token.state } : {}),
    created_at: isoUtc(token.createdAtMs),
    updated_at: isoUtc(token.updatedAtMs),
    card: {
      last4: token.pan.slice(-4),
      bin: token.pan.slice(0, 6),
      expires_at: token.cardExpiresAt,
      ...(view === 'full' ? { holder_info: token.holderInfo } : {}),
    },
  });

  /** The token named by a path alias in the caller's vault. @throws HttpError 404 `not-found`. */
  const findByAlias = (vault: string, panAlias: string): StoredNetworkToken => {
    const pan = aliases.resolvePan(vault, panAlias);
    const token = pan === undefined ? undefined : tokens.get(keyOf(vault, pan));
    if (!token) throw httpError(404, 'not-found', 'no network token for this pan_alias in the vault');
    return token;
  };

  /** Provisioning reaches its final state: the token number's last four and expiry are issued. */
  const finish = (token: StoredNetworkToken, state: 'ACTIVE' | 'SUSPENDED', atMs: number): void => {
    token.state = state;
    token.tokenLast4 = tokenLast4(token.pan.slice(-4));
    token.tokenExpiresAt = token.cardExpiresAt;
    token.updatedAtMs = atMs;
  };

  /** The notification of a token that reached its final state. */
  const notify = (token: StoredNetworkToken & { state: 'ACTIVE' | 'SUSPENDED' }): void => {
    deps.deliver(
      token.vault,
      buildNetworkTokenNotification(
        {
          vault: token.vault,
          panAlias: token.panAlias,
          state: token.state,
          networkTokenLast4: token.tokenLast4!,
          expiresAt: token.tokenExpiresAt!,
          card: { bin: token.pan.slice(0, 6), last4: token.pan.slice(-4), expiresAt: token.cardExpiresAt },
          createdAtMs: token.createdAtMs,
          occurredAtMs: token.updatedAtMs,
        },
        wire,
      ),
    );
  };

  router.add(
    'POST',
    `${ACCOUNT_UPDATER_PREFIX}/network-tokens`,
    'network-tokens:write',
    async ({ req, res, auth }) => {
      const body = await readValidJsonBody(req, JSON_MEDIA_TYPE, provisionTypesSchema);

      const missing = REQUIRED_FIELDS.filter((field) => body[field] === undefined || body[field] === null);
      if (missing.length > 0) {
        throw new HttpError(
          422,
          missing.map((field) =>
            problem(422, 'required-fields-missing', `${field}: is required`, `/${field}`),
          ),
        );
      }
      const panAlias = body.pan_alias!;
      const expMonth = body.exp_month!;
      const expYear = body.exp_year!;
      const holderInfo: HolderInfo = Object.fromEntries(
        Object.entries(body.holder_info ?? {}).filter(([, value]) => value != null),
      );

      const malformed: ErrorObject[] = [];
      if (!isPanAlias(panAlias)) {
        malformed.push(
          problem(422, 'invalid-format', 'pan_alias: must be a PAN alias issued by the vault', '/pan_alias'),
        );
      }
      if (expMonth < 1 || expMonth > 12) {
        malformed.push(problem(422, 'invalid-format', 'exp_month: must be 1 to 12', '/exp_month'));
      }
      if (!((expYear >= 0 && expYear <= 99) || (expYear >= 2000 && expYear <= 2099))) {
        malformed.push(
          problem(422, 'invalid-format', 'exp_year: must be two digits or 2000 to 2099', '/exp_year'),
        );
      }
      if (holderInfo.email !== undefined && !EMAIL_PATTERN.test(holderInfo.email)) {
        malformed.push(
          problem(
            422,
            'invalid-format',
            'holder_info.email: must be an e-mail address',
            '/holder_info/email',
          ),
        );
      }
      if (
        holderInfo.number !== undefined &&
        (!PHONE_PATTERN.test(holderInfo.number) ||
          holderInfo.number.replace(/\D/g, '').length > PHONE_NUMBER_MAX_DIGITS)
      ) {
        malformed.push(
          problem(
            422,
            'invalid-format',
            'holder_info.number: must be a phone number of at most 15 digits',
            '/holder_info/number',
          ),
        );
      }
      if (malformed.length > 0) throw new HttpError(422, malformed);

      const pan = aliases.resolvePan(auth.vault, panAlias);
      if (pan === undefined)
        throw httpError(404, 'not-found', 'pan_alias: no card with this alias in the vault');
      const brand = cardBrandOf(pan);
      if (brand !== 'visa' && brand !== 'mastercard' && brand !== 'amex' && brand !== 'discover') {
        throw httpError(
          422,
          'card-brand-not-supported',
          'network tokens are not available for this card brand',
        );
      }
      const current = new Date(now());
      const fullYear = expYear < 100 ? 2000 + expYear : expYear;
      if (fullYear * 12 + expMonth < current.getUTCFullYear() * 12 + current.getUTCMonth() + 1) {
        throw httpError(422, 'card-not-allowed', 'the card has expired');
      }
      const scenario = networkTokenScenario(pan);
      if (scenario.kind === 'error') {
        const detail =
          scenario.code === 'declined'
            ? 'the card network declined the network token (sandbox test card)'
            : scenario.code === 'rejected'
              ? 'the issuer rejected the network token request (sandbox test card)'
              : 'the card is not allowed for network tokens (sandbox test card)';
        throw httpError(scenario.status, scenario.code, detail);
      }

      const key = keyOf(auth.vault, pan);
      const existing = tokens.get(key);
      if (existing && existing.state !== 'DELETED') {
        // One token per card: a repeated request answers the token as it is and starts nothing.
        sendJson(res, 200, tokenDocument(existing, panAlias, 'full'), JSON_MEDIA_TYPE);
        return;
      }
      const createdAtMs = now();
      const token: StoredNetworkToken = {
        vault: auth.vault,
        pan,
        panAlias,
        cardExpiresAt: yearMonth(expMonth, expYear),
        holderInfo,
        createdAtMs,
        updatedAtMs: createdAtMs,
      };
      tokens.set(key, token);
      // Documented: the answer already carries the final state; only the notification waits.
      if (wire === 'documented') finish(token, scenario.state, createdAtMs);
      token.cancelCompletion = timers.schedule(deps.webhookDelayMs, () => {
        try {
          token.cancelCompletion = undefined;
          if (token.state === undefined) finish(token, scenario.state, now());
          notify(token as StoredNetworkToken & { state: 'ACTIVE' | 'SUSPENDED' });
        } catch (error) {
          logger.error(
            { vault: token.vault, errorName: (error as Error).name },
            'network token provisioning completion failed',
          );
        }
      });
      logger.debug(
        { vault: auth.vault, scenario: scenario.scenario ?? 'normal' },
        'network token provisioning accepted',
      );
      sendJson(
        res,
        wire === 'documented' ? 200 : 202,
        tokenDocument(token, panAlias, 'full'),
        JSON_MEDIA_TYPE,
      );
    },
  );

  /**
   * A route on the token of a path alias in the caller's vault (404 `not-found` without one): `act`
   * may change it, then the token is answered 200 in `view`.
   */
  const tokenRoute = (
    method: 'GET' | 'DELETE',
    scope: Scope,
    view: 'full' | 'deleted',
    act: (token: StoredNetworkToken) => void,
  ) =>
    router.add(
      method,
      `${ACCOUNT_UPDATER_PREFIX}/network-tokens/:pan_alias`,
      scope,
      ({ res, auth, params }) => {
        const panAlias = params.pan_alias!;
        const token = findByAlias(auth.vault, panAlias);
        act(token);
        sendJson(res, 200, tokenDocument(token, panAlias, view), JSON_MEDIA_TYPE);
      },
    );

  tokenRoute('GET', 'network-tokens:read', 'full', () => {});

  tokenRoute('DELETE', 'network-tokens:write', 'deleted', (token) => {
    if (token.state === 'DELETED') return;
    // A pending provisioning is abandoned: it never completes nor notifies (nor does a pending
    // notification of a documented provisioning go out after the deletion).
    token.cancelCompletion?.();
    token.cancelCompletion = undefined;
    token.state = 'DELETED';
    token.updatedAtMs = now();
  });
}
