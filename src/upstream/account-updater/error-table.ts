import {
  AccountUpdaterNotSupportedError,
  CardBrandNotSupportedError,
  CardNotFoundError,
  MerchantNotFoundError,
} from '../../errors.ts';
import type { UpstreamErrorTable } from '../gateway-errors.ts';

/** Account updater v1 failures the graph types (spec "Errors": enrol, card check, get card). */
export const ACCOUNT_UPDATER_ERRORS: UpstreamErrorTable = {
  area: 'account-updater',
  rules: [
    { code: 'card-not-found', error: ({ subject }) => new CardNotFoundError(subject ?? 'requested') },
    { code: 'card-brand-not-supported', error: () => new CardBrandNotSupportedError() },
    { code: 'account-updater-not-supported', error: () => new AccountUpdaterNotSupportedError() },
    { code: 'merchant-not-found', error: () => new MerchantNotFoundError() },
  ],
};
