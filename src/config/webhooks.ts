import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { commaList, integer, type SettingsSection } from './fields.ts';

/** The card event webhook receiver's signature checks. */
export const webhooksSettings = {
  title: 'Webhooks',
  about: '',
  shape: {
    WEBHOOK_SECRETS: commaList
      .pipe(z.array(z.string().min(16, 'each secret needs at least 16 characters')).min(1))
      .optional()
      .describe(
        'Accepted webhook signing secrets, comma-separated, newest first (rotation). In embedded mode the sandbox signs with the first; one is generated at start when unset. Required when UPSTREAM=remote.',
      ),
    WEBHOOK_TOLERANCE_S: integer(1, 3600, 300).describe(
      'Maximum age (either direction) of a webhook signature timestamp (s).',
    ),
    WEBHOOK_MAX_FUTURE_SKEW_S: integer(0, 86_400, 300).describe(
      "How far after its receipt a notification's own time may be (s); a later one, or one that is no real date, is kept as sent and flagged (timestampFlag), ordered by its receipt, and never marks another event out of order.",
    ),
  },
} satisfies SettingsSection;

/** The webhook receiver's settings. */
export interface WebhooksConfig {
  /** Accepted signing secrets, newest first; in embedded mode the sandbox signs with the first. */
  secrets: string[];
  /** Maximum age (either direction) of the signature timestamp `t`, in seconds. */
  toleranceS: number;
  /**
   * How far after its receipt a notification's own time may be, in seconds
   * (`WEBHOOK_MAX_FUTURE_SKEW_S`); a later one, or one that is no real date, is kept as sent and
   * flagged (`timestampFlag`), ordered by its receipt and never marks another event out of order.
   */
  maxFutureSkewS: number;
}

/** A signing secret for a process that was given none. */
export function generatedWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

/** {@link WebhooksConfig} from the parsed variables; a generated secret when none is set. */
export function webhooksConfig(e: z.output<z.ZodObject<typeof webhooksSettings.shape>>): WebhooksConfig {
  return {
    secrets: e.WEBHOOK_SECRETS ?? [generatedWebhookSecret()],
    toleranceS: e.WEBHOOK_TOLERANCE_S,
    maxFutureSkewS: e.WEBHOOK_MAX_FUTURE_SKEW_S,
  };
}

/** Remote mode needs the secrets the provider signs with. */
export function refineWebhooks(
  env: z.output<z.ZodObject<typeof webhooksSettings.shape>> & { UPSTREAM?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (env.UPSTREAM === 'remote' && env.WEBHOOK_SECRETS === undefined) {
    ctx.addIssue({ code: 'custom', path: ['WEBHOOK_SECRETS'], message: 'required when UPSTREAM=remote' });
  }
}
