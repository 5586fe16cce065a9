import { areaClient } from '../authorized-request.ts';
import { assertCardId } from '../wire.ts';
import {
  type AccountUpdaterCard,
  type CardCheckInput,
  type CardCheckResult,
  cardCheckBody,
  cardCheckEnvelopeSchema,
  cardEnvelopeSchema,
  type EnrollCardInput,
  enrollCardBody,
  v1AnswerReviver,
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
 * Client of account updater version 1 (spec, area `{account_updater_url}`, `application/json`):
 * enrolment, card check and card retrieval. It reads answers in the provider's documented form and
 * in the specification's (sandbox contract §8: statuses, with or without the `data` envelope, card
 * numbers as JSON numbers) and writes requests in the documented form only, checked before they
 * leave. Card numbers travel in request bodies only, never in paths; a plain PAN or CVV an answer
 * carries never leaves this client. There is no batch retrieval in the spec; callers batch and
 * deduplicate with DataLoader.
 *
 * Errors: {@link InvalidArgumentError} for a malformed card id (argument `cardId`) or a request body
 * the provider would refuse (argument `input.<member>`), nothing sent;
 * {@link UpstreamError} with area `account-updater` (or `oauth`) otherwise, e.g. 400 `bad-request`
 * with `pointer`, 404 `merchant-not-found` or `card-not-found`, 422 `card-brand-not-supported` or
 * `account-updater-not-supported`, 500 `server-error`.
 */
export class AccountUpdaterClient extends areaClient('account-updater', 'application/json') {
  /**
   * v1 `POST /cards` (spec "Enroll request rules"; documented 202, the specification's reading 201,
   * sandbox contract §8): enrols the card asynchronously. The answer's `state` is `enrolling` (a notification follows) or `enrolled` (final
   * at once, no notification). Never retried automatically except once after a 401.
   */
  async enrollCard(vault: string, input: EnrollCardInput): Promise<AccountUpdaterCard> {
    return this.send(vault, {
      method: 'POST',
      path: ['cards'],
      body: JSON.stringify(enrollCardBody(input)),
      sentInput: true,
      expectStatus: [200, 201, 202],
      schema: cardEnvelopeSchema,
      jsonReviver: v1AnswerReviver,
    });
  }

  /**
   * v1 `GET /cards/{card_id}` (spec): the most current card data. Mock test cards and cards of
   * another vault answer 404 `card-not-found`.
   */
  async getCard(vault: string, cardId: string): Promise<AccountUpdaterCard> {
    assertCardId(cardId);
    return this.send(vault, {
      method: 'GET',
      path: ['cards', cardId],
      subject: cardId,
      expectStatus: [200],
      schema: cardEnvelopeSchema,
      jsonReviver: v1AnswerReviver,
    });
  }

  /**
   * v1 `POST /card-check` (spec "Card check request and result"; documented 202, the
   * specification's reading 200, sandbox contract §8): a stateless lookup of the latest card data, no
   * enrolment. The documented answer carries the plain PAN and CVV as JSON numbers: the PAN is masked
   * (`maskedNumber`), the CVV dropped, while parsing. Amex and Discover cards not enrolled in the
   * vault answer 422 `account-updater-not-supported`.
   */
  async checkCard(vault: string, input: CardCheckInput): Promise<CardCheckResult> {
    return this.send(vault, {
      method: 'POST',
      path: ['card-check'],
      body: JSON.stringify(cardCheckBody(input)),
      sentInput: true,
      expectStatus: [200, 202],
      schema: cardCheckEnvelopeSchema,
      jsonReviver: v1AnswerReviver,
    });
  }
}
