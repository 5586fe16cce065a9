import {
  CardBrandNotSupportedError,
  NetworkTokenCardNotAllowedError,
  NetworkTokenDeclinedError,
  NetworkTokenNotFoundError,
  NetworkTokenRejectedError,
} from '../../errors.ts';
import type { UpstreamErrorTable } from '../gateway-errors.ts';

/**
 * Network token failures the graph types (spec "Errors": POST /network-tokens 404 `declined`, 422
 * `card-not-allowed`, `card-brand-not-supported`, `rejected`; GET and DELETE 404 not found).
 */
export const NETWORK_TOKEN_ERRORS: UpstreamErrorTable = {
  area: 'network-tokens',
  rules: [
    { code: 'declined', error: () => new NetworkTokenDeclinedError() },
    { code: 'card-not-allowed', error: () => new NetworkTokenCardNotAllowedError() },
    { code: 'rejected', error: () => new NetworkTokenRejectedError() },
    {
      code: 'card-brand-not-supported',
      error: () => new CardBrandNotSupportedError('The card brand is not supported for network tokens'),
    },
    { status: 404, error: () => new NetworkTokenNotFoundError() },
  ],
  // `holder_info.number` is the holder's phone number (src/upstream/network-tokens/schemas.ts).
  inputFields: { number: 'phoneNumber' },
};
