import { CARD_INTERFACE_MEDIA_TYPE as JSON_API } from '../../contracts/card-interface.ts';
import { areaClient } from '../authorized-request.ts';
import { UpstreamError } from '../errors.ts';
import { assertCardId } from '../wire.ts';
import {
  type CardInterfaceCard,
  type CardUpdateSubscription,
  type CardUpdates,
  type CreateCardInput,
  type CreatedCard,
  cardDocumentSchema,
  cardIdOfLocation,
  checkDocumentReviver,
  checkDocumentSchema,
  createCardAnswerSchema,
  createCardDocument,
  subscriptionDocumentSchema,
} from './schemas.ts';

export type {
  Cardholder,
  CardholderAddress,
  CardInterfaceCard,
  CardTokenType,
  CardUpdatedValue,
  CardUpdateSubscription,
  CardUpdates,
  CardWalletType,
  CreateCardInput,
  CreatedCard,
} from './schemas.ts';

/**
 * Client of the card interface (spec, area `{base_url}`, `application/vnd.api+json` both ways):
 * cards, update subscriptions and on-demand checks. Every method takes the vault whose credentials
 * authenticate the call (a card of another vault answers 404, contract §2).
 *
 * Errors: {@link InvalidArgumentError} for a malformed card id (nothing is sent);
 * {@link UpstreamError} with area `card-interface` (or `oauth` when no token could be obtained) for
 * every upstream failure, e.g. 404 `card-not-found`, 400 `bad-request` with `pointer`, 422
 * `account-updater-not-supported`, 5xx with `retryable`, `timeout`, `invalid-response`.
 */
export class CardInterfaceClient extends areaClient('card-interface', JSON_API) {
  /**
   * `POST /cards` (spec "Endpoints, Card interface"; docs/gap-decisions.md "Card interface"; sandbox
   * contract §8). The PAN and CVC travel only in the request body, and the `pan`/`cvc` the documented
   * 201 echoes are dropped while parsing. Answers:
   * - 201 (or 200): the new card, `duplicate: false`;
   * - 303 (Duplicate Card Check on the vault found the PAN on file): the existing card, `duplicate:
   *   true`, from the answer's card record when it carries one, else read with {@link getCard} by the
   *   id of its body (`data.id`) or its `Location` (one more upstream call).
   * Never retried automatically except once after a 401 (see `requestWithBearer`).
   * @throws UpstreamError `invalid-response` for a 201 without a card record or a 303 naming no card.
   */
  async createCard(vault: string, input: CreateCardInput): Promise<CreatedCard> {
    const answer = await this.sendForAnswer(vault, {
      method: 'POST',
      path: ['cards'],
      body: JSON.stringify(createCardDocument(input)),
      sentInput: true,
      expectStatus: [200, 201, 303],
      optionalBodyStatuses: [303],
      schema: createCardAnswerSchema({ expMonth: input.expMonth, expYear: input.expYear }),
    });
    const duplicate = answer.status === 303;
    if (answer.data.kind === 'card') return { ...answer.data.card, duplicate };
    const existingId = !duplicate
      ? undefined
      : answer.data.kind === 'reference'
        ? answer.data.id
        : cardIdOfLocation(answer.location);
    if (existingId === undefined) {
      throw new UpstreamError({
        area: 'card-interface',
        operation: 'POST /cards',
        status: answer.status,
        code: 'invalid-response',
      });
    }
    return { ...(await this.getCard(vault, existingId)), duplicate: true };
  }

  /** `GET /cards/{card_id}` (docs/gap-decisions.md "Card interface": added retrieval, 404 `card-not-found`). */
  async getCard(vault: string, cardId: string): Promise<CardInterfaceCard> {
    assertCardId(cardId);
    return this.send(vault, {
      method: 'GET',
      path: ['cards', cardId],
      subject: cardId,
      expectStatus: [200],
      schema: cardDocumentSchema,
    });
  }

  /**
   * `POST /cards/{card_id}/card-update-subscriptions` (spec "Card update subscription"): subscribes
   * the card to account updater; an already subscribed card answers its existing subscription.
   * `state` is `failed` when the upstream could not subscribe it (docs/gap-decisions.md).
   */
  async subscribe(vault: string, cardId: string): Promise<CardUpdateSubscription> {
    assertCardId(cardId);
    return this.send(vault, {
      method: 'POST',
      path: ['cards', cardId, 'card-update-subscriptions'],
      subject: cardId,
      expectStatus: [200, 201],
      schema: subscriptionDocumentSchema(cardId),
    });
  }

  /**
   * `DELETE /cards/{card_id}/card-update-subscriptions` (spec; 204, idempotent per
   * docs/gap-decisions.md). Resolves once the card is unsubscribed.
   */
  async unsubscribe(vault: string, cardId: string): Promise<void> {
    assertCardId(cardId);
    await this.send(vault, {
      method: 'DELETE',
      path: ['cards', cardId, 'card-update-subscriptions'],
      subject: cardId,
      expectStatus: [200, 204],
    });
  }

  /**
   * `POST /cards/{card_id}/check` (spec "Card updates", on-demand check rules): the latest card data,
   * no state stored upstream. PANs in `updatedValues` are masked to BIN and last four while parsing.
   * An Amex or Discover card that is not subscribed fails with 422 `account-updater-not-supported`.
   */
  async check(vault: string, cardId: string): Promise<CardUpdates> {
    assertCardId(cardId);
    return this.send(vault, {
      method: 'POST',
      path: ['cards', cardId, 'check'],
      subject: cardId,
      expectStatus: [200],
      schema: checkDocumentSchema(cardId),
      jsonReviver: checkDocumentReviver,
    });
  }
}
