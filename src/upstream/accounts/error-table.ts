import { OrganizationNotFoundError } from '../../errors.ts';
import type { UpstreamErrorTable } from '../gateway-errors.ts';

/** Organization members failures the graph types (404: the organization is unknown to the vault). */
export const ACCOUNTS_ERRORS: UpstreamErrorTable = {
  area: 'accounts',
  rules: [{ status: 404, error: () => new OrganizationNotFoundError() }],
};
