import { CARD_ERROR_RULES, type UpstreamErrorTable } from '../gateway-errors.ts';

/** Card interface failures the graph types (spec "Errors"; docs/gap-decisions.md "Card interface"). */
export const CARD_INTERFACE_ERRORS: UpstreamErrorTable = { area: 'card-interface', rules: CARD_ERROR_RULES };
