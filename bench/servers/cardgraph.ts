/**
 * cardgraph as benchmarked: `buildApp(gatewayConfig(loadConfig()))` (the production gateway of
 * src/main.ts) from the environment the orchestrator passes
 * (UPSTREAM=remote on the bench sandbox, EVENTS_BACKEND, DATA_DIR, and `GRAPHQL_LEAN_HTTP=off` for
 * `--compare-yoga` or `GRAPHQL_JIT=off` for `--compare-jit`), logging as in production: the
 * orchestrator sets `LOG_LEVEL=info`, so every request writes its access line (src/server/access-line.ts)
 * through the gateway's pino logger (redaction hook included) to a real pino destination on /dev/null
 * (SonicBoom, buffered asynchronous writes, as pino's default stdout destination in production):
 * building, serializing and writing the lines is counted, only the bytes are discarded.
 */
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import { gatewayConfig, loadConfig } from '../../src/config/index.ts';
import { serveStats } from '../lib/child.ts';

const app = buildApp(gatewayConfig(loadConfig()), {
  logDestination: pino.destination('/dev/null'),
});
const { url } = await app.start();
serveStats({ url }, () => ({ subscribers: app.events?.subscriberCount() ?? 0 }));
process.once('SIGTERM', () => {
  void app.stop().then(() => process.exit(0));
});
