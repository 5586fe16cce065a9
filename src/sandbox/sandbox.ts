import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Tracer } from '@opentelemetry/api';
import { SANDBOX_WIRES, type SandboxWire } from '../contracts/wire-reading.ts';
import type { Logger } from '../lib/logger.ts';
import { routeTemplate } from '../lib/metrics.ts';
import { SpanKind } from '../lib/otel-api.ts';
import { listenError } from '../lib/port-in-use.ts';
import { extractTraceContext } from '../lib/tracing.ts';
import {
  ACCOUNT_UPDATER_PREFIX,
  AccountUpdaterStore,
  registerAccountUpdaterRoutes,
} from './account-updater.ts';
import { registerCardAttributeRoutes } from './card-attributes.ts';
import {
  CARD_INTERFACE_PREFIX,
  CardInterfaceStore,
  DEFAULT_HANG_MS,
  registerCardInterfaceRoutes,
} from './card-interface.ts';
import { HttpError, httpError, JSON_API_MEDIA_TYPE, JSON_MEDIA_TYPE, Router, sendError } from './http.ts';
import { registerNetworkTokenRoutes } from './network-tokens.ts';
import { registerOAuthRoutes, TokenStore } from './oauth.ts';
import { registerOpenApiRoute } from './openapi.ts';
import { registerOrganizationMemberRoutes } from './organization-members.ts';
import { captureResponse, type ResponseViolation, responseValidatorFor } from './response-validation.ts';
import { TimerSet } from './timers.ts';
import { AliasVault } from './vault.ts';
import { registerWebhookEndpointRoutes } from './webhook-endpoints.ts';
import { type DeliveryRecord, WebhookDispatcher } from './webhooks.ts';

export type { ResponseViolation } from './response-validation.ts';
export type { DeliveryRecord } from './webhooks.ts';
export { SANDBOX_WIRES, type SandboxWire };

/** Options of {@link createSandbox}. Durations in ms. */
export interface SandboxOptions {
  /** Port to listen on; 0 picks a free one (see the `url` returned by `start`). */
  port: number;
  /** Interface to bind; `127.0.0.1` by default. */
  host?: string;
  logger: Logger;
  /** Delay before an async enrolment completes and its notification is sent (`SANDBOX_WEBHOOK_DELAY_MS`). */
  webhookDelayMs: number;
  /** Delay before each delivery attempt; default `[0, 1000, 5000, 30000, 120000]` (contract §4). */
  retryScheduleMs?: number[];
  /** Per-attempt delivery deadline; default 10 000. */
  deliveryTimeoutMs?: number;
  /** How long card 4998 leaves `POST /cards` unanswered; default 120 000. */
  hangMs?: number;
  /**
   * Milliseconds every card attributes lookup waits before it answers (a slow BIN lookup); 0 by
   * default. Tests of `@defer` use it to show a first part that does not wait for the lookup.
   */
  cardAttributesDelayMs?: number;
  /** Clock in ms since the epoch (token expiry, timestamps); `Date.now` by default. Tests move it. */
  now?: () => number;
  /**
   * Checks every answer against the OpenAPI document (`openapi.ts`) and records the violations
   * (`responseViolations()`); off by default. Tests turn it on.
   */
  validateResponses?: boolean;
  /**
   * When given, every request gets a server span (`sandbox <METHOD> <route template>`), child of the
   * W3C `traceparent` the caller sent, so one trace spans gateway and upstream in embedded mode.
   */
  tracer?: Tracer;
  /**
   * Which reading of the wire the sandbox answers in (`SANDBOX_WIRE`): `documented` (default) answers
   * in the statuses, envelopes, member types and notification shapes the provider's own documentation
   * shows (sandbox contract §8, `../shared/provider-docs/examples.json`); `specification` answers in the
   * interface specification's readings where the two differ (docs/gap-decisions.md), so the gateway's
   * tolerant reader is tested against both.
   */
  wire?: SandboxWire;
  /**
   * Vaults whose account has the card interface's Duplicate Card Check on (sandbox contract §8:
   * `POST /cards` of a PAN already on file answers 303 with the existing card;
   * `SANDBOX_DUPLICATE_CARD_CHECK`). None by default; read in the documented wire only, the
   * specification's reading has no duplicate detection (docs/gap-decisions.md "Card interface").
   */
  duplicateCardCheckVaults?: readonly string[];
}

/** One answered request of the sandbox's request log. `path` has no query string. */
export interface SandboxRequestRecord {
  method: string;
  path: string;
  status: number;
  /** The vault of the bearer token, when one was accepted. */
  vault?: string;
}

/** A running (or startable) embedded sandbox of the upstream provider. */
export interface Sandbox {
  /**
   * Starts listening.
   * @returns the base address, e.g. `http://127.0.0.1:43121` (the real port when 0 was asked).
   * @throws PortInUseError naming SANDBOX_PORT when the port is taken; the listen error otherwise.
   */
  start(): Promise<{ url: string }>;
  /** Stops: cancels pending enrolments, retries and hangs, closes every connection. Idempotent. */
  stop(): Promise<void>;
  /**
   * Registers a webhook receiver for a vault's notifications.
   * @throws Error when the URL is not http(s) or the secret is empty.
   */
  registerWebhookEndpoint(vault: string, endpoint: { url: string; secret: string }): { id: string };
  /** Every delivery attempt so far, oldest first. */
  deliveries(): readonly DeliveryRecord[];
  /**
   * The last {@link REQUEST_LOG_CAPACITY} answered requests, oldest first (for N+1 assertions); older
   * ones are dropped so a long-running sandbox keeps bounded memory.
   */
  requests(): readonly SandboxRequestRecord[];
  /** How many requests were answered since start (never drops; the bench's upstream call counter). */
  requestCount(): number;
  /** Answers the OpenAPI document does not allow, oldest first; always empty without `validateResponses`. */
  responseViolations(): readonly ResponseViolation[];
}

/** Answered requests {@link Sandbox.requests} keeps; the oldest are dropped beyond it. */
export const REQUEST_LOG_CAPACITY = 10_000;

/** Media type of errors by area (contract §3, gap decisions "Common"). */
function mediaTypeOfPath(path: string): string {
  return path.startsWith(`${CARD_INTERFACE_PREFIX}/`) || path.startsWith('/accounts/')
    ? JSON_API_MEDIA_TYPE
    : JSON_MEDIA_TYPE;
}

/**
 * Creates the embedded sandbox (contract §1): one `node:http` server with the OAuth token endpoint,
 * the card interface under `/card-interface`, account updater v1 and network tokens under
 * `/account-updater`, card attributes under `/card-attributes`, organization members under
 * `/accounts`, webhook delivery with its registry API under `/sandbox/` (webhook-endpoints.ts), and
 * its OpenAPI document at `GET /openapi.json`.
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const logger = options.logger;
  const now = options.now ?? Date.now;
  const wire: SandboxWire = options.wire ?? 'documented';
  const timers = new TimerSet();
  const tokens = new TokenStore(now);
  const aliases = new AliasVault();
  let requestLog: SandboxRequestRecord[] = [];
  let requestCount = 0;
  const violations: ResponseViolation[] = [];
  const responseValidator = options.validateResponses ? responseValidatorFor() : undefined;
  const dispatcher = new WebhookDispatcher({
    logger,
    timers,
    now,
    wire,
    ...(options.retryScheduleMs ? { retryScheduleMs: options.retryScheduleMs } : {}),
    ...(options.deliveryTimeoutMs !== undefined ? { deliveryTimeoutMs: options.deliveryTimeoutMs } : {}),
  });
  const cardInterfaceStore = new CardInterfaceStore();
  const accountUpdaterStore = new AccountUpdaterStore();

  const router = new Router((token) => tokens.resolve(token));
  registerOAuthRoutes(router, tokens);
  registerCardInterfaceRoutes(router, {
    store: cardInterfaceStore,
    aliases,
    timers,
    now,
    hangMs: options.hangMs ?? DEFAULT_HANG_MS,
    wire,
    webhookDelayMs: options.webhookDelayMs,
    deliver: (vault, notification) => dispatcher.deliver(vault, notification),
    ...(options.duplicateCardCheckVaults
      ? { duplicateCardCheckVaults: options.duplicateCardCheckVaults }
      : {}),
  });
  registerAccountUpdaterRoutes(router, {
    store: accountUpdaterStore,
    aliases,
    timers,
    now,
    logger,
    webhookDelayMs: options.webhookDelayMs,
    notify: (input) => dispatcher.notify(input),
    isSubscribedElsewhere: (vault, pan) => cardInterfaceStore.hasSubscribedPan(vault, pan),
    wire,
  });
  registerNetworkTokenRoutes(router, {
    aliases,
    timers,
    now,
    logger,
    webhookDelayMs: options.webhookDelayMs,
    deliver: (vault, notification) => dispatcher.deliver(vault, notification),
    wire,
  });
  registerCardAttributeRoutes(router, {
    aliases,
    wire,
    ...(options.cardAttributesDelayMs ? { delay: { ms: options.cardAttributesDelayMs, timers } } : {}),
  });
  registerOrganizationMemberRoutes(router, undefined, wire);
  registerWebhookEndpointRoutes(router, { dispatcher, resolveToken: (token) => tokens.resolve(token) });
  registerOpenApiRoute(router);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = performance.now();
    const method = req.method ?? 'GET';
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
    if (options.tracer) {
      const span = options.tracer.startSpan(
        `sandbox ${method} ${routeTemplate(path)}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': method, 'http.route': routeTemplate(path) },
        },
        extractTraceContext(req.headers),
      );
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        span.end();
      });
    }
    const log: { vault?: string } = {};
    const sent = responseValidator ? captureResponse(res) : undefined;
    res.on('finish', () => {
      const record: SandboxRequestRecord = {
        method,
        path,
        status: res.statusCode,
        ...(log.vault ? { vault: log.vault } : {}),
      };
      requestCount++;
      requestLog.push(record);
      // Drop the oldest half at twice the capacity: amortised O(1), at most 2x capacity held.
      if (requestLog.length >= 2 * REQUEST_LOG_CAPACITY) requestLog = requestLog.slice(-REQUEST_LOG_CAPACITY);
      logger.debug(
        { ...record, durationMs: Math.round((performance.now() - startedAt) * 10) / 10 },
        'request',
      );
      if (responseValidator && sent) {
        const problems = responseValidator.check({
          method,
          path,
          status: res.statusCode,
          headers: sent.headers(),
          body: sent.body(),
        });
        for (const problem of problems) {
          const violation: ResponseViolation = { method, path, status: res.statusCode, problem };
          violations.push(violation);
          logger.warn(violation, 'sandbox answer violates its OpenAPI document');
        }
      }
    });
    const mediaType = mediaTypeOfPath(path);
    try {
      const match = router.match(method, path);
      if (match.kind === 'not-found') throw httpError(404, 'not-found', 'no such resource');
      if (match.kind === 'method-not-allowed') {
        throw httpError(405, 'method-not-allowed', `method ${method} is not allowed here`, {
          headers: { allow: match.allowed.join(', ') },
        });
      }
      await match.run({ req, res, params: match.params, path, log });
    } catch (error) {
      if (error instanceof HttpError) {
        sendError(res, error, mediaType);
        return;
      }
      logger.error({ method, path, errorName: (error as Error)?.name }, 'unhandled sandbox error');
      sendError(res, httpError(500, 'server-error', 'internal server error'), mediaType);
    }
  }

  let server: Server | undefined;
  let stopped: Promise<void> | undefined;

  return {
    async start() {
      if (server) throw new Error('sandbox already started');
      const host = options.host ?? '127.0.0.1';
      const listening = createServer((req, res) => {
        void handle(req, res);
      });
      server = listening;
      await new Promise<void>((resolve, reject) => {
        // The sandbox's port is SANDBOX_PORT wherever it runs (npm start and npm run sandbox alike).
        const failed = (error: Error) => reject(listenError(error, 'SANDBOX_PORT', options.port, host));
        listening.once('error', failed);
        listening.listen(options.port, host, () => {
          listening.off('error', failed);
          resolve();
        });
      });
      const { port } = listening.address() as AddressInfo;
      const reachableHost =
        host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
      const url = `http://${reachableHost}:${port}`;
      logger.info({ url }, 'sandbox listening');
      return { url };
    },

    stop() {
      if (stopped) return stopped;
      timers.cancelAll();
      dispatcher.stop();
      const running = server;
      stopped = new Promise<void>((resolve) => {
        if (!running?.listening) {
          resolve();
          return;
        }
        running.close(() => resolve());
        // Connections held by a hanging 4998 answer or keep-alive sockets would keep close() waiting.
        running.closeAllConnections();
      });
      return stopped;
    },

    registerWebhookEndpoint(vault, endpoint) {
      return dispatcher.register(vault, endpoint);
    },

    deliveries() {
      return dispatcher.deliveries();
    },

    requests() {
      return requestLog.length > REQUEST_LOG_CAPACITY ? requestLog.slice(-REQUEST_LOG_CAPACITY) : requestLog;
    },

    requestCount() {
      return requestCount;
    },

    responseViolations() {
      return violations;
    },
  };
}

export { ACCOUNT_UPDATER_PREFIX, CARD_INTERFACE_PREFIX };
