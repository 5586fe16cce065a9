import { BinNotDiscernedError, CardAttributesNotFoundError } from '../../errors.ts';
import type { UpstreamErrorTable } from '../gateway-errors.ts';

/**
 * Card attributes failures the graph handles: a 404 is a number the data set does not know (the
 * specification's reading); a 422 is the provider's documented "We could not discern a bin from the
 * input provided" (sandbox contract §8), whatever its code.
 */
export const CARD_ATTRIBUTES_ERRORS: UpstreamErrorTable = {
  area: 'card-attributes',
  rules: [
    { status: 404, error: () => new CardAttributesNotFoundError() },
    { status: 422, error: () => new BinNotDiscernedError() },
  ],
};
