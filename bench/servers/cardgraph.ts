/**
 * cardgraph as benchmarked: `buildApp(gatewayConfig(loadConfig()))` (the production gateway of
 * src/main.ts, from the production build as the Docker image runs it) from the environment the orchestrator passes
 * (UPSTREAM=remote on the bench sandbox, EVENTS_BACKEND, DATA_DIR, and `GRAPHQL_LEAN_HTTP=off` for
 * `--compare-yoga` or `GRAPHQL_JIT=off` for `--compare-jit`), logging as in production: the
 * orchestrator sets `LOG_LEVEL=info`, so every request writes its access line (src/server/access-line.ts)
 * through the gateway's pino logger (redaction hook included) to a real pino destination on /dev/null
 * (SonicBoom, buffered asynchronous writes, as pino's default stdout destination in production):
 * building, serializing and writing the lines is counted, only the bytes are discarded.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type * as AppModule from '../../src/app.ts';
import type * as ConfigModule from '../../src/config/index.ts';
import { serveStats } from '../lib/child.ts';

// The production build the Docker image runs (scripts/build.ts), which bench/run.ts makes in
// CARDGRAPH_BUILD_DIR before it starts any gateway: its `app.js` and `config.js` entries are
// src/app.ts and src/config/index.ts bundled.
const buildDir = process.env.CARDGRAPH_BUILD_DIR;
if (!buildDir) throw new Error('CARDGRAPH_BUILD_DIR is not set (bench/run.ts sets it)');
const { buildApp } = (await import(pathToFileURL(join(buildDir, 'app.js')).href)) as typeof AppModule;
const { gatewayConfig, loadConfig } = (await import(
  pathToFileURL(join(buildDir, 'config.js')).href
)) as typeof ConfigModule;

const app = buildApp(gatewayConfig(loadConfig()), {
  logDestination: pino.destination('/dev/null'),
});
const { url } = await app.start();
serveStats({ url }, () => ({ subscribers: app.events?.subscriberCount() ?? 0 }));
process.once('SIGTERM', () => {
  void app.stop().then(() => process.exit(0));
});
