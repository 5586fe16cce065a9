import { buildApp } from './app.ts';
import { ConfigError, gatewayConfig, loadConfig } from './config/index.ts';
import { PortInUseError } from './lib/port-in-use.ts';
import { stopOnSignals } from './server/signals.ts';

/**
 * The production gateway (the Docker image's command): parses the configuration, builds and starts
 * the gateway, stops it on SIGTERM/SIGINT. `UPSTREAM=embedded` (the development default) is refused
 * with a ConfigError: the sandbox is no part of this entry; `npm start` (src/dev.ts) runs it. A bad
 * setting or a taken port ends the start with its one-line message (naming the variable), no stack.
 */
try {
  const config = gatewayConfig(loadConfig());
  const app = buildApp(config);
  const starting = app.start();
  // Before the listening line: a SIGTERM/SIGINT right after it, or during the start, stops cleanly.
  stopOnSignals(async () => {
    await starting;
    await app.stop();
  }, config.shutdownTimeoutMs);
  await starting;
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof PortInUseError ? error.message : error);
  process.exit(1);
}
