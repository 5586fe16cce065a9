/**
 * cardgraph as benchmarked: `buildApp(gatewayConfig(loadConfig()))` (the production gateway of
 * src/main.ts) from the environment the orchestrator passes
 * (UPSTREAM=remote on the bench sandbox, EVENTS_BACKEND, DATA_DIR, and `GRAPHQL_LEAN_HTTP=off` for
 * `--compare-yoga` or `GRAPHQL_JIT=off` for `--compare-jit`), logs discarded.
 */
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import { gatewayConfig, loadConfig } from '../../src/config.ts';
import { serveStats } from '../lib/child.ts';

const app = buildApp(gatewayConfig(loadConfig()), {
  logDestination: pino.destination('/dev/null'),
});
const { url } = await app.start();
serveStats({ url }, () => ({ subscribers: app.events?.subscriberCount() ?? 0 }));
process.once('SIGTERM', () => {
  void app.stop().then(() => process.exit(0));
});
