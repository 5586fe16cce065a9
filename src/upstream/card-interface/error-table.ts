import {
  AccountUpdaterNotSupportedError,
  CardBrandNotSupportedError,
  CardNotFoundError,
} from '../../errors.ts';
import type { UpstreamErrorTable } from '../gateway-errors.ts';

/** Card interface failures the graph types (spec "Errors"; docs/gap-decisions.md "Card interface"). */
export const CARD_INTERFACE_ERRORS: UpstreamErrorTable = {
  area: 'card-interface',
  rules: [
    { code: 'card-not-found', error: ({ subject }) => new CardNotFoundError(subject ?? 'requested') },
    { code: 'card-brand-not-supported', error: () => new CardBrandNotSupportedError() },
    { code: 'account-updater-not-supported', error: () => new AccountUpdaterNotSupportedError() },
  ],
};
