/**
 * Paging types of the organization members client (JSON:API `page[number]` / `page[size]`,
 * docs/gap-decisions.md "Organization members"). The member and invitation types are derived from
 * the contract (src/contracts/accounts.ts) in schemas.ts.
 */

/**
 * Which page of a list to read (JSON:API `page[number]`, `page[size]`; docs/gap-decisions.md
 * "Organization members").
 * - `number`: 1-based page number; the upstream default (1) when absent.
 * - `size`: items per page; the upstream default (20 in the sandbox, at most 100) when absent.
 */
export interface PageRequest {
  number?: number;
  size?: number;
}

/**
 * One page of a list.
 * - `items`: the page's items, in upstream order (oldest first in the sandbox); empty past the last page.
 * - `total`: number of items over all pages (`meta.total`), when the upstream sends it.
 * - `nextPage`: the request of the following page (from `links.next`); absent on the last page.
 * - `whole`: true when the upstream answered without paging members (no `links`, as the provider's
 *   documented example): `items` is then the whole list whatever page was asked for.
 */
export interface Page<T> {
  items: T[];
  total?: number;
  nextPage?: { number: number; size?: number };
  whole?: boolean;
}
