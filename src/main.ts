import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

try {
  const config = loadConfig();
  const app = buildApp(config);
  await app.start();
  const shutdown = () => {
    // The last resort of a bounded shutdown: whatever still runs at SHUTDOWN_TIMEOUT_MS is abandoned.
    setTimeout(() => {
      console.error(`shutdown did not finish within SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms)`);
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    app.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
