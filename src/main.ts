import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

try {
  const app = buildApp(loadConfig());
  await app.start();
  const shutdown = () => {
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
