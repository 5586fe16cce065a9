import { createHash, randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { SandboxWire } from '../contracts/wire-reading.ts';
import type { Logger } from '../lib/logger.ts';
import { signWebhookBody } from '../lib/webhook-signature.ts';
import { isoUtc, isoUtcSeconds, randomBase62 } from './ids.ts';
import { SANDBOX_ORG_ID } from './oauth.ts';
import type { TimerSet } from './timers.ts';

/**
 * Webhook notifications of the sandbox: per-vault endpoint registry, the notification body of the
 * specification's field table (contract §4, docs/gap-decisions.md "Webhook notifications"), signing
 * with `vgs-signature`, and at-least-once delivery with retries.
 */

/** Default retry schedule of contract §4: delays in ms before attempts 1…5 (each after the previous failure). */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [0, 1000, 5000, 30_000, 120_000];
/** Time allowed for one delivery attempt to get its answer (contract §4: 10 s). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

/** A registered receiver. `secret` keys the HMAC of `vgs-signature`. */
export interface WebhookEndpoint {
  /** `whe_` + 22 Base62 characters. */
  id: string;
  /** Normalised absolute http(s) URL (`URL.href`). */
  url: string;
  secret: string;
  /** When it was registered, unix ms. */
  createdAtMs: number;
}

/** One delivery attempt of one notification to one endpoint. */
export interface DeliveryRecord {
  notificationId: string;
  endpointId: string;
  vault: string;
  event: string;
  /** 1-based attempt number. */
  attempt: number;
  /** HTTP status of the receiver's answer, when one came. */
  status?: number;
  /**
   * Transport failure (`TimeoutError`, `ECONNREFUSED`, …), when no answer came; `endpoint-removed` when
   * the endpoint was removed while this attempt was pending (it was never sent).
   */
  error?: string;
  /** When the attempt finished, ISO 8601 UTC. */
  at: string;
  /** `retrying` when a further attempt is scheduled; `delivered` / `failed` are final. */
  outcome: 'retrying' | 'delivered' | 'failed';
}

/** What a card notification reports. Expiry years may be two or four digits. */
export interface CardNotificationInput {
  vault: string;
  event: string;
  cardId: string;
  oldPan: string;
  newPan: string;
  oldExpMonth: number;
  oldExpYear: number;
  newExpMonth: number;
  newExpYear: number;
  /** When the enrolment was created, unix ms. */
  createdAtMs: number;
  /** When the event occurred (and the notification was produced), unix ms. */
  occurredAtMs: number;
}

/** The top-level notification envelope of contract §4. */
export interface NotificationEnvelope {
  id: string;
  event: string;
  timestamp: string;
  description: string;
  summary: string;
  /**
   * The details: a JSON string (card notifications, and every notification on the specification
   * wire) or a JSON object (network token notifications on the documented wire, §8).
   */
  details: string | Record<string, unknown>;
  fingerprint: string;
  grouping: 'every_single';
  integration_id: string;
  occurrence: 1;
  org_id: string;
  producer: { application_name: string; application_protocol: string };
  /** `cards`; `vault` for the documented network token notification (§8 example). */
  scope: 'cards' | 'vault';
  tenant: string;
}

/** The object encoded in `details`. */
export interface NotificationDetails {
  card_id: string;
  occurred_at: string;
  new_account_number: string;
  old_account_number: string;
  new_expiration_date: string;
  old_expiration_date: string;
  exp_month: number;
  exp_year: number;
  created_at: string;
}

/**
 * The `details` members of each v1 notification kind on the documented wire (sandbox contract §8,
 * the provider's per-event "Details" column); kinds the table does not list (`enrolled`, `opt_out`,
 * `unknown`, whose row is cut in the stored copy) carry the card id and occurrence time.
 */
export const DOCUMENTED_DETAILS_MEMBERS: Readonly<Record<string, readonly (keyof NotificationDetails)[]>> = {
  'au_card.updated': [
    'card_id',
    'old_account_number',
    'old_expiration_date',
    'new_expiration_date',
    'occurred_at',
  ],
  'au_card.expired': [
    'card_id',
    'old_account_number',
    'old_expiration_date',
    'new_expiration_date',
    'occurred_at',
  ],
  'au_card.closed': ['card_id', 'old_account_number', 'occurred_at'],
  'au_card.non_participating': ['card_id', 'occurred_at'],
  'au_card.contact_cardholder_advice': [
    'card_id',
    'old_account_number',
    'old_expiration_date',
    'occurred_at',
  ],
};

/** The documented details members of a kind the table does not list. */
const DEFAULT_DOCUMENTED_MEMBERS: readonly (keyof NotificationDetails)[] = ['card_id', 'occurred_at'];

/** `description` of every sandbox notification (31 characters). */
export const NOTIFICATION_DESCRIPTION = 'Card account updater event sent';

/** Masked number of the notification table: first six digits, `*` padding, last four; always 16 characters. */
export function maskPan16(pan: string): string {
  return `${pan.slice(0, 6)}******${pan.slice(-4)}`;
}

function fourDigitYear(year: number): number {
  return year < 100 ? 2000 + year : year;
}

/** `MMYY`, 4 characters. */
function expirationDate(month: number, year: number): string {
  return `${String(month).padStart(2, '0')}${String(fourDigitYear(year) % 100).padStart(2, '0')}`;
}

/** `integration_id`: 24 Base62 characters, fixed per vault (derived from the vault id). */
export function integrationIdOf(vault: string): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const digest = createHash('sha256').update(`integration:${vault}`).digest();
  let out = '';
  for (let i = 0; i < 24; i++) out += alphabet[digest[i]! % 62];
  return out;
}

/**
 * Builds a card notification in `wire`'s reading: `documented` (default) sends each kind's subset of
 * the details members ({@link DOCUMENTED_DETAILS_MEMBERS}, sandbox contract §8), `specification`
 * every member of the specification's table (contract §4). `details` is a JSON string either way.
 * @returns the envelope and its exact body bytes (UTF-8 JSON), which every retry re-sends unchanged.
 */
export function buildNotification(
  input: CardNotificationInput,
  wire: SandboxWire = 'documented',
): {
  envelope: NotificationEnvelope;
  body: string;
} {
  const all: NotificationDetails = {
    card_id: input.cardId,
    occurred_at: isoUtc(input.occurredAtMs),
    new_account_number: maskPan16(input.newPan),
    old_account_number: maskPan16(input.oldPan),
    new_expiration_date: expirationDate(input.newExpMonth, input.newExpYear),
    old_expiration_date: expirationDate(input.oldExpMonth, input.oldExpYear),
    exp_month: input.newExpMonth,
    exp_year: fourDigitYear(input.newExpYear),
    created_at: isoUtcSeconds(input.createdAtMs),
  };
  const details =
    wire === 'specification'
      ? all
      : Object.fromEntries(
          (DOCUMENTED_DETAILS_MEMBERS[input.event] ?? DEFAULT_DOCUMENTED_MEMBERS).map((member) => [
            member,
            all[member],
          ]),
        );
  return notificationOf({
    event: input.event,
    vault: input.vault,
    occurredAtMs: input.occurredAtMs,
    description: NOTIFICATION_DESCRIPTION,
    summary: `Card ${input.cardId} ${input.event}`,
    application: 'account-updater',
    details,
  });
}

/**
 * The envelope of contract §4 around `details` and its exact body bytes (UTF-8 JSON), which every
 * retry re-sends unchanged: a fresh UUID `id`, `timestamp` the occurrence time, `fingerprint` the
 * SHA-256 of event, details JSON and vault, and the sandbox's fixed members (`grouping`
 * `every_single`, `occurrence` 1, the vault's `integration_id`, the sandbox organization,
 * `producer.application_name` `application`, `scope` (`cards` unless given), `tenant` the vault).
 * `details` is sent as a JSON string unless `detailsAsObject` (the documented network token
 * notification, §8). Card and network token notifications alike.
 */
export function notificationOf(input: {
  event: string;
  vault: string;
  occurredAtMs: number;
  description: string;
  summary: string;
  application: 'account-updater' | 'network-tokens';
  details: object;
  detailsAsObject?: boolean;
  scope?: NotificationEnvelope['scope'];
}): { envelope: NotificationEnvelope; body: string } {
  const detailsJson = JSON.stringify(input.details);
  const envelope: NotificationEnvelope = {
    id: randomUUID(),
    event: input.event,
    timestamp: isoUtc(input.occurredAtMs),
    description: input.description,
    summary: input.summary,
    details: input.detailsAsObject ? { ...(input.details as Record<string, unknown>) } : detailsJson,
    fingerprint: createHash('sha256')
      .update(`${input.event}${detailsJson}${input.vault}`, 'utf8')
      .digest('hex'),
    grouping: 'every_single',
    integration_id: integrationIdOf(input.vault),
    occurrence: 1,
    org_id: SANDBOX_ORG_ID,
    producer: { application_name: input.application, application_protocol: 'https' },
    scope: input.scope ?? 'cards',
    tenant: input.vault,
  };
  return { envelope, body: JSON.stringify(envelope) };
}

/** Options of {@link WebhookDispatcher}. */
export interface WebhookDispatcherOptions {
  logger: Logger;
  timers: TimerSet;
  /** Delay in ms before each attempt; its length is the number of attempts. */
  retryScheduleMs?: readonly number[];
  /** Per-attempt deadline in ms. */
  deliveryTimeoutMs?: number;
  /** Clock in ms since the epoch for `createdAtMs`; `Date.now` by default. */
  now?: () => number;
  /** The wire reading notifications are built in (`SandboxOptions.wire`); `documented` when absent. */
  wire?: SandboxWire;
}

/** An attempt waiting for its timer, cancellable when its endpoint is removed. */
interface PendingAttempt {
  notificationId: string;
  event: string;
  attempt: number;
  cancel: () => void;
}

/** Delivery attempts {@link WebhookDispatcher.deliveries} keeps; the oldest are dropped beyond it. */
export const DELIVERY_LOG_CAPACITY = 10_000;

/**
 * Endpoint registry and delivery engine. Delivers each notification to every endpoint of its vault,
 * at least once, retrying on a non-2xx answer or a transport failure per the schedule, re-sending the
 * same body (same `id`) with a fresh signature timestamp on each attempt. Removing an endpoint ends
 * its deliveries (docs/gap-decisions.md, "Webhook endpoint registry").
 */
export class WebhookDispatcher {
  readonly #endpoints = new Map<string, WebhookEndpoint[]>();
  /** The last {@link DELIVERY_LOG_CAPACITY} attempts (up to twice that before a trim). */
  #records: DeliveryRecord[] = [];
  /** endpoint id → attempts scheduled but not started. */
  readonly #pending = new Map<string, Set<PendingAttempt>>();
  readonly #logger: Logger;
  readonly #timers: TimerSet;
  readonly #schedule: readonly number[];
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #wire: SandboxWire;
  readonly #stopping = new AbortController();

  /** @throws Error when the retry schedule is empty. */
  constructor(options: WebhookDispatcherOptions) {
    this.#logger = options.logger;
    this.#timers = options.timers;
    this.#schedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.#timeoutMs = options.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
    this.#now = options.now ?? Date.now;
    this.#wire = options.wire ?? 'documented';
    if (this.#schedule.length === 0) throw new Error('retryScheduleMs needs at least one attempt');
  }

  /**
   * Registers a receiver for a vault's notifications.
   * @throws Error when `url` is not an http(s) URL or `secret` is empty.
   */
  register(vault: string, endpoint: { url: string; secret: string }): { id: string } {
    const url = new URL(endpoint.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('webhook url must be http(s)');
    if (endpoint.secret.length === 0) throw new Error('webhook secret must not be empty');
    const registered: WebhookEndpoint = {
      id: `whe_${randomBase62(22)}`,
      url: url.href,
      secret: endpoint.secret,
      createdAtMs: this.#now(),
    };
    const list = this.#endpoints.get(vault) ?? [];
    list.push(registered);
    this.#endpoints.set(vault, list);
    return { id: registered.id };
  }

  /** The endpoints of a vault, in registration order (copies: callers cannot change the registry). */
  endpoints(vault: string): WebhookEndpoint[] {
    return (this.#endpoints.get(vault) ?? []).map((endpoint) => ({ ...endpoint }));
  }

  /**
   * Removes an endpoint of a vault. No attempt starts for it afterwards: each attempt that was waiting
   * for its timer is recorded once as `failed` with error `endpoint-removed`; an attempt already in
   * flight is recorded as `delivered` or `failed`, never `retrying`.
   * @returns false when the vault has no endpoint with this id.
   */
  remove(vault: string, endpointId: string): boolean {
    const list = this.#endpoints.get(vault) ?? [];
    const index = list.findIndex((endpoint) => endpoint.id === endpointId);
    if (index < 0) return false;
    list.splice(index, 1);
    const pending = this.#pending.get(endpointId) ?? new Set();
    this.#pending.delete(endpointId);
    for (const waiting of pending) {
      waiting.cancel();
      this.#record({
        notificationId: waiting.notificationId,
        endpointId,
        vault,
        event: waiting.event,
        attempt: waiting.attempt,
        error: 'endpoint-removed',
        at: new Date().toISOString(),
        outcome: 'failed',
      });
    }
    return true;
  }

  /**
   * The last {@link DELIVERY_LOG_CAPACITY} delivery attempts, oldest first (older ones are dropped so
   * the sandbox's memory stays bounded).
   * @param vault only this vault's attempts; every vault's when omitted.
   */
  deliveries(vault?: string): readonly DeliveryRecord[] {
    const records =
      this.#records.length > DELIVERY_LOG_CAPACITY
        ? this.#records.slice(-DELIVERY_LOG_CAPACITY)
        : this.#records;
    return vault === undefined ? records : records.filter((record) => record.vault === vault);
  }

  /**
   * Builds a notification in the dispatcher's wire reading ({@link buildNotification}) and starts
   * delivering it to every endpoint of `input.vault`.
   * @returns the notification id (UUID).
   */
  notify(input: CardNotificationInput): string {
    const { envelope, body } = buildNotification(input, this.#wire);
    const endpoints = this.#endpoints.get(input.vault) ?? [];
    this.#logger.info(
      {
        notificationId: envelope.id,
        event: envelope.event,
        vault: input.vault,
        cardId: input.cardId,
        endpoints: endpoints.length,
      },
      'webhook notification produced',
    );
    for (const endpoint of endpoints) this.#scheduleAttempt(envelope, body, input.vault, endpoint, 1);
    return envelope.id;
  }

  /**
   * Starts delivering an already built notification (same envelope, signing and retries as
   * {@link notify}) to every endpoint of `vault`; used for network token notifications
   * (`buildNetworkTokenNotification` in network-tokens.ts, gap decisions "Network tokens").
   * @param notification the envelope and the exact body bytes every attempt re-sends.
   * @returns the notification id (UUID).
   */
  deliver(vault: string, notification: { envelope: NotificationEnvelope; body: string }): string {
    const { envelope, body } = notification;
    const endpoints = this.#endpoints.get(vault) ?? [];
    this.#logger.info(
      { notificationId: envelope.id, event: envelope.event, vault, endpoints: endpoints.length },
      'webhook notification produced',
    );
    for (const endpoint of endpoints) this.#scheduleAttempt(envelope, body, vault, endpoint, 1);
    return envelope.id;
  }

  /** Aborts attempts in flight; pending retries are cancelled through the shared {@link TimerSet}. */
  stop(): void {
    this.#stopping.abort();
  }

  #scheduleAttempt(
    envelope: NotificationEnvelope,
    body: string,
    vault: string,
    endpoint: WebhookEndpoint,
    attempt: number,
  ): void {
    let pending = this.#pending.get(endpoint.id);
    if (!pending) {
      pending = new Set();
      this.#pending.set(endpoint.id, pending);
    }
    const waiting: PendingAttempt = {
      notificationId: envelope.id,
      event: envelope.event,
      attempt,
      cancel: () => {},
    };
    pending.add(waiting);
    waiting.cancel = this.#timers.schedule(this.#schedule[attempt - 1]!, () => {
      this.#pending.get(endpoint.id)?.delete(waiting);
      void this.#attempt(envelope, body, vault, endpoint, attempt);
    });
  }

  #isRegistered(vault: string, endpointId: string): boolean {
    return (this.#endpoints.get(vault) ?? []).some((endpoint) => endpoint.id === endpointId);
  }

  #record(record: DeliveryRecord): void {
    this.#records.push(record);
    if (this.#records.length >= 2 * DELIVERY_LOG_CAPACITY)
      this.#records = this.#records.slice(-DELIVERY_LOG_CAPACITY);
    const level = record.outcome === 'failed' ? 'warn' : 'info';
    this.#logger[level](record, `webhook delivery ${record.outcome}`);
  }

  async #attempt(
    envelope: NotificationEnvelope,
    body: string,
    vault: string,
    endpoint: WebhookEndpoint,
    attempt: number,
  ): Promise<void> {
    let status: number | undefined;
    let error: string | undefined;
    try {
      const signature = signWebhookBody(body, endpoint.secret, Math.floor(Date.now() / 1000));
      const response = await request(endpoint.url, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'vgs-signature': signature,
          'user-agent': 'cardgraph-sandbox',
        },
        signal: AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(this.#timeoutMs)]),
      });
      status = response.statusCode;
      await response.body.dump();
    } catch (caught) {
      const failure = caught as { code?: unknown; name?: unknown };
      error = typeof failure.code === 'string' ? failure.code : String(failure.name ?? 'Error');
    }
    if (this.#stopping.signal.aborted) return;
    const ok = status !== undefined && status >= 200 && status < 300;
    const retry = attempt < this.#schedule.length && this.#isRegistered(vault, endpoint.id);
    const outcome = ok ? 'delivered' : retry ? 'retrying' : 'failed';
    const record: DeliveryRecord = {
      notificationId: envelope.id,
      endpointId: endpoint.id,
      vault,
      event: envelope.event,
      attempt,
      ...(status !== undefined ? { status } : {}),
      ...(error !== undefined ? { error } : {}),
      at: new Date().toISOString(),
      outcome,
    };
    this.#record(record);
    if (outcome === 'retrying') this.#scheduleAttempt(envelope, body, vault, endpoint, attempt + 1);
  }
}
