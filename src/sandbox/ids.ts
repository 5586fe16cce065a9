import { randomInt } from 'node:crypto';

/**
 * Identifier and timestamp formats of the sandbox (docs/gap-decisions.md, "Identifiers and aliases"
 * and "Common").
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from the 62 Base62 characters (CSPRNG). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Card id of both card areas: `CRD` + 22 Base62 characters (25 characters, the notification `card_id` length). */
export function newCardId(): string {
  return `CRD${randomBase62(22)}`;
}

/** Card interface subscription id: `CUS` + 22 Base62 characters. */
export function newSubscriptionId(): string {
  return `CUS${randomBase62(22)}`;
}

/** ISO 8601 UTC with milliseconds, 24 characters: `2026-11-21T05:01:02.123Z`. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Card interface timestamp "without zone designator, fractional seconds": microseconds, no zone,
 * 26 characters, e.g. `2026-11-21T05:01:02.123000`.
 */
export function cardInterfaceTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000`;
}

/** Notification `created_at`: `YYYY-MM-DDTHH:mm:ssZ`, 20 characters. */
export function isoUtcSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
