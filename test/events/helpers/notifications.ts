import { createHash, randomUUID } from 'node:crypto';

/** `details` members of a notification before JSON encoding (contract §4, gap decisions). */
export interface NotificationDetails {
  card_id?: unknown;
  occurred_at?: unknown;
  new_account_number?: unknown;
  old_account_number?: unknown;
  new_expiration_date?: unknown;
  old_expiration_date?: unknown;
  exp_month?: unknown;
  exp_year?: unknown;
  created_at?: unknown;
  [member: string]: unknown;
}

/** Options of {@link buildNotification}; every member can be overridden or removed (`undefined`). */
export interface NotificationOverrides {
  tenant?: string;
  event?: string;
  cardId?: string;
  details?: Partial<NotificationDetails>;
  /** Replaces the encoded details string entirely. */
  rawDetails?: string;
  envelope?: Record<string, unknown>;
}

export const TEST_CARD_ID = 'CRDabcdefghijklmnopqrstuv'; // 25 characters
export const INTEGRATION_IDS: Record<string, string> = {
  tntsandbox1: 'Integ1abcdefghijklmnopqr',
  tntsandbox2: 'Integ2abcdefghijklmnopqr',
};

/**
 * A valid notification body as the sandbox sends it, every length exactly per the specification's
 * "Notification body fields" table; `fingerprint` is SHA-256 hex of event + details + tenant.
 */
export function buildNotification(overrides: NotificationOverrides = {}): Record<string, unknown> {
  const tenant = overrides.tenant ?? 'tntsandbox1';
  const event = overrides.event ?? 'au_card.updated';
  const cardId = overrides.cardId ?? TEST_CARD_ID;
  const detailsObject: Record<string, unknown> = {
    card_id: cardId,
    occurred_at: '2026-11-21T05:01:02.123Z',
    new_account_number: '510026******1001',
    old_account_number: '510026******2002',
    new_expiration_date: '1229',
    old_expiration_date: '0126',
    exp_month: 12,
    exp_year: 2029,
    created_at: '2026-11-21T05:01:02Z',
  };
  for (const [key, value] of Object.entries(overrides.details ?? {})) {
    if (value === undefined) delete detailsObject[key];
    else detailsObject[key] = value;
  }
  const details = overrides.rawDetails ?? JSON.stringify(detailsObject);
  const body: Record<string, unknown> = {
    id: randomUUID(),
    event,
    timestamp: '2026-11-21T05:01:03.456Z',
    description: 'Card account updater event sent',
    summary: `Card ${cardId} ${event}`,
    details,
    fingerprint: createHash('sha256').update(`${event}${details}${tenant}`, 'utf8').digest('hex'),
    grouping: 'every_single',
    integration_id: INTEGRATION_IDS[tenant] ?? 'IntegXabcdefghijklmnopqr',
    occurrence: 1,
    org_id: 'ACsandbox000000000000001',
    producer: { application_name: 'account-updater', application_protocol: 'https' },
    scope: 'cards',
    tenant,
  };
  for (const [key, value] of Object.entries(overrides.envelope ?? {})) {
    if (value === undefined) delete body[key];
    else body[key] = value;
  }
  return body;
}
