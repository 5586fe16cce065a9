import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { redactPans } from './pan.ts';

/**
 * Prometheus metrics of one gateway (prom-client, text exposition format 0.0.4). Every label value
 * is taken from a bounded set: operation names are the trusted ones only (the example operations and
 * the trusted-documents manifest; every other name is `other`, so anonymous clients can neither fill
 * the label set nor choose a label value, issue 20 item 5), upstream operations are route templates
 * (`GET /cards/{id}`), error codes are capped at {@link MAX_ERROR_CODES}. No label ever holds a card
 * id, PAN, alias, vault-supplied free text or request id, nor any value the PAN masker would change;
 * vault ids only when the operator opts in (`METRICS_VAULT_LABELS=on`), else `all`.
 */
export interface Metrics {
  /** The registry `GET /metrics` serialises (one per app, so tests can run several apps). */
  readonly registry: Registry;
  /** `cardgraph_graphql_operations_total{operation,type,outcome}`; outcome `success`|`error`. */
  readonly operations: Counter<'operation' | 'type' | 'outcome'>;
  /** `cardgraph_graphql_operation_duration_seconds{operation,type,outcome}` (parse to result). */
  readonly operationDuration: Histogram<'operation' | 'type' | 'outcome'>;
  /** `cardgraph_graphql_errors_total{operation,code}`, one per error of a result. */
  readonly graphqlErrors: Counter<'operation' | 'code'>;
  /** `cardgraph_upstream_request_duration_seconds{area,operation,status}`; status is the HTTP status or a transport code. */
  readonly upstreamDuration: Histogram<'area' | 'operation' | 'status'>;
  /**
   * `cardgraph_upstream_token_fetches_total{vault,outcome}` (OAuth client credentials grants sent);
   * `vault` is the vault id with `METRICS_VAULT_LABELS=on`, else `all` whatever the caller passes.
   */
  readonly tokenFetches: Counter<'vault' | 'outcome'>;
  /**
   * `cardgraph_webhook_notifications_total{outcome,reason}`; outcome `accepted`|`duplicate`|`unmapped`
   * (signed but not mappable, stored for operators; reason `no-tenant`, `not-an-object`, `no-id`)|
   * `rejected`|`failed` (reason `store-failed`: answered 503).
   */
  readonly webhookNotifications: Counter<'outcome' | 'reason'>;
  /** `cardgraph_event_log_append_duration_seconds{backend,outcome}`; outcome `appended`|`duplicate`|`failed`. */
  readonly eventLogAppend: Histogram<'backend' | 'outcome'>;
  /**
   * `cardgraph_event_log_append_failing{log}`: 1 while the latest append to that log (`card_events`,
   * `network_token_events`) failed (readiness fails with it, issue 20 item 1), else 0.
   */
  readonly eventLogAppendFailing: Gauge<'log'>;
  /** `cardgraph_graphql_live_subscriptions{transport}`; transport `graphql-ws`|`sse`. */
  readonly liveSubscriptions: Gauge<'transport'>;
  /** `cardgraph_event_delivery_lag_seconds`: webhook receipt (or log append on another replica) to subscriber send. */
  readonly deliveryLag: Histogram<never>;
  /**
   * `cardgraph_jit_fallbacks_total{operation}`: queries whose compiled (graphql-jit) run answered
   * with an error and ran again on graphql-js, within the same upstream call budget.
   */
  readonly jitFallbacks: Counter<'operation'>;
  /** The bounded label value of a GraphQL operation name (see {@link OperationNameLabels}). */
  operationLabel(name: string | null | undefined): string;
  /** The bounded label value of an error code. */
  errorCodeLabel(code: unknown): string;
}

/** The `vault` label value when vault ids are not labels (`METRICS_VAULT_LABELS` off). */
export const ALL_VAULTS_LABEL = 'all';
/** Distinct error codes before new ones count as `other`. */
export const MAX_ERROR_CODES = 200;

/** GraphQL `Name` of at most 64 characters. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Error codes are kebab/snake/upper-case words of at most 64 characters. */
const CODE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/**
 * Keeps label values bounded: a value passes when it is known, or while fewer than `cap` values have
 * been learned; anything else, anything malformed and anything that looks like card data is `other`.
 */
export class BoundedLabelSet {
  readonly #known: Set<string>;
  readonly #learned = new Set<string>();
  readonly #cap: number;
  readonly #pattern: RegExp;

  /**
   * @param known values always labelled as themselves, except malformed ones and ones that look like
   *   card data (dropped here, so they count as `other`).
   * @param cap values learned at run time beyond `known`; 0 learns none.
   */
  constructor(known: Iterable<string>, cap: number, pattern: RegExp) {
    this.#pattern = pattern;
    this.#known = new Set([...known].filter((value) => this.#acceptable(value)));
    this.#cap = cap;
  }

  /** Well formed, no digit run of 6 or more, nothing the PAN masker (any separator) would change. */
  #acceptable(value: string): boolean {
    return this.#pattern.test(value) && !/\d{6,}/.test(value) && redactPans(value) === value;
  }

  /** The label value for `value`: itself when allowed, `other` otherwise. */
  label(value: string): string {
    if (this.#known.has(value) || this.#learned.has(value)) return value;
    // A long digit run may be a PAN or an id; such names never become labels.
    if (this.#learned.size >= this.#cap || !this.#acceptable(value)) return 'other';
    this.#learned.add(value);
    return value;
  }
}

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /**
   * The only operation names labelled as themselves (the example operations and the operations of
   * the trusted-documents manifest, src/plugins/operation-metrics.ts `trustedOperationNames`); every
   * other name is `other`.
   */
  knownOperationNames?: Iterable<string>;
  /** Vault ids as `vault` label values (`METRICS_VAULT_LABELS=on`); else `all`. Default false. */
  vaultLabels?: boolean;
}

/** Buckets (s) of request-like latencies: 1 ms … 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Creates a registry with every gateway metric and Node.js process metrics (prom-client defaults). */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Nothing learned from clients: a name a client makes up is `other` (issue 20 item 5).
  const operationNames = new BoundedLabelSet(options.knownOperationNames ?? [], 0, NAME);
  const errorCodes = new BoundedLabelSet([], MAX_ERROR_CODES, CODE);
  const registers = [registry];
  return {
    registry,
    operations: new Counter({
      name: 'cardgraph_graphql_operations_total',
      help: 'GraphQL operations by operation name, type and outcome.',
      labelNames: ['operation', 'type', 'outcome'],
      registers,
    }),
    operationDuration: new Histogram({
      name: 'cardgraph_graphql_operation_duration_seconds',
      help: 'Time from parsing a GraphQL operation to its result (subscriptions: to the source stream).',
      labelNames: ['operation', 'type', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    graphqlErrors: new Counter({
      name: 'cardgraph_graphql_errors_total',
      help: 'GraphQL errors in results, by operation name and error code.',
      labelNames: ['operation', 'code'],
      registers,
    }),
    upstreamDuration: new Histogram({
      name: 'cardgraph_upstream_request_duration_seconds',
      help: 'Upstream HTTP calls by area, operation (method and route template) and status or transport error code.',
      labelNames: ['area', 'operation', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    tokenFetches: withVaultLabels(
      new Counter({
        name: 'cardgraph_upstream_token_fetches_total',
        help: 'OAuth 2.0 client credentials token requests sent upstream, by vault (or all) and outcome.',
        labelNames: ['vault', 'outcome'],
        registers,
      }),
      options.vaultLabels ?? false,
    ),
    webhookNotifications: new Counter({
      name: 'cardgraph_webhook_notifications_total',
      help: 'Webhook notifications received, by outcome (accepted, duplicate, rejected, failed) and rejection reason.',
      labelNames: ['outcome', 'reason'],
      registers,
    }),
    eventLogAppend: new Histogram({
      name: 'cardgraph_event_log_append_duration_seconds',
      help: 'Durable event log appends, by backend and outcome.',
      labelNames: ['backend', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    eventLogAppendFailing: new Gauge({
      name: 'cardgraph_event_log_append_failing',
      help: 'Whether the latest append to a durable event log failed (1) or succeeded (0), by log; readiness fails while it is 1.',
      labelNames: ['log'],
      registers,
    }),
    liveSubscriptions: new Gauge({
      name: 'cardgraph_graphql_live_subscriptions',
      help: 'GraphQL subscriptions currently open, by transport.',
      labelNames: ['transport'],
      registers,
    }),
    deliveryLag: new Histogram({
      name: 'cardgraph_event_delivery_lag_seconds',
      help: 'Time from webhook receipt (log append when received by another replica) to handing the event to a live subscriber.',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    jitFallbacks: new Counter({
      name: 'cardgraph_jit_fallbacks_total',
      help: 'Queries whose compiled (graphql-jit) run answered with an error and ran again on graphql-js (same upstream call budget), by operation name.',
      labelNames: ['operation'],
      registers,
    }),
    operationLabel: (name) => (name ? operationNames.label(name) : 'anonymous'),
    errorCodeLabel: (code) => (typeof code === 'string' ? errorCodes.label(code) : 'none'),
  };
}

/**
 * `counter` whose `vault` label is the caller's vault id only when `vaultLabels`; otherwise every
 * increment is counted under {@link ALL_VAULTS_LABEL} (vault ids name the provider's tenants: an
 * operator opts in to exposing them to whoever scrapes).
 */
function withVaultLabels<L extends string>(
  counter: Counter<L | 'vault'>,
  vaultLabels: boolean,
): Counter<L | 'vault'> {
  if (vaultLabels) return counter;
  const inc = counter.inc.bind(counter) as (labels: Record<string, string | number>, value?: number) => void;
  counter.inc = ((labels?: Record<string, string | number> | number, value?: number) => {
    if (typeof labels === 'object') inc({ ...labels, vault: ALL_VAULTS_LABEL }, value);
    else inc({ vault: ALL_VAULTS_LABEL }, labels);
  }) as typeof counter.inc;
  return counter;
}

/** Seconds elapsed since `startedMs` (a `performance.now()` reading). */
export function secondsSince(startedMs: number): number {
  return (performance.now() - startedMs) / 1000;
}

/**
 * The route template of an upstream path for labels and span names: segments of the upstream
 * vocabulary are kept, every other segment (ids, aliases, vault-specific prefixes) becomes `{id}`.
 * E.g. `/card-interface/cards/CRD123/check` → `/card-interface/cards/{id}/check`.
 */
export function routeTemplate(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment === '' || ROUTE_VOCABULARY.has(segment) ? segment : '{id}'))
    .join('/');
}

/** Path segments of the upstream contract (interface specification, sandbox contract §1). */
const ROUTE_VOCABULARY = new Set([
  'v1',
  'v2',
  'api',
  'oauth',
  'token',
  'card-interface',
  'account-updater',
  'card-attributes',
  'accounts',
  'cards',
  'card-check',
  'check',
  'card-update-subscriptions',
  'network-tokens',
  'attributes',
  'organizations',
  'members',
  'invites',
  'sandbox',
  'webhook-endpoints',
]);
