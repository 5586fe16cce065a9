import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './support/slow-first-sequencer.ts';

export default defineConfig({
  resolve: {
    // Node loads graphql 16's CommonJS entry for every dependency (it has no `exports` map); Vite would
    // give our sources the .mjs build, and two copies break `instanceof GraphQLError` and schemas.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker per core less one: a single worker on CI's 2 cores, where most
    // test files spend their time waiting (on child processes, Redis, Sentinel, timers), not computing.
    // Two workers there; the default on larger machines. Each file still runs in its own process.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // With two workers the wall time is that of the longer queue: the longest files start first.
    sequence: { sequencer: SlowFirstSequencer },
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
