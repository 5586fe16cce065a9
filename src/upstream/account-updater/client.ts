import { requestWithBearer, type UpstreamClientOptions } from '../authorized-request.ts';
import type { UpstreamCall, UpstreamHttp } from '../http.ts';
import type { AccessTokenProvider } from '../oauth/access-token-provider.ts';
import { assertCardId, joinUrl } from '../wire.ts';
import {
  type AccountUpdaterCard,
  type CardCheckInput,
  type CardCheckResult,
  cardCheckBody,
  cardCheckEnvelopeSchema,
  cardEnvelopeSchema,
  type EnrollCardInput,
  enrollCardBody,
} from './schemas.ts';

export type {
  AccountUpdaterCard,
  BillingAddress,
  CardCheckInput,
  CardCheckResult,
  EnrollCardInput,
  Merchant,
  MerchantInput,
} from './schemas.ts';

/**
 * Client of account updater version 1 (spec, area `{account_updater_url}`, `application/json`,
 * answers wrapped in `{"data": …}`): enrolment, card check and card retrieval. Card numbers travel in
 * request bodies only, never in paths. There is no batch retrieval in the spec; callers batch and
 * deduplicate with DataLoader.
 *
 * Errors: {@link InvalidArgumentError} for a malformed card id (nothing is sent);
 * {@link UpstreamError} with area `account-updater` (or `oauth`) otherwise, e.g. 400 `bad-request`
 * with `pointer`, 404 `merchant-not-found` or `card-not-found`, 422 `card-brand-not-supported` or
 * `account-updater-not-supported`, 500 `server-error`.
 */
export class AccountUpdaterClient {
  readonly #baseUrl: string;
  readonly #deps: { http: UpstreamHttp; tokens: AccessTokenProvider };

  constructor(opts: UpstreamClientOptions) {
    this.#baseUrl = opts.baseUrl;
    this.#deps = { http: opts.http, tokens: opts.tokens };
  }

  /**
   * v1 `POST /cards` (spec "Enroll request rules"; 201 per docs/gap-decisions.md): enrols the card
   * asynchronously. The answer's `state` is `enrolling` (a notification follows) or `enrolled` (final
   * at once, no notification). Never retried automatically except once after a 401.
   */
  async enrollCard(vault: string, input: EnrollCardInput): Promise<AccountUpdaterCard> {
    const { data } = await this.#send(vault, {
      method: 'POST',
      url: joinUrl(this.#baseUrl, ['cards']),
      body: JSON.stringify(enrollCardBody(input)),
      expectStatus: [200, 201],
      schema: cardEnvelopeSchema,
    });
    return data;
  }

  /**
   * v1 `GET /cards/{card_id}` (spec): the most current card data. Mock test cards and cards of
   * another vault answer 404 `card-not-found`.
   */
  async getCard(vault: string, cardId: string): Promise<AccountUpdaterCard> {
    assertCardId(cardId);
    const { data } = await this.#send(vault, {
      method: 'GET',
      url: joinUrl(this.#baseUrl, ['cards', cardId]),
      expectStatus: [200],
      schema: cardEnvelopeSchema,
    });
    return data;
  }

  /**
   * v1 `POST /card-check` (spec "Card check request and result"; 200 per docs/gap-decisions.md): a
   * stateless lookup of the latest card data, no enrolment. Amex and Discover cards not enrolled in
   * the vault answer 422 `account-updater-not-supported`.
   */
  async checkCard(vault: string, input: CardCheckInput): Promise<CardCheckResult> {
    const { data } = await this.#send(vault, {
      method: 'POST',
      url: joinUrl(this.#baseUrl, ['card-check']),
      body: JSON.stringify(cardCheckBody(input)),
      expectStatus: [200],
      schema: cardCheckEnvelopeSchema,
    });
    return data;
  }

  #send<T>(vault: string, call: Omit<UpstreamCall<T>, 'area' | 'headers'>) {
    return requestWithBearer(this.#deps, vault, {
      ...call,
      area: 'account-updater',
      headers:
        call.body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
    });
  }
}
