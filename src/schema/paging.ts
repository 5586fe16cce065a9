/**
 * Page sizes of the connections and the cost extension of fields that multiply or reach the
 * upstream. The resolvers clamp `first` to these constants and the operation cost
 * (src/plugins/operation-cost.ts) multiplies by the same constants, so a page the resolver serves is
 * never refused by the cost limit for its size alone, and the cost never underestimates a page.
 */

/** `cardEvents` and `networkTokenEvents` history pages: 50 items unless `first` says otherwise, at most 500. */
export const EVENT_PAGE_SIZE = { default: 50, max: 500 } as const;

/** Organization members and invites (Pothos offset connections): 20 unless `first` says otherwise, at most 100. */
export const ORGANIZATION_PAGE_SIZE = { default: 20, max: 100 } as const;

/**
 * `extensions.cost` of a field, read by the operation cost plugin.
 * - `upstreamCalls`: upstream calls one resolution of the field may make (0 when absent), e.g. one
 *   per page of a connection.
 * - `upstreamCallsPerItem`: upstream calls per item of its list (e.g. one read per id of `nodes`).
 * - `listSize`: the field returns a list whose length is given by the argument `argument`: its value
 *   when it is a number (a page size, clamped to `max`), its length when it is a list (ids, capped at
 *   `max`), or `default` when the argument is absent. The cost of everything selected below the
 *   field is multiplied by it.
 */
export interface FieldCost {
  upstreamCalls?: number;
  upstreamCallsPerItem?: number;
  listSize?: { argument: string; default?: number; max?: number };
}

/** `{ cost }` for a field's `extensions` (see {@link FieldCost}). */
export function costExtension(cost: FieldCost): { cost: FieldCost } {
  return { cost };
}

/** Clamps a requested page size to `[1, max]`, `default` when absent (what the resolvers serve). */
export function pageSize(first: number | null | undefined, size: { default: number; max: number }): number {
  return Math.min(Math.max(first ?? size.default, 1), size.max);
}
