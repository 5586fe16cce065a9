import type { DestinationStream } from 'pino';
import { type App, type AppAddresses, buildApp } from './app.ts';
import {
  type Config,
  ConfigError,
  type GatewayConfig,
  gatewayConfig,
  loadConfig,
  onSandbox,
} from './config/index.ts';
import { CARD_EVENTS_WEBHOOK_PATH } from './events/webhook-receiver.ts';
import { createLogger } from './lib/logger.ts';
import { PortInUseError } from './lib/port-in-use.ts';
import { createTracing } from './lib/tracing.ts';
import { shutDownTracing } from './runtime/services.ts';
import { createSandbox, type Sandbox, type SandboxOptions } from './sandbox/sandbox.ts';
import { stopOnSignals } from './server/signals.ts';

/** Options of {@link startDevelopment} for tests; `npm start` passes none. */
export interface DevelopmentOptions {
  /** Where the gateway's and the sandbox's JSON log lines go (stdout by default). */
  logDestination?: DestinationStream;
  /** Sandbox settings tests change: a compressed retry schedule, response validation, a slow BIN lookup. */
  sandbox?: Pick<SandboxOptions, 'retryScheduleMs' | 'validateResponses' | 'cardAttributesDelayMs'>;
}

/** A started development gateway, on the sandbox when `UPSTREAM=embedded`. */
export interface Development extends AppAddresses {
  app: App;
  /** The configuration the gateway runs with (the sandbox's real addresses in embedded mode). */
  config: GatewayConfig;
  /** The sandbox (embedded mode), `undefined` on a remote upstream. */
  sandbox: Sandbox | undefined;
  /** The sandbox's base address (contract §1), in embedded mode. */
  sandboxUrl: string | undefined;
  /** Stops the gateway, then the sandbox, then the trace export. */
  stop(): Promise<void>;
}

/**
 * The development composition (`npm start`, and every test stack): with `UPSTREAM=embedded` it
 * starts the sandbox (`SANDBOX_PORT`, `SANDBOX_WEBHOOK_DELAY_MS`) on 127.0.0.1, gives the gateway
 * its real addresses ({@link onSandbox}), starts the gateway and registers the gateway's webhook
 * receiver in the sandbox for every vault, signed with the first of `WEBHOOK_SECRETS`. With
 * `UPSTREAM=remote` it starts the gateway alone. Both share one tracer provider, so a trace runs
 * from the GraphQL operation into the sandbox's server spans.
 * @throws the start error of the sandbox or the gateway, after stopping what had started.
 */
export async function startDevelopment(
  config: Config,
  options: DevelopmentOptions = {},
): Promise<Development> {
  const resources = new AsyncDisposableStack();
  try {
    const destination = options.logDestination;
    const tracing = await createTracing(config.tracing, config.version);
    // Reports a failed trace export at shutdown; the gateway and the sandbox log with their own names.
    const logger = createLogger({ name: 'dev', level: config.logLevel, destination });
    resources.defer(() => shutDownTracing(tracing, logger));
    let sandbox: Sandbox | undefined;
    let sandboxUrl: string | undefined;
    let gateway: GatewayConfig;
    if ('sandbox' in config.upstream) {
      sandbox = createSandbox({
        port: config.upstream.sandbox.port,
        host: '127.0.0.1',
        logger: createLogger({ name: 'sandbox', level: config.logLevel, destination }),
        webhookDelayMs: config.upstream.sandbox.webhookDelayMs,
        wire: config.upstream.sandbox.wire,
        ...(config.upstream.sandbox.duplicateCardCheckVaults
          ? { duplicateCardCheckVaults: config.upstream.sandbox.duplicateCardCheckVaults }
          : {}),
        ...options.sandbox,
        ...(tracing.enabled ? { tracer: tracing.tracer } : {}),
      });
      const started = sandbox;
      sandboxUrl = (await started.start()).url;
      resources.defer(() => started.stop());
      gateway = onSandbox(config, sandboxUrl);
    } else {
      gateway = gatewayConfig(config);
    }
    const app = buildApp(gateway, { tracing, ...(destination ? { logDestination: destination } : {}) });
    resources.defer(() => app.stop());
    const addresses = await app.start();
    for (const vault of Object.keys(gateway.upstream.credentials)) {
      sandbox?.registerWebhookEndpoint(vault, {
        url: `${addresses.url}${CARD_EVENTS_WEBHOOK_PATH}`,
        secret: gateway.webhooks.secrets[0]!,
      });
    }
    const stack = resources.move();
    return {
      ...addresses,
      app,
      config: gateway,
      sandbox,
      sandboxUrl,
      stop: () => stack.disposeAsync(),
    };
  } catch (error) {
    await resources.disposeAsync();
    throw error;
  }
}

if (import.meta.main) {
  try {
    const config = loadConfig();
    const starting = startDevelopment(config);
    // Before the listening line: a SIGTERM/SIGINT right after it, or during the start, stops cleanly.
    stopOnSignals(async () => (await starting).stop(), config.shutdownTimeoutMs);
    await starting;
  } catch (error) {
    console.error(error instanceof ConfigError || error instanceof PortInUseError ? error.message : error);
    process.exit(1);
  }
}
