import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { recordSpanFailure } from '../lib/tracing.ts';
import { SIGNATURE_HEADER, type SignatureFailure, verifyWebhookSignature } from '../lib/webhook-signature.ts';
import { type NotificationIssue, parseCardNotification } from './card-event.ts';
import type { CardEventBus, PublishOutcome } from './card-event-bus.ts';
import {
  isNetworkTokenNotification,
  type NetworkTokenEvent,
  parseNetworkTokenNotification,
} from './network-token-event.ts';

/** Where the gateway mounts the receiver (specification "Events", setup step 1). */
export const CARD_EVENTS_WEBHOOK_PATH = '/webhooks/card-events';

/** Default limit of a notification body: 64 KiB. */
export const DEFAULT_MAX_WEBHOOK_BODY_BYTES = 64 * 1024;

/**
 * Options of {@link createWebhookReceiver}.
 * - `secrets`: accepted signing secrets (rotation, contract §4); at least one.
 * - `toleranceS`: maximum distance in seconds between the signature's `t` and `now`, either way.
 * - `maxBodyBytes`: larger bodies answer 413; default 64 KiB.
 * - `now`: the clock in ms since the epoch; `Date.now` by default (tests move it).
 * - `bus`: where card notifications (`au_card.*`) are published.
 * - `networkTokens`: where network token notifications (`network_token.*`) are published; without
 *   it they are parsed as card notifications and refused (400 `invalid-notification`).
 */
export interface WebhookReceiverOptions {
  secrets: readonly string[];
  toleranceS: number;
  logger: Logger;
  bus: CardEventBus;
  networkTokens?: NetworkTokenEventSink;
  maxBodyBytes?: number;
  now?: () => number;
  metrics?: Metrics;
  tracer?: Tracer;
}

/**
 * Destination of validated network token notifications (e.g. the NetworkTokenEventStream).
 * `publish` resolves `published`, or `duplicate` for an id already seen; a rejection answers 500.
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
  source?: { pointer: string };
}

const SIGNATURE_DETAILS: Record<SignatureFailure, string> = {
  'missing-signature': `The ${SIGNATURE_HEADER} header is missing`,
  'malformed-signature': `The ${SIGNATURE_HEADER} header is not of the form t=<unix seconds>,v0=<hex>`,
  'stale-timestamp': `The ${SIGNATURE_HEADER} timestamp is outside the accepted tolerance`,
  'bad-signature': `The ${SIGNATURE_HEADER} header does not match the body for any accepted secret`,
};

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(json);
}

function sendErrors(
  res: ServerResponse,
  status: number,
  errors: ErrorObject[],
  headers?: Record<string, string>,
): void {
  send(res, status, { errors }, headers);
}

type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

/**
 * Collects the raw request bytes up to `limit`. Past the limit the rest is discarded unread, so memory
 * stays bounded whatever the client sends.
 */
function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve({ ok: false, reason: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('aborted', onAbort);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        req.resume();
        resolve({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ ok: true, body: Buffer.concat(chunks, size) });
    };
    const onAbort = () => {
      cleanup();
      resolve({ ok: false, reason: 'aborted' });
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
  });
}

/** `application/json`, optionally with `charset=utf-8`; any other media type or charset is refused. */
function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [mediaType, ...params] = header.split(';');
  if (mediaType?.trim().toLowerCase() !== 'application/json') return false;
  for (const param of params) {
    const [name, value] = param.split('=').map((s) => s.trim().toLowerCase());
    if (name === 'charset' && value?.replaceAll('"', '') !== 'utf-8') return false;
  }
  return true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Receiver of card lifecycle and network token notifications (specification "Events"; contract §4;
 * gap decisions "Network token notifications") for
 * `POST /webhooks/card-events`. Steps, first failure answers (JSON:API error bodies, contract §3):
 * 1. method other than POST: 405 `method-not-allowed` (header `Allow: POST`);
 * 2. body over `maxBodyBytes`: 413 `payload-too-large`;
 * 3. `vgs-signature` checked on the raw bytes against every secret: 401 `missing-signature`,
 *    `malformed-signature`, `stale-timestamp` or `bad-signature`;
 * 4. content type other than `application/json` (charset utf-8 if given): 415 `unsupported-media-type`;
 * 5. body not UTF-8 JSON: 400 `malformed-json`;
 * 6. with `networkTokens` given, an `event` starting with `network_token.` is validated by
 *    parseNetworkTokenNotification, anything else by parseCardNotification; invalid: 400
 *    `invalid-notification`, one error per issue with `source.pointer`;
 * 7. publish to `networkTokens` or `bus`: 200 `{"data":{"id","status":"accepted"}}`, or
 *    `"duplicate"` for an id already seen there; a publishing failure answers 500 `server-error` so
 *    the sender retries.
 * Nothing is published on any failure. Outcomes are logged (info when accepted or duplicate, warn when
 * refused) with id, tenant, type and reason when known; never the body or a header value.
 * @throws RangeError when no secret is given or a limit is not positive.
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookHandler {
  const { secrets, toleranceS, logger, bus, networkTokens, metrics, tracer } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_WEBHOOK_BODY_BYTES;
  const now = options.now ?? Date.now;
  if (secrets.length === 0) throw new RangeError('at least one webhook secret is required');
  if (!(toleranceS > 0)) throw new RangeError('toleranceS must be positive');
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1) throw new RangeError('maxBodyBytes must be ≥ 1');

  const refuse = (
    res: ServerResponse,
    status: number,
    errors: ErrorObject[],
    log: { reason: string } & Record<string, unknown>,
    headers?: Record<string, string>,
  ) => {
    metrics?.webhookNotifications.inc({ outcome: 'rejected', reason: log.reason });
    logger.warn({ status, ...log }, 'card event notification refused');
    sendErrors(res, status, errors, headers);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      refuse(
        res,
        405,
        [{ status: '405', code: 'method-not-allowed', detail: 'Only POST is accepted here' }],
        { reason: 'method-not-allowed', method: req.method },
        { allow: 'POST' },
      );
      return;
    }

    const read = await readBody(req, maxBodyBytes);
    if (!read.ok) {
      if (read.reason === 'aborted') {
        metrics?.webhookNotifications.inc({ outcome: 'rejected', reason: 'aborted' });
        logger.warn({ reason: 'aborted' }, 'card event notification aborted by the sender');
        return;
      }
      refuse(
        res,
        413,
        [{ status: '413', code: 'payload-too-large', detail: `The body exceeds ${maxBodyBytes} bytes` }],
        { reason: 'payload-too-large' },
        // The unread rest of the body makes the connection unusable for another request.
        { connection: 'close' },
      );
      return;
    }

    const header = req.headers[SIGNATURE_HEADER];
    const verify = () =>
      verifyWebhookSignature(
        typeof header === 'string' ? header : undefined,
        read.body,
        secrets,
        toleranceS,
        Math.floor(now() / 1000),
      );
    const verdict = tracer
      ? tracer.startActiveSpan('webhook verify signature', (span) => {
          const result = verify();
          if (!result.ok) recordSpanFailure(span, result.reason);
          span.end();
          return result;
        })
      : verify();
    if (!verdict.ok) {
      refuse(res, 401, [{ status: '401', code: verdict.reason, detail: SIGNATURE_DETAILS[verdict.reason] }], {
        reason: verdict.reason,
      });
      return;
    }

    if (!isJsonContentType(req.headers['content-type'])) {
      refuse(
        res,
        415,
        [
          {
            status: '415',
            code: 'unsupported-media-type',
            detail: 'The body must be sent as application/json',
          },
        ],
        { reason: 'unsupported-media-type' },
      );
      return;
    }

    let json: unknown;
    try {
      json = JSON.parse(utf8.decode(read.body));
    } catch {
      // The SyntaxError's message quotes the body, so it is neither returned nor logged.
      refuse(
        res,
        400,
        [{ status: '400', code: 'malformed-json', detail: 'The body is not valid UTF-8 JSON' }],
        {
          reason: 'malformed-json',
        },
      );
      return;
    }

    if (networkTokens && isNetworkTokenNotification(json)) {
      await acceptParsed(res, json, parseNetworkTokenNotification(json), 'network token', (event) => ({
        fields: { panAlias: event.panAlias },
        publish: () => networkTokens.publish(event),
      }));
      return;
    }
    await acceptParsed(res, json, parseCardNotification(json), 'card event', (event) => ({
      fields: { cardId: event.cardId },
      publish: () => bus.publish(event),
    }));
  }

  /**
   * A parsed notification: refused (400) when invalid, else published and answered by
   * {@link publishAndAnswer} with its subject field (`cardId`, `panAlias`) in the log lines.
   */
  async function acceptParsed<E extends { id: string; tenant: string; type: string }>(
    res: ServerResponse,
    json: unknown,
    parsed: { ok: true; event: E } | { ok: false; issues: readonly NotificationIssue[] },
    subject: 'card event' | 'network token',
    route: (event: E) => { fields: Record<string, string>; publish: () => Promise<PublishOutcome> },
  ): Promise<void> {
    if (!parsed.ok) {
      refuseInvalid(res, json, parsed.issues);
      return;
    }
    const { event } = parsed;
    const { fields, publish } = route(event);
    await publishAndAnswer(
      res,
      subject,
      { id: event.id, tenant: event.tenant, type: event.type, ...fields },
      publish,
    );
  }

  /** 400 `invalid-notification`, one error per issue; logs the safe envelope members and the pointers. */
  function refuseInvalid(res: ServerResponse, json: unknown, issues: readonly NotificationIssue[]): void {
    refuse(
      res,
      400,
      issues.map((issue) => ({
        status: '400',
        code: 'invalid-notification',
        detail: issue.message,
        source: { pointer: issue.path },
      })),
      {
        reason: 'invalid-notification',
        ...knownEnvelope(json),
        paths: issues.map((issue) => issue.path),
      },
    );
  }

  /**
   * Publishes a validated notification and answers 200 `accepted`/`duplicate`, or 500 `server-error`
   * when `publish` rejects (so the sender retries). `subject` names the kind in log messages.
   */
  async function publishAndAnswer(
    res: ServerResponse,
    subject: 'card event' | 'network token',
    logFields: { id: string; tenant: string; type: string } & Record<string, string>,
    publish: () => Promise<PublishOutcome>,
  ): Promise<void> {
    let outcome: PublishOutcome;
    try {
      outcome = await publish();
    } catch (error) {
      metrics?.webhookNotifications.inc({ outcome: 'failed', reason: 'publish-failed' });
      logger.error(
        { ...logFields, reason: 'publish-failed', err: error },
        `${subject} could not be published`,
      );
      sendErrors(res, 500, [
        {
          status: '500',
          code: 'server-error',
          detail: 'The notification could not be processed; retry later',
        },
      ]);
      return;
    }
    const status = outcome === 'duplicate' ? 'duplicate' : 'accepted';
    metrics?.webhookNotifications.inc({ outcome: status, reason: 'none' });
    logger.info({ ...logFields, outcome: status }, `${subject} notification ${status}`);
    send(res, 200, { data: { id: logFields.id, status } });
  }

  return async function handleCardEventWebhook(req, res) {
    try {
      await handle(req, res);
    } catch (error) {
      logger.error({ reason: 'internal-error', err: error }, 'card event webhook failed');
      if (!res.headersSent) {
        sendErrors(res, 500, [{ status: '500', code: 'server-error', detail: 'Internal server error' }]);
      } else {
        res.destroy();
      }
    }
  };
}

/**
 * The envelope members of a refused notification that are safe to log (identifiers, no card data),
 * each only when it has the expected shape.
 */
function knownEnvelope(json: unknown): { id?: string; tenant?: string; type?: string } {
  if (json === null || typeof json !== 'object') return {};
  const { id, tenant, event } = json as Record<string, unknown>;
  return {
    ...(typeof id === 'string' && /^[0-9a-fA-F-]{36}$/.test(id) ? { id } : {}),
    ...(typeof tenant === 'string' && /^[A-Za-z0-9]{11}$/.test(tenant) ? { tenant } : {}),
    ...(typeof event === 'string' && /^(?:au_card|network_token)\.[a-z_]{1,25}$/.test(event)
      ? { type: event }
      : {}),
  };
}
