import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { recordSpanFailure } from '../lib/tracing.ts';
import { readRequestBody, sendJson } from '../lib/transport-errors.ts';
import { SIGNATURE_HEADER, type SignatureFailure, verifyWebhookSignature } from '../lib/webhook-signature.ts';
import { cardEventOf } from './card-event.ts';
import type { CardEventBus, PublishOutcome } from './card-event-bus.ts';
import { type NetworkTokenEvent, networkTokenEventOf } from './network-token-event.ts';
import { readEnvelope } from './notification-envelope.ts';
import { type UnmappedNotificationSink, unmappedNotificationOf } from './unmapped-notification.ts';

/** Where the gateway mounts the receiver (specification "Events", setup step 1). */
export const CARD_EVENTS_WEBHOOK_PATH = '/webhooks/card-events';

/** Default limit of a notification body: 64 KiB. */
export const DEFAULT_MAX_WEBHOOK_BODY_BYTES = 64 * 1024;

/** `Retry-After` (seconds) of a 503 answered when a notification could not be stored. */
export const WEBHOOK_RETRY_AFTER_S = 5;

/**
 * Options of {@link WebhookReceiver}.
 * - `secrets`: accepted signing secrets (rotation, contract §4); at least one.
 * - `toleranceS`: maximum distance in seconds between the signature's `t` and `now`, either way.
 * - `maxBodyBytes`: larger bodies answer 413; default 64 KiB.
 * - `now`: the clock in ms since the epoch; `Date.now` by default (tests move it).
 * - `bus`: where card notifications (`au_card.*`, `cmp_au_card.*`) and notifications of an unknown
 *   kind are published.
 * - `networkTokens`: where network token notifications (`network_token.*`,
 *   `cmp_network_token.*`) are published.
 * - `unmapped`: where signed notifications that cannot be mapped to an event are stored.
 */
export interface WebhookReceiverOptions {
  secrets: readonly string[];
  toleranceS: number;
  logger: Logger;
  bus: CardEventBus;
  networkTokens: NetworkTokenEventSink;
  unmapped: UnmappedNotificationSink;
  maxBodyBytes?: number;
  now?: () => number;
  metrics?: Metrics;
  tracer?: Tracer;
}

/**
 * Destination of validated network token notifications (e.g. the NetworkTokenEventStream).
 * `publish` resolves `published`, or `duplicate` for an id already seen; a rejection answers 503.
 */
export interface NetworkTokenEventSink {
  publish(event: NetworkTokenEvent): Promise<PublishOutcome>;
}

/** A node:http request handler; it always answers and never rejects. */
export type WebhookHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

interface ErrorObject {
  status: string;
  code: string;
  detail: string;
}

const SIGNATURE_DETAILS: Record<SignatureFailure, string> = {
  'missing-signature': `The ${SIGNATURE_HEADER} header is missing`,
  'malformed-signature': `The ${SIGNATURE_HEADER} header is not of the form t=<unix seconds>,v0=<hex>`,
  'stale-timestamp': `The ${SIGNATURE_HEADER} timestamp is outside the accepted tolerance`,
  'bad-signature': `The ${SIGNATURE_HEADER} header does not match the body for any accepted secret`,
};

function sendErrors(
  res: ServerResponse,
  status: number,
  errors: ErrorObject[],
  headers?: Record<string, string>,
): void {
  sendJson(res, status, { errors }, headers);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The subject of a log line: which kind of notification it was routed as. */
type Subject = 'card event' | 'network token' | 'unmapped';

/**
 * Receiver of every notification of the provider (specification "Events"; contract §4 and §8; gap
 * decisions "Network token notifications"; issue 19 item 3) for `POST /webhooks/card-events`.
 * Only a bad or missing signature, a stale timestamp, an oversized body or a body that is not JSON
 * is refused: an authenticated notification is never refused for its shape. Steps, first failure
 * answers (JSON:API error bodies, contract §3):
 * 1. method other than POST: 405 `method-not-allowed` (header `Allow: POST`);
 * 2. body over `maxBodyBytes`: 413 `payload-too-large`;
 * 3. `vgs-signature` checked on the raw bytes against every secret: 401 `missing-signature`,
 *    `malformed-signature`, `stale-timestamp` or `bad-signature`;
 * 4. body not UTF-8 JSON: 400 `malformed-json` (whatever the declared media type);
 * 5. mapped tolerantly (src/events/notification-envelope.ts): an object with a notification `id` and
 *    a vault becomes a network token event (`network_token.*`, `cmp_network_token.*`) or a card
 *    event (`au_card.*`, `cmp_au_card.*`, and any unknown kind as type `other`), published to
 *    `networkTokens` or `bus`; anything else is stored redacted in `unmapped`;
 * 6. answer 200 `{"data":{"id","status"}}` with status `accepted`, `duplicate` (id already seen) or
 *    `unmapped` (stored for operators); when storing fails (event log full or down) 503
 *    `service-unavailable` with `Retry-After`, so the sender retries; never 500 for that.
 * Outcomes are counted (`cardgraph_webhook_notifications_total{outcome,reason}`: `accepted`,
 * `duplicate`, `unmapped`, `rejected`, `failed`) and logged (info when stored, warn when refused or
 * unmapped) with id, tenant, type and reason when known; never the body or a header value.
 */
export class WebhookReceiver {
  readonly #secrets: readonly string[];
  readonly #toleranceS: number;
  readonly #logger: Logger;
  /**
   * The child of `logger` that writes the `info` line of every stored notification: without pino's
   * structured redaction paths, which name keys (`pan`, `number`, `secret`…) this line never has
   * (it carries id, tenant, type and outcome only), so walking them per notification changed nothing
   * (issue 21 item 4). It keeps the logger's stream hook: the line still passes `redactLogLine`.
   */
  readonly #storedLogger: Logger;
  readonly #bus: CardEventBus;
  readonly #networkTokens: NetworkTokenEventSink;
  readonly #unmapped: UnmappedNotificationSink;
  readonly #maxBodyBytes: number;
  readonly #now: () => number;
  readonly #metrics: Metrics | undefined;
  readonly #tracer: Tracer | undefined;

  /** @throws RangeError when no secret is given or a limit is not positive. */
  constructor(options: WebhookReceiverOptions) {
    this.#secrets = options.secrets;
    this.#toleranceS = options.toleranceS;
    this.#logger = options.logger;
    this.#storedLogger = options.logger.child({}, { redact: { paths: [] } });
    this.#bus = options.bus;
    this.#networkTokens = options.networkTokens;
    this.#unmapped = options.unmapped;
    this.#maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_WEBHOOK_BODY_BYTES;
    this.#now = options.now ?? Date.now;
    this.#metrics = options.metrics;
    this.#tracer = options.tracer;
    if (this.#secrets.length === 0) throw new RangeError('at least one webhook secret is required');
    if (!(this.#toleranceS > 0)) throw new RangeError('toleranceS must be positive');
    if (!Number.isInteger(this.#maxBodyBytes) || this.#maxBodyBytes < 1)
      throw new RangeError('maxBodyBytes must be ≥ 1');
  }

  /**
   * The node:http request handler (bound, so it can be passed around): always answers, never
   * rejects; an unexpected failure answers 500 `server-error` (or destroys a started answer).
   */
  readonly handle: WebhookHandler = async (req, res) => {
    try {
      await this.#handle(req, res);
    } catch (error) {
      this.#logger.error({ reason: 'internal-error', err: error }, 'card event webhook failed');
      if (!res.headersSent) {
        sendErrors(res, 500, [{ status: '500', code: 'server-error', detail: 'Internal server error' }]);
      } else {
        res.destroy();
      }
    }
  };

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      this.#refuse(
        res,
        405,
        [{ status: '405', code: 'method-not-allowed', detail: 'Only POST is accepted here' }],
        { reason: 'method-not-allowed', method: req.method },
        { allow: 'POST' },
      );
      return;
    }
    const body = await this.#readVerifiedBody(req, res);
    if (body === undefined) return;

    let json: unknown;
    try {
      json = JSON.parse(utf8.decode(body));
    } catch {
      // The SyntaxError's message quotes the body, so it is neither returned nor logged.
      this.#refuse(
        res,
        400,
        [{ status: '400', code: 'malformed-json', detail: 'The body is not valid UTF-8 JSON' }],
        { reason: 'malformed-json' },
      );
      return;
    }
    await this.#route(res, body, json);
  }

  /**
   * The raw body once its size and signature are checked; undefined when the request was answered
   * (413, 401) or aborted.
   */
  async #readVerifiedBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
    const read = await readRequestBody(req, this.#maxBodyBytes);
    if (!read.ok) {
      if (read.reason === 'aborted') {
        this.#metrics?.webhookNotifications.inc({ outcome: 'rejected', reason: 'aborted' });
        this.#logger.warn({ reason: 'aborted' }, 'card event notification aborted by the sender');
        return undefined;
      }
      this.#refuse(
        res,
        413,
        [
          {
            status: '413',
            code: 'payload-too-large',
            detail: `The body exceeds ${this.#maxBodyBytes} bytes`,
          },
        ],
        { reason: 'payload-too-large' },
        // The unread rest of the body makes the connection unusable for another request.
        { connection: 'close' },
      );
      return undefined;
    }
    const header = req.headers[SIGNATURE_HEADER];
    const verify = () =>
      verifyWebhookSignature(
        typeof header === 'string' ? header : undefined,
        read.body,
        this.#secrets,
        this.#toleranceS,
        Math.floor(this.#now() / 1000),
      );
    const verdict = this.#tracer
      ? this.#tracer.startActiveSpan('webhook verify signature', (span) => {
          const result = verify();
          if (!result.ok) recordSpanFailure(span, result.reason);
          span.end();
          return result;
        })
      : verify();
    if (!verdict.ok) {
      this.#refuse(
        res,
        401,
        [{ status: '401', code: verdict.reason, detail: SIGNATURE_DETAILS[verdict.reason] }],
        { reason: verdict.reason },
      );
      return undefined;
    }
    return read.body;
  }

  /** Maps a verified notification and stores it where it belongs (see the class steps 5-6). */
  async #route(res: ServerResponse, raw: Buffer, json: unknown): Promise<void> {
    const receivedAt = new Date(this.#now()).toISOString();
    const read = readEnvelope(json);
    if (!read.ok) {
      const entry = unmappedNotificationOf(raw, json, read, receivedAt);
      await this.#store(
        res,
        'unmapped',
        { id: entry.id, tenant: entry.tenant, type: entry.event ?? 'none', reason: entry.reason },
        () => this.#unmapped.record(entry),
      );
      return;
    }
    const { envelope } = read;
    if (envelope.event.family === 'network_token') {
      const event: NetworkTokenEvent = networkTokenEventOf(envelope, receivedAt);
      await this.#store(
        res,
        'network token',
        { id: event.id, tenant: event.tenant, type: event.event ?? event.type, reason: 'none' },
        () => this.#networkTokens.publish(event),
      );
      return;
    }
    const event = cardEventOf(envelope, receivedAt);
    await this.#store(
      res,
      'card event',
      { id: event.id, tenant: event.tenant, type: event.event ?? event.type, reason: 'none' },
      () => this.#bus.publish(event),
    );
  }

  /**
   * Stores a notification through `store` and answers 200 with its status (`accepted`, `duplicate`,
   * or `unmapped` for a first unmapped one), or 503 `service-unavailable` with `Retry-After` when
   * `store` rejects (so the sender retries).
   */
  async #store(
    res: ServerResponse,
    subject: Subject,
    fields: { id: string; tenant: string; type: string; reason: string },
    store: () => Promise<PublishOutcome>,
  ): Promise<void> {
    const logFields = { id: fields.id, tenant: fields.tenant, type: fields.type };
    let outcome: PublishOutcome;
    try {
      outcome = await store();
    } catch (error) {
      this.#metrics?.webhookNotifications.inc({ outcome: 'failed', reason: 'store-failed' });
      this.#logger.error(
        { ...logFields, reason: 'store-failed', err: (error as Error).message },
        `${subject} notification could not be stored`,
      );
      sendErrors(
        res,
        503,
        [
          {
            status: '503',
            code: 'service-unavailable',
            detail: 'The notification could not be stored; retry later',
          },
        ],
        { 'retry-after': String(WEBHOOK_RETRY_AFTER_S) },
      );
      return;
    }
    const status = outcome === 'duplicate' ? 'duplicate' : subject === 'unmapped' ? 'unmapped' : 'accepted';
    this.#metrics?.webhookNotifications.inc({ outcome: status, reason: fields.reason });
    if (subject === 'unmapped') {
      this.#logger.warn(
        { ...logFields, outcome: status, reason: fields.reason },
        'notification could not be mapped; stored for operators',
      );
    } else if (this.#storedLogger.isLevelEnabled('info')) {
      this.#storedLogger.info(
        { id: fields.id, tenant: fields.tenant, type: fields.type, outcome: status },
        `${subject} notification ${status}`,
      );
    }
    sendJson(res, 200, { data: { id: fields.id, status } });
  }

  #refuse(
    res: ServerResponse,
    status: number,
    errors: ErrorObject[],
    log: { reason: string } & Record<string, unknown>,
    headers?: Record<string, string>,
  ): void {
    this.#metrics?.webhookNotifications.inc({ outcome: 'rejected', reason: log.reason });
    this.#logger.warn({ status, ...log }, 'card event notification refused');
    sendErrors(res, status, errors, headers);
  }
}

/**
 * The handler of a new {@link WebhookReceiver} (its bound `handle`).
 * @throws RangeError when no secret is given or a limit is not positive.
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookHandler {
  return new WebhookReceiver(options).handle;
}
