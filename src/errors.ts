import { redactCardText } from './lib/redaction.ts';

/**
 * The errors that reach GraphQL, in undici's style (lib/core/errors.js): one root class,
 * {@link GatewayError}, and one subclass per failure with a constant `code`. Each class is one GraphQL
 * object type implementing `interface Error { message: String! code: String! }` (registered in
 * src/schema/errors.ts) and is returned as data by the fields that list it. Messages are written for
 * the client and never carry a PAN or CVC; `code` is stable and machine-readable (the upstream code of
 * the specification's Errors table where one exists).
 *
 * Upstream failures become these classes in one place: the per-area tables of src/upstream/*
 * /error-table.ts, applied at the client boundary (src/upstream/gateway-errors.ts).
 */
export abstract class GatewayError extends Error {
  /** Stable, machine-readable code; constant per class. */
  abstract readonly code: string;

  /** @param message for the client; any PAN or CVC in it is masked (src/lib/redaction.ts `redactCardText`). `name` is the concrete class's name. */
  constructor(message: string, options?: ErrorOptions) {
    super(redactCardText(message), options);
    this.name = new.target.name;
  }
}

/** Any concrete class of {@link GatewayError}, e.g. for a field's `errors.types`. */
export type GatewayErrorClass = new (...args: never[]) => GatewayError;

/**
 * The base of a {@link GatewayError} class with the constant `code` (undici's style: each class
 * fixes its code once) and the message it carries when constructed without one.
 */
function withCode<const Code extends string>(code: Code, defaultMessage: string) {
  abstract class CodedError extends GatewayError {
    readonly code: Code = code;
    constructor(message = defaultMessage) {
      super(message);
    }
  }
  return CodedError;
}

/** No valid client token was presented (HTTP `Authorization` or graphql-ws `connectionParams`). */
export class UnauthenticatedError extends withCode(
  'unauthenticated',
  'Authentication required: send Authorization: Bearer <token>',
) {}

/** The token lacks the upstream scope a field needs (`forbidden`). */
export class ForbiddenError extends withCode<string>('forbidden', 'Not authorized') {}

/** The requested vault is not among the token's vaults (GraphQL type `ForbiddenError`). */
export class VaultNotAllowedError extends ForbiddenError {
  override readonly code: string = 'vault-not-allowed';
}

/** The token names several vaults and the operation named none (GraphQL type `ForbiddenError`). */
export class VaultRequiredError extends ForbiddenError {
  override readonly code: string = 'vault-required';
}

/** Spec "Errors": GET /cards/{card_id} 404 `card-not-found`; also a card of another vault. */
export class CardNotFoundError extends withCode('card-not-found', 'The card was not found in this vault') {
  /** The id the caller asked for (`requested` when the call named none). */
  readonly cardId: string;
  constructor(cardId: string) {
    super(`Card ${cardId} was not found in this vault`);
    this.cardId = cardId;
  }
}

/** Spec "Errors": 422 `card-brand-not-supported` (Diners Club, JCB for account updater; contract §7). */
export class CardBrandNotSupportedError extends withCode(
  'card-brand-not-supported',
  'The card brand is not supported by the account updater',
) {}

/** Spec "Errors": 422 `account-updater-not-supported` (also Amex/Discover checks of unenrolled cards). */
export class AccountUpdaterNotSupportedError extends withCode(
  'account-updater-not-supported',
  'The account updater does not support this card',
) {}

/** Spec "Errors": POST /cards (v1) 404, merchant not found. */
export class MerchantNotFoundError extends withCode(
  'merchant-not-found',
  'The merchant is not registered for the account updater in this vault',
) {}

/** Spec "Errors": POST /network-tokens 404 `declined`. */
export class NetworkTokenDeclinedError extends withCode(
  'declined',
  'The card network declined the network token',
) {}

/** Spec "Errors": POST /network-tokens 422 `rejected`. */
export class NetworkTokenRejectedError extends withCode<string>(
  'rejected',
  'The network rejected the network token request',
) {}

/** Spec "Errors": POST /network-tokens 422 `card-not-allowed` (GraphQL type `NetworkTokenRejectedError`). */
export class NetworkTokenCardNotAllowedError extends NetworkTokenRejectedError {
  override readonly code: string = 'card-not-allowed';
  constructor() {
    super('The card is not allowed a network token');
  }
}

/** GET and DELETE /network-tokens/{pan_alias} 404: no token for the alias in this vault. */
export class NetworkTokenNotFoundError extends withCode(
  'not-found',
  'No network token exists for this PAN alias in this vault',
) {}

/** The organization does not exist or the caller's vault credentials cannot see it (`not-found`). */
export class OrganizationNotFoundError extends withCode('not-found', 'The organization was not found') {}

/**
 * Card attributes lookup 404: the data set knows no card product for the number. Not a GraphQL type:
 * the fields answer null for it (a BIN without attributes is an answer, not a failure).
 */
export class CardAttributesNotFoundError extends withCode(
  'not-found',
  'No card attributes are known for this number',
) {}

/**
 * Card attributes lookup 422: the upstream could not discern a BIN from the number (the provider's
 * documented answer, "We could not discern a bin from the input provided"; sandbox contract §8).
 * GraphQL type `BinNotDiscernedError`, code `bin-not-discerned`.
 */
export class BinNotDiscernedError extends withCode(
  'bin-not-discerned',
  'No BIN could be discerned from the number',
) {}

/**
 * Any other upstream failure (GraphQL type `UpstreamError`): a 4xx the gateway has no dedicated class
 * for, a 5xx, a timeout, a connection failure or an unparseable answer. The one class whose `code` is
 * not fixed: it passes the upstream's own code through (`server-error`, `timeout`, `invalid-response`,
 * …, see src/upstream/errors.ts), which clients already branch on.
 * - `retryable`: whether the same request may succeed later (timeouts, connection failures, 429, 500,
 *   502, 503, 504).
 * - `status`: HTTP status of the upstream answer; null when none arrived.
 */
export class UpstreamServiceError extends GatewayError {
  readonly code: string;
  readonly retryable: boolean;
  readonly status: number | null;
  constructor(message: string, code: string, retryable: boolean, status: number | null) {
    super(message);
    this.code = code;
    this.retryable = retryable;
    this.status = status;
  }
}

/**
 * The operation asks more of the gateway than its limits allow (`NODES_MAX_IDS`,
 * `OPERATION_MAX_COST`, `UPSTREAM_CALL_BUDGET`, src/config/). Codes: `too-many-ids` (more ids than
 * `nodes(ids:)` accepts), `operation-too-expensive` (cost or estimated upstream calls over the limit,
 * refused before anything runs). Not retryable as is: ask for less (fewer ids, smaller pages, fewer
 * joins).
 */
export class OperationLimitError extends GatewayError {
  readonly code: 'too-many-ids' | 'operation-too-expensive';
  constructor(message: string, code: 'too-many-ids' | 'operation-too-expensive') {
    super(message);
    this.code = code;
  }
}
