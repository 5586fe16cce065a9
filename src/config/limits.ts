import type { z } from 'zod';
import { integer, type SettingsSection } from './fields.ts';

/** What one GraphQL operation may ask of the gateway and, through it, of the upstream. */
export const limitsSettings = {
  title: 'Operation limits',
  about: 'What one GraphQL operation may ask for.',
  shape: {
    NODES_MAX_IDS: integer(1, 1_000, 100).describe('Most ids one nodes(ids:) accepts.'),
    ENTITIES_MAX_REPRESENTATIONS: integer(1, 100_000, 1_000).describe(
      'Most representations one _entities call of a Federation router accepts (FEDERATION=on); routers send a whole page in one call, so this fits router pages. The cost counts the distinct representations.',
    ),
    ENTITIES_READ_CONCURRENCY: integer(1, 1_000, 16).describe(
      'Most entity reads one _entities call runs at once; the rest wait for a free slot instead of being refused.',
    ),
    OPERATION_MAX_COST: integer(100, 10_000_000, 20_000).describe(
      'Highest cost of an operation, computed with its variables: each field returning an object counts 1, multiplied by the first/ids sizes of the lists around it.',
    ),
    UPSTREAM_CALL_BUDGET: integer(1, 10_000, 100).describe(
      'Upstream calls one operation (one event, for subscriptions) may make, estimated before execution and counted while it runs; beyond it fields fail with code upstream-budget-exceeded.',
    ),
  },
} satisfies SettingsSection;

/** What one GraphQL operation may ask of the gateway and, through it, of the upstream. */
export interface OperationLimitsConfig {
  /** Most ids `nodes(ids:)` accepts (`NODES_MAX_IDS`). */
  nodesMaxIds: number;
  /**
   * Most representations one `_entities` call of a Federation router accepts
   * (`ENTITIES_MAX_REPRESENTATIONS`, `FEDERATION=on`): a router sends a whole page's references in
   * one call and never splits it, so this fits router pages (default 1,000). The cost counts the
   * distinct representations, the reads the call makes (docs/entity-batches.md).
   */
  entitiesMaxRepresentations: number;
  /**
   * Most entity reads one `_entities` call runs at once (`ENTITIES_READ_CONCURRENCY`); the rest
   * wait for a free slot instead of being refused (default 16).
   */
  entitiesReadConcurrency: number;
  /**
   * Highest cost of an operation, computed with its variables (`OPERATION_MAX_COST`): every field
   * returning an object counts 1, multiplied by the page sizes (`first`) and id counts (`ids`) of
   * the lists around it (src/plugins/operation-cost.ts).
   */
  maxCost: number;
  /**
   * Upstream calls one operation (or one subscription event) may make (`UPSTREAM_CALL_BUDGET`):
   * estimated before execution and counted at the upstream client boundary while it runs.
   */
  upstreamCallBudget: number;
}

/** {@link OperationLimitsConfig} from the parsed variables. */
export function operationLimitsConfig(
  e: z.output<z.ZodObject<typeof limitsSettings.shape>>,
): OperationLimitsConfig {
  return {
    nodesMaxIds: e.NODES_MAX_IDS,
    entitiesMaxRepresentations: e.ENTITIES_MAX_REPRESENTATIONS,
    entitiesReadConcurrency: e.ENTITIES_READ_CONCURRENCY,
    maxCost: e.OPERATION_MAX_COST,
    upstreamCallBudget: e.UPSTREAM_CALL_BUDGET,
  };
}

/** The app-wide card read cache (src/loaders/card-read-cache.ts). */
export const cardCacheSettings = {
  title: 'Card read cache',
  about:
    'Card reads (card interface and account updater) are cached per vault until an au_card.* event of the card (from any replica) or a mutation of it here.',
  shape: {
    CARD_CACHE_TTL_MS: integer(0, 86_400_000, 300_000).describe(
      'Longest a read is served without a card event (ms), the backstop; 0 turns the cache off.',
    ),
    CARD_CACHE_MAX_ENTRIES: integer(1, 10_000_000, 100_000).describe('Cards held.'),
  },
} satisfies SettingsSection;

/** App-wide card read cache (src/loaders/card-read-cache.ts). */
export interface CardCacheConfig {
  /** Longest a read is served without a card event (ms); 0 turns the cache off. */
  ttlMs: number;
  /** Cards held. */
  maxEntries: number;
}

/** {@link CardCacheConfig} from the parsed variables. */
export function cardCacheConfig(e: z.output<z.ZodObject<typeof cardCacheSettings.shape>>): CardCacheConfig {
  return { ttlMs: e.CARD_CACHE_TTL_MS, maxEntries: e.CARD_CACHE_MAX_ENTRIES };
}
