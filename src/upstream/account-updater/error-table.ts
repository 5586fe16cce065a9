import { MerchantNotFoundError } from '../../errors.ts';
import { CARD_ERROR_RULES, type UpstreamErrorTable } from '../gateway-errors.ts';

/** Account updater v1 failures the graph types (spec "Errors": enrol, card check, get card). */
export const ACCOUNT_UPDATER_ERRORS: UpstreamErrorTable = {
  area: 'account-updater',
  rules: [...CARD_ERROR_RULES, { code: 'merchant-not-found', error: () => new MerchantNotFoundError() }],
};
