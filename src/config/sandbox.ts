import { z } from 'zod';
import { SANDBOX_WIRES, type SandboxWire } from '../contracts/wire-reading.ts';
import { integer, port, type SettingsSection, vaultIdList } from './fields.ts';

/**
 * The sandbox settings the gateway's embedded mode (`UPSTREAM=embedded`, `npm start`) and the
 * standalone sandbox (`npm run sandbox`, src/sandbox/config.ts) share. They live here, not beside the
 * sandbox, because the gateway's configuration reads them and nothing outside src/sandbox and
 * src/dev.ts imports the sandbox.
 */
export const sandboxSettings = {
  title: 'Sandbox',
  about:
    'The provider sandbox `npm start` runs in-process (UPSTREAM=embedded) and `npm run sandbox` runs alone.',
  shape: {
    SANDBOX_PORT: port.default(4010).describe('Port of the sandbox; 0 picks a free port.'),
    SANDBOX_WEBHOOK_DELAY_MS: integer(0, 600_000, 1000).describe(
      'Delay before the sandbox completes an async enrolment and sends its notification (ms).',
    ),
    SANDBOX_WIRE: z
      .enum(SANDBOX_WIRES)
      .default('documented')
      .describe(
        "Wire reading the sandbox answers in: documented (the provider's documentation) or specification.",
      ),
    SANDBOX_DUPLICATE_CARD_CHECK: vaultIdList
      .optional()
      .describe(
        'Vaults whose card interface account has Duplicate Card Check on (POST /cards of a PAN already on file answers 303 with the existing card; documented wire only), comma-separated; none by default.',
      ),
  },
} satisfies SettingsSection;

/** The sandbox's settings shared by its embedded and standalone runs. */
export interface SandboxSettings {
  /** Port of the sandbox; 0 picks a free port. */
  port: number;
  /** Delay before the sandbox completes an async enrolment and sends its notification (ms). */
  webhookDelayMs: number;
  /** The wire reading the sandbox answers in: `SANDBOX_WIRE` (`documented` by default). */
  wire: SandboxWire;
  /** Vaults with the card interface's Duplicate Card Check on: `SANDBOX_DUPLICATE_CARD_CHECK` (none by default). */
  duplicateCardCheckVaults?: string[];
}

/** {@link SandboxSettings} from the parsed variables. */
export function sandboxSettingsOf(e: z.output<z.ZodObject<typeof sandboxSettings.shape>>): SandboxSettings {
  return {
    port: e.SANDBOX_PORT,
    webhookDelayMs: e.SANDBOX_WEBHOOK_DELAY_MS,
    wire: e.SANDBOX_WIRE,
    ...(e.SANDBOX_DUPLICATE_CARD_CHECK?.length
      ? { duplicateCardCheckVaults: e.SANDBOX_DUPLICATE_CARD_CHECK }
      : {}),
  };
}
