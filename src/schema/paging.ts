import { InputValidationError } from '@pothos/plugin-validation';
import { decodeCursor, encodeCursor, type HistoryCursor } from '../events/event-log.ts';

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
 *   field is multiplied by it. With `distinct`, a list argument counts its distinct values only (by
 *   their JSON with sorted keys): the items one per-request DataLoader reads once however often they
 *   repeat (a router's `_entities` representations).
 */
export interface FieldCost {
  upstreamCalls?: number;
  upstreamCallsPerItem?: number;
  listSize?: { argument: string; default?: number; max?: number; distinct?: boolean };
}

/** `{ cost }` for a field's `extensions` (see {@link FieldCost}). */
export function costExtension(cost: FieldCost): { cost: FieldCost } {
  return { cost };
}

/** Clamps a requested page size to `[1, max]`, `default` when absent (what the resolvers serve). */
export function pageSize(first: number | null | undefined, size: { default: number; max: number }): number {
  return Math.min(Math.max(first ?? size.default, 1), size.max);
}

/** Connection arguments of an event history field (forward pagination only). */
export interface EventHistoryArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/**
 * A cursor argument of an event history or resume field, parsed.
 * @param what names the event kind in the error, e.g. `card event`.
 * @throws InputValidationError (`invalid-input`, path `after`) when it is not one of our cursors.
 */
export function eventCursorArg(cursor: string, what: string): HistoryCursor {
  const decoded = decodeCursor(cursor);
  if (!decoded)
    throw new InputValidationError({ issues: [{ message: `is not a ${what} cursor`, path: ['after'] }] });
  return decoded;
}

/**
 * One page of an event history as a Relay connection (`cardEvents`, `networkTokenEvents`):
 * `first` clamped to {@link EVENT_PAGE_SIZE}, one extra event read to know `hasNextPage`.
 * @param readPage reads up to `limit` events after `after` (null: from the oldest retained).
 * @throws InputValidationError for `last`/`before` or a cursor that is not one of ours.
 */
export async function eventHistoryPage<E extends { position: bigint; timestampMs: number }>(
  args: EventHistoryArgs,
  what: string,
  readPage: (after: HistoryCursor | null, limit: number) => Promise<readonly E[]>,
) {
  if (args.last != null || args.before != null) {
    throw new InputValidationError({
      issues: [{ message: 'only forward pagination (first, after) is supported', path: ['last'] }],
    });
  }
  const first = pageSize(args.first, EVENT_PAGE_SIZE);
  const after = args.after ? eventCursorArg(args.after, what) : null;
  const page = await readPage(after, first + 1);
  const edges = page.slice(0, first).map((node) => ({ cursor: encodeCursor(node), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.length > first,
      hasPreviousPage: after !== null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
