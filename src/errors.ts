import { InputValidationError } from '@pothos/plugin-validation';
import { redactPans } from './lib/pan.ts';
import { InvalidArgumentError, UpstreamError } from './upstream/http.ts';

/**
 * Errors the gateway returns as data (GraphQL `interface Error { message: String! code: String! }`).
 * Each class becomes one GraphQL object type in src/schema/errors.ts. Messages are written for the
 * client and never carry a PAN or CVC; `code` is stable and machine-readable (the upstream code of
 * the specification's Errors table where one exists).
 */
export class GatewayError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(redactPans(message));
    this.code = code;
  }
}

/** Spec "Errors": GET /cards/{card_id} 404 `card-not-found`; also a card of another vault. */
export class CardNotFoundError extends GatewayError {
  override name = 'CardNotFoundError';
  readonly cardId: string;
  constructor(cardId: string) {
    super(`Card ${cardId} was not found in this vault`, 'card-not-found');
    this.cardId = cardId;
  }
}

/** Spec "Errors": 422 `card-brand-not-supported` (Diners Club, JCB for account updater; contract §7). */
export class CardBrandNotSupportedError extends GatewayError {
  override name = 'CardBrandNotSupportedError';
  constructor(message = 'The card brand is not supported by the account updater') {
    super(message, 'card-brand-not-supported');
  }
}

/** Spec "Errors": 422 `account-updater-not-supported` (also Amex/Discover checks of unenrolled cards). */
export class AccountUpdaterNotSupportedError extends GatewayError {
  override name = 'AccountUpdaterNotSupportedError';
  constructor(message = 'The account updater does not support this card') {
    super(message, 'account-updater-not-supported');
  }
}

/** Spec "Errors": POST /cards (v1) 404, merchant not found. */
export class MerchantNotFoundError extends GatewayError {
  override name = 'MerchantNotFoundError';
  constructor(message = 'The merchant is not registered for the account updater in this vault') {
    super(message, 'merchant-not-found');
  }
}

/**
 * Any other upstream failure: a 4xx the gateway has no dedicated type for, a 5xx, a timeout, a
 * connection failure or an unparseable answer. `retryable` says whether the same request may succeed
 * later (timeouts, connection failures, 429, 500, 502, 503, 504).
 */
export class UpstreamServiceError extends GatewayError {
  override name = 'UpstreamError';
  readonly retryable: boolean;
  /** HTTP status of the upstream answer; null when none arrived. */
  readonly status: number | null;
  constructor(message: string, code: string, retryable: boolean, status: number | null) {
    super(message, code);
    this.retryable = retryable;
    this.status = status;
  }
}

/** No valid client token was presented (HTTP `Authorization` or graphql-ws `connectionParams`). */
export class UnauthenticatedError extends GatewayError {
  override name = 'UnauthenticatedError';
  constructor(message = 'Authentication required: send Authorization: Bearer <token>') {
    super(message, 'unauthenticated');
  }
}

/** The token lacks the upstream scope a field needs, or names no access to the requested vault. */
export class ForbiddenError extends GatewayError {
  override name = 'ForbiddenError';
  constructor(message: string, code = 'forbidden') {
    super(message, code);
  }
}

/**
 * Maps a failure of an upstream client (src/upstream) to the typed error the schema returns as data.
 * Upstream codes of the specification's Errors table get their own type; every other upstream
 * failure becomes an UpstreamError carrying `retryable` and the HTTP status. Anything that is not an
 * upstream failure is returned unchanged (and surfaces as a masked GraphQL error).
 * @param context.cardId the card the call was about, for CardNotFoundError.
 * @param context.inputArgument the argument holding the client's input object: an upstream 400
 *   naming a member (`source.pointer`) becomes an InputValidationError on that input field.
 */
export function toGatewayError(error: unknown, context: UpstreamCallContext = {}): Error {
  if (error instanceof UpstreamError) {
    if (error.status === 400 && error.pointer && context.inputArgument) {
      // The upstream refused a member of the client's input the gateway cannot check itself
      // (e.g. a merchant the vault requires): report it on the input field, like our own checks.
      return new InputValidationError({
        issues: [
          {
            message: error.detail ?? 'is invalid',
            path: [context.inputArgument, ...inputPathOf(error.pointer)],
          },
        ],
      });
    }
    switch (error.code) {
      case 'card-not-found':
        return new CardNotFoundError(context.cardId ?? 'requested');
      case 'card-brand-not-supported':
        return new CardBrandNotSupportedError();
      case 'account-updater-not-supported':
        return new AccountUpdaterNotSupportedError();
      case 'merchant-not-found':
        return new MerchantNotFoundError();
      default:
        return new UpstreamServiceError(
          upstreamMessage(error),
          error.code,
          error.retryable,
          error.status ?? null,
        );
    }
  }
  if (error instanceof InvalidArgumentError && context.cardId !== undefined) {
    return new CardNotFoundError(context.cardId);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Which call an upstream failure came from, see {@link toGatewayError}. */
export interface UpstreamCallContext {
  cardId?: string;
  inputArgument?: string;
}

/** `/data/attributes/exp_month` or `/merchant/service_merchant_id` → `['expMonth']`, `['merchant', 'serviceMerchantId']`. */
function inputPathOf(pointer: string): string[] {
  const segments = pointer.split('/').slice(1);
  const members = segments[0] === 'data' && segments[1] === 'attributes' ? segments.slice(2) : segments;
  return members.map((segment) => segment.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));
}

function upstreamMessage(error: UpstreamError): string {
  const where = `${error.area} answered ${error.status === undefined ? 'nothing' : error.status}`;
  return error.detail ? `${where}: ${error.detail}` : `${where} (${error.code})`;
}

/**
 * Awaits an upstream call and rethrows its failure as the typed gateway error (see
 * {@link toGatewayError}), so resolvers can return upstream results directly.
 */
export async function mapUpstreamErrors<T>(work: Promise<T>, context: UpstreamCallContext = {}): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw toGatewayError(error, context);
  }
}
