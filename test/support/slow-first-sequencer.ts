import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The test files known to take longest (paths from the repository root), longest first: on CI (2
 * cores) the quick benchmark took about 36 s, the main test about 23 s, the Redis failover about 32 s
 * (about half since its Redis nodes and sentinels stopped waiting out Redis's default periods), event
 * durability about 19 s, the three GraphiQL files about 18 s together, the runnable doc blocks about
 * 15 s, the examples about 10 s, the layering, card read cache and generated client files about 4 s;
 * the start-up and transport conformance files are placed by estimate. Only the order matters: a
 * stale entry costs some wall time, never a test.
 */
export const SLOW_TEST_FILES: readonly string[] = [
  'test/bench/bench-quick.test.ts',
  'test/main.test.ts',
  'test/gateway/event-durability.test.ts',
  'test/topology/redis-failover.test.ts',
  'test/docs/runnable-blocks.test.ts',
  'test/config/start-up.test.ts',
  'test/docs/examples.test.ts',
  'test/graphiql/graphiql-browser.test.ts',
  'test/graphiql/development-token.test.ts',
  'test/graphiql/graphiql-assets.test.ts',
  'test/transports/conformance.test.ts',
  'test/lint/layering.test.ts',
  'test/gateway/card-read-cache.test.ts',
  'test/clients/generated-client.test.ts',
];

/**
 * Starts the longest test files first. Vitest orders files by the durations of its previous run, kept
 * in node_modules/.vite; CI runs a clean clone, where Vitest falls back to the largest files first,
 * and a short file that runs for half a minute (the quick benchmark) could start last and leave one
 * worker running it alone. Files of {@link SLOW_TEST_FILES} come first in that order, the others in
 * Vitest's own order after them.
 */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = new Map(SLOW_TEST_FILES.map((path, index) => [path, index]));
    const rankOf = (spec: TestSpecification) =>
      rank.get(relative(this.ctx.config.root, spec.moduleId).replaceAll('\\', '/')) ?? rank.size;
    // Array.prototype.sort is stable: the unlisted files keep Vitest's order.
    return sorted.sort((a, b) => rankOf(a) - rankOf(b));
  }
}
