/**
 * cardgraph as benchmarked: `buildApp(gatewayConfig(loadConfig()))` (the production gateway of
 * src/main.ts) from the environment the orchestrator passes
 * (UPSTREAM=remote on the bench sandbox, EVENTS_BACKEND, DATA_DIR, …), logs discarded.
 * `BENCH_LEAN_GRAPHQL_HTTP=off` turns the lean GraphQL path off (`--compare-yoga`),
 * `BENCH_COMPILED_EXECUTION=off` the compiled execution of queries (`--compare-jit`).
 */
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import { gatewayConfig, loadConfig } from '../../src/config.ts';
import { serveStats } from '../lib/child.ts';

const app = buildApp(gatewayConfig(loadConfig()), {
  logDestination: pino.destination('/dev/null'),
  leanGraphqlHttp: process.env.BENCH_LEAN_GRAPHQL_HTTP !== 'off',
  compiledExecution: process.env.BENCH_COMPILED_EXECUTION !== 'off',
});
const { url } = await app.start();
serveStats({ url }, () => ({ subscribers: app.events?.subscriberCount() ?? 0 }));
process.once('SIGTERM', () => {
  void app.stop().then(() => process.exit(0));
});
