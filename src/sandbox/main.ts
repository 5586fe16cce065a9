import { ConfigError, SANDBOX_CREDENTIALS } from '../config/index.ts';
import { createLogger } from '../lib/logger.ts';
import { PortInUseError } from '../lib/port-in-use.ts';
import { onFirstStopSignal } from '../lib/stop-signals.ts';
import { createTracing } from '../lib/tracing.ts';
import { loadSandboxConfig } from './config.ts';
import { createSandbox } from './sandbox.ts';

/**
 * `npm run sandbox`: the embedded sandbox as a standalone process (contract §1). Reads its settings
 * with `loadSandboxConfig`, registers `SANDBOX_WEBHOOK_URL` (when set) for both vaults, stops on
 * SIGTERM/SIGINT. A bad setting or a taken port ends it with one line naming the variable.
 */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadSandboxConfig>;
  try {
    config = loadSandboxConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger({ name: 'sandbox', level: config.logLevel });
  const tracing = await createTracing(config.tracing);
  const sandbox = createSandbox({
    port: config.port,
    host: config.host,
    logger,
    webhookDelayMs: config.webhookDelayMs,
    wire: config.wire,
    ...(config.duplicateCardCheckVaults ? { duplicateCardCheckVaults: config.duplicateCardCheckVaults } : {}),
    ...(tracing.enabled ? { tracer: tracing.tracer } : {}),
  });
  const starting = sandbox.start();
  // Before the ready line: a SIGTERM/SIGINT right after it, or during the start, stops cleanly
  // (without a listener Node ends the process by the signal itself); a repeated one is ignored.
  onFirstStopSignal((signal) => {
    logger.info({ signal }, 'sandbox stopping');
    starting
      .then(() => sandbox.stop())
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  let url: string;
  try {
    ({ url } = await starting);
  } catch (error) {
    if (!(error instanceof PortInUseError)) throw error;
    // One line naming SANDBOX_PORT, no stack trace.
    process.stderr.write(`${error.message}\n`);
    await tracing.shutdown();
    process.exit(1);
  }
  if (config.webhookUrl) {
    for (const vault of Object.keys(SANDBOX_CREDENTIALS)) {
      const { id } = sandbox.registerWebhookEndpoint(vault, {
        url: config.webhookUrl,
        secret: config.webhookSecret,
      });
      logger.info({ vault, endpointId: id, webhookUrl: config.webhookUrl }, 'webhook endpoint registered');
    }
  }
  logger.info(
    {
      tokenUrl: `${url}/oauth/token`,
      cardInterfaceUrl: `${url}/card-interface`,
      accountUpdaterUrl: `${url}/account-updater`,
      cardAttributesUrl: `${url}/card-attributes`,
      accountsUrl: `${url}/accounts`,
      openApiUrl: `${url}/openapi.json`,
      webhookEndpointsUrl: `${url}/sandbox/webhook-endpoints`,
      webhookDeliveriesUrl: `${url}/sandbox/webhook-deliveries`,
      vaults: Object.keys(SANDBOX_CREDENTIALS),
      webhookDelayMs: config.webhookDelayMs,
      webhookSigningSecret: config.webhookUrl ? 'set' : 'unused (no SANDBOX_WEBHOOK_URL)',
    },
    'sandbox ready',
  );
}

await main();
