import { MerchantNotFoundError } from '../../errors.ts';
import { CARD_ERROR_RULES, type UpstreamErrorTable } from '../gateway-errors.ts';

/**
 * Account updater v1 failures the graph types (spec "Errors": enrol, card check, get card). The
 * merchant id member, `vgs_merchant_id` (documented) or `service_merchant_id` (specification), is the
 * input field `serviceMerchantId` (sandbox contract §8).
 */
export const ACCOUNT_UPDATER_ERRORS: UpstreamErrorTable = {
  area: 'account-updater',
  rules: [...CARD_ERROR_RULES, { code: 'merchant-not-found', error: () => new MerchantNotFoundError() }],
  inputFields: { vgs_merchant_id: 'serviceMerchantId', service_merchant_id: 'serviceMerchantId' },
};
