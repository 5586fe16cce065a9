import { CardAttributesNotFoundError } from '../../errors.ts';
import type { UpstreamErrorTable } from '../gateway-errors.ts';

/** Card attributes failures the graph handles (a 404 is a number the data set does not know). */
export const CARD_ATTRIBUTES_ERRORS: UpstreamErrorTable = {
  area: 'card-attributes',
  rules: [{ status: 404, error: () => new CardAttributesNotFoundError() }],
};
