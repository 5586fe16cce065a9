import { z } from 'zod';
import { httpUrl, logLevel, type SettingsSection } from '../config/fields.ts';
import { type TracingConfig, tracingConfig, tracingSettings } from '../config/observability.ts';
import { parseSettings } from '../config/parse.ts';
import { type SandboxSettings, sandboxSettings, sandboxSettingsOf } from '../config/sandbox.ts';
import { generatedWebhookSecret } from '../config/webhooks.ts';

/**
 * The standalone sandbox's own settings (`npm run sandbox`, src/sandbox/main.ts): the sandbox
 * settings it shares with the gateway's embedded mode (src/config/sandbox.ts), its interface and log
 * level, the webhook endpoint it registers, and the `OTEL_*` variables the gateway reads too.
 */
export const standaloneSandboxSettings = {
  title: 'Standalone sandbox',
  about:
    '`npm run sandbox` reads the sandbox variables above, LOG_LEVEL and the OTEL_* variables (service.name cardgraph-sandbox), HOST (default 127.0.0.1 for the sandbox) and these:',
  shape: {
    SANDBOX_WEBHOOK_URL: httpUrl
      .optional()
      .describe('An endpoint the standalone sandbox registers for both vaults at start.'),
    SANDBOX_WEBHOOK_SECRET: z
      .string()
      .min(16)
      .optional()
      .describe('Its signing secret, at least 16 characters; generated when unset.'),
  },
} satisfies SettingsSection;

const standaloneSandboxEnv = z.object({
  ...sandboxSettings.shape,
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: logLevel,
  ...standaloneSandboxSettings.shape,
  ...tracingSettings.shape,
});

/** Settings of the standalone sandbox (`npm run sandbox`), see {@link loadSandboxConfig}. */
export interface SandboxConfig extends SandboxSettings {
  host: string;
  logLevel: string;
  /** Optional endpoint registered for both vaults at start: `SANDBOX_WEBHOOK_URL`. */
  webhookUrl?: string;
  /** Its signing secret: `SANDBOX_WEBHOOK_SECRET` (generated when unset). */
  webhookSecret: string;
  /** Server spans per request, joining the caller's `traceparent` (`OTEL_*`, as for the gateway). */
  tracing?: TracingConfig;
}

/**
 * Parses the standalone sandbox's configuration.
 * @param env variables to read; `process.env` by default. Empty values are unset.
 * @throws ConfigError naming each bad variable.
 */
export function loadSandboxConfig(env: Record<string, string | undefined> = process.env): SandboxConfig {
  const e = parseSettings(standaloneSandboxEnv, env);
  return {
    ...sandboxSettingsOf(e),
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    ...(e.SANDBOX_WEBHOOK_URL ? { webhookUrl: e.SANDBOX_WEBHOOK_URL } : {}),
    webhookSecret: e.SANDBOX_WEBHOOK_SECRET ?? generatedWebhookSecret(),
    ...tracingConfig(e, 'cardgraph-sandbox'),
  };
}
