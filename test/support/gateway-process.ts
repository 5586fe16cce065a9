import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { print } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import { request } from 'undici';
import WebSocket from 'ws';
import { issueDevToken } from '../../src/auth/issue-dev-token.ts';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import type { CardEventType } from '../../src/events/card-event.ts';
import { encodeCursor } from '../../src/events/event-log.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import { buildNetworkTokenNotification } from '../../src/sandbox/network-tokens.ts';
import { buildNotification } from '../events/helpers/notifications.ts';
import { ErrorFields } from './results.ts';
import { TEST_JWT_SECRET, TEST_WEBHOOK_SECRET } from './stack.ts';

/**
 * The gateway as a process: `node src/main.ts` as operators run it with `UPSTREAM=remote`, else
 * `node src/dev.ts` (`npm start`: the sandbox and the gateway on it) in a child process, so tests can SIGKILL it
 * mid-request, restart it on the same DATA_DIR and run several replicas against one Redis. Also the
 * client side those tests share (signed webhooks, graphql-ws subscribers, the history connection),
 * which talks to any gateway by its base address, child process or in-process stack alike.
 */

const REPOSITORY_ROOT = new URL('../..', import.meta.url).pathname;
const LISTENING_LINE = /"graphql":"(http:\/\/127\.0\.0\.1:\d+)\/graphql"/;
/** Output kept per process for failure messages (characters); older output is dropped. */
const OUTPUT_KEPT_CHARS = 64 * 1024;

/** How a gateway process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options of {@link startGatewayProcess}. */
export interface GatewayProcessOptions {
  /**
   * Configuration variables besides the defaults (PORT=0, SANDBOX_PORT=0, HOST=127.0.0.1, LOG_LEVEL=info,
   * WEBHOOK_SECRETS and AUTH_JWT_SECRET of test/support/stack.ts), e.g. EVENTS_BACKEND, REDIS_URL, WS_*.
   */
  env?: Record<string, string>;
  /** DATA_DIR of the sqlite event log; a fresh temporary directory when omitted. */
  dataDir?: string;
  /** Longest wait for the "listening" log line (ms); default 15,000. */
  startTimeoutMs?: number;
}

/** A running gateway process (`node src/main.ts` or `node src/dev.ts`). */
export interface GatewayProcess {
  /** Base address, e.g. `http://127.0.0.1:41234` (GraphQL at `/graphql`, webhooks at `/webhooks/card-events`). */
  readonly url: string;
  readonly dataDir: string;
  readonly pid: number;
  /** Settles once the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** The last 64 KiB of its stdout and stderr, for failure messages. */
  output(): string;
  /** Sends `signal` and resolves once the process has exited (at once when it already has). */
  kill(signal: 'SIGTERM' | 'SIGKILL'): Promise<ProcessExit>;
  /**
   * SIGTERM, then SIGKILL when it has not exited after `graceMs` (default 10,000); for afterAll hooks.
   */
  stop(graceMs?: number): Promise<ProcessExit>;
  /** Starts a new process with the same variables and DATA_DIR (on a new port); this one must have exited. */
  restart(): Promise<GatewayProcess>;
}

/**
 * Spawns the gateway process (src/dev.ts with the embedded sandbox unless `UPSTREAM=remote`, ports 0)
 * and waits for its JSON log line carrying
 * `"graphql":"http://127.0.0.1:<port>/graphql"`.
 * @throws Error with the process output when it exits or stays silent for `startTimeoutMs` first.
 */
export async function startGatewayProcess(options: GatewayProcessOptions = {}): Promise<GatewayProcess> {
  const dataDir = options.dataDir ?? join(mkdtempSync(join(tmpdir(), 'cardgraph-gateway-')), 'data');
  const env = options.env ?? {};
  // A remote upstream runs the production entry as operators do; the embedded sandbox only exists in
  // the development entry.
  const entry = env.UPSTREAM === 'remote' ? 'src/main.ts' : 'src/dev.ts';
  const child: ChildProcess = spawn(process.execPath, [entry], {
    cwd: REPOSITORY_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      SANDBOX_PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      WEBHOOK_SECRETS: TEST_WEBHOOK_SECRET,
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Both pipes are always drained: a full pipe would block the gateway's synchronous log writes.
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT_CHARS);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = LISTENING_LINE.exec(seen);
      if (match) {
        finish();
        resolve(match[1]!);
      }
    };
    const timer = setTimeout(() => {
      finish();
      child.kill('SIGKILL');
      reject(new Error(`gateway did not start within ${options.startTimeoutMs ?? 15_000} ms:\n${output}`));
    }, options.startTimeoutMs ?? 15_000);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      finish();
      reject(new Error(`gateway exited (${code ?? signal}) before listening:\n${output}`));
    };
    const finish = () => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });

  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const gateway: GatewayProcess = {
    url,
    dataDir,
    pid: child.pid!,
    exited,
    output: () => output,
    kill(signal) {
      if (!hasExited()) child.kill(signal);
      return exited;
    },
    async stop(graceMs = 10_000) {
      if (hasExited()) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    async restart() {
      if (!hasExited()) throw new Error(`gateway ${child.pid} is still running; kill it before restarting`);
      return startGatewayProcess({ ...options, dataDir });
    },
  };
  return gateway;
}

/** A client token (HS256, TEST_JWT_SECRET, every scope) for `vaults`, valid `expiresInS` seconds (default 600). */
export function testToken(vaults: readonly string[], expiresInS = 600): Promise<string> {
  return issueDevToken({
    secret: TEST_JWT_SECRET,
    subject: 'durability-test',
    vaults,
    scopes: UPSTREAM_SCOPES,
    expiresInS,
  });
}

/**
 * A cursor before every log position: `after` with it replays the whole retained log, then goes live.
 * Tests use it to make a subscription independent of when the server registers it.
 */
export const LOG_START_CURSOR = encodeCursor({ position: 0n, timestampMs: 0 });

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random card id of the notification table's shape: `CRD` + 22 Base62 characters. */
export function randomCardId(): string {
  return `CRD${[...randomBytes(22)].map((byte) => BASE62[byte % 62]).join('')}`;
}

/** Options of {@link notification}. */
export interface NotificationSpec {
  tenant?: string;
  cardId?: string;
  /** One of the eight notification kinds; `au_card.updated` by default. */
  event?: CardEventType;
  /** The envelope `timestamp` (ISO 8601); the builder's fixed instant by default. */
  timestamp?: string;
}

/** A valid notification body (test/events/helpers/notifications.ts) with a fresh UUID `id`. */
export function notification(spec: NotificationSpec = {}): Record<string, unknown> & { id: string } {
  return buildNotification({
    ...(spec.tenant ? { tenant: spec.tenant } : {}),
    ...(spec.cardId ? { cardId: spec.cardId } : {}),
    ...(spec.event ? { event: spec.event } : {}),
    ...(spec.timestamp ? { envelope: { timestamp: spec.timestamp } } : {}),
  }) as Record<string, unknown> & { id: string };
}

/**
 * A valid network token notification body (`network_token.active`, as the embedded sandbox builds
 * it) with a fresh UUID `id`, for `tenant` (default tntsandbox1) and `panAlias`.
 */
export function networkTokenNotification(
  spec: { tenant?: string; panAlias?: string } = {},
): Record<string, unknown> & { id: string } {
  const now = Date.now();
  return buildNetworkTokenNotification({
    vault: spec.tenant ?? 'tntsandbox1',
    panAlias: spec.panAlias ?? 'tok_sandbox_DurabilityAlias0001',
    state: 'ACTIVE',
    networkTokenLast4: '4821',
    expiresAt: '2030-12',
    createdAtMs: now - 1_000,
    occurredAtMs: now,
  }).envelope as unknown as Record<string, unknown> & { id: string };
}

/** `Subscription.networkTokenEvents`, every argument optional, with the fields {@link StreamedCardEvent} reads. */
export const NETWORK_TOKEN_EVENTS_SUBSCRIPTION = `
  subscription DurabilityNetworkTokenEvents($after: String, $vaultId: String, $panAlias: String) {
    networkTokenEvents(after: $after, vaultId: $vaultId, panAlias: $panAlias) {
      id tenant cardId: panAlias type timestamp outOfOrder cursor
    }
  }`;

/** Answer of the webhook receiver: HTTP status and parsed JSON body. */
export interface WebhookAnswer {
  status: number;
  body: { data?: { id: string; status: 'accepted' | 'duplicate' }; errors?: { code: string }[] };
}

/**
 * POSTs a notification to `${baseUrl}/webhooks/card-events`, signed with TEST_WEBHOOK_SECRET at
 * `timestampS` (unix seconds; now by default), as the sandbox does (contract §4).
 * @throws the transport error when no answer arrives (refused connection, process killed).
 */
export async function postNotification(
  baseUrl: string,
  body: Record<string, unknown> | string,
  timestampS = Math.floor(Date.now() / 1000),
): Promise<WebhookAnswer> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await request(`${baseUrl}/webhooks/card-events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'vgs-signature': signWebhookBody(raw, TEST_WEBHOOK_SECRET, timestampS),
    },
    body: raw,
  });
  return { status: response.statusCode, body: (await response.body.json()) as WebhookAnswer['body'] };
}

/** Outcome of {@link postBurst}: ids answered 2xx, and ids refused or without an answer. */
export interface BurstOutcome {
  acknowledged: Set<string>;
  unacknowledged: Set<string>;
}

/**
 * Posts `notifications` with at most `concurrency` requests in flight, in order of the array.
 * `onAcknowledged(count)` runs after each 2xx with the number so far (e.g. to SIGKILL the receiver).
 * Transport errors (the receiver died) count as unacknowledged and do not stop the burst.
 */
export async function postBurst(
  baseUrl: string,
  notifications: readonly (Record<string, unknown> & { id: string })[],
  concurrency: number,
  onAcknowledged?: (count: number) => void,
): Promise<BurstOutcome> {
  const outcome: BurstOutcome = { acknowledged: new Set(), unacknowledged: new Set() };
  let next = 0;
  async function worker(): Promise<void> {
    while (next < notifications.length) {
      const body = notifications[next++]!;
      let status = 0;
      try {
        status = (await postNotification(baseUrl, body)).status;
      } catch {
        // No answer: the sender would retry; for the test the id is simply not acknowledged.
      }
      if (status >= 200 && status < 300) {
        outcome.acknowledged.add(body.id);
        onAcknowledged?.(outcome.acknowledged.size);
      } else {
        outcome.unacknowledged.add(body.id);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcome;
}

/** The fields of a `CardEvent` the durability tests read. */
export interface StreamedCardEvent {
  id: string;
  tenant: string;
  cardId: string;
  type: string;
  timestamp: string;
  outOfOrder: boolean;
  cursor: string;
}

const CARD_EVENT_FIELDS = 'id tenant cardId type timestamp outOfOrder cursor';

/** `Subscription.cardEvents`, every argument optional. */
export const CARD_EVENTS_SUBSCRIPTION = `
  subscription DurabilityCardEvents($after: String, $vaultId: String, $cardId: String, $types: [CardEventType!]) {
    cardEvents(after: $after, vaultId: $vaultId, cardId: $cardId, types: $types) { ${CARD_EVENT_FIELDS} }
  }`;

const CARD_EVENTS_HISTORY_QUERY = `
  query DurabilityCardEventHistory($first: Int, $after: String, $vaultId: String, $cardId: String) {
    cardEvents(first: $first, after: $after, vaultId: $vaultId, cardId: $cardId) {
      __typename
      ... on QueryCardEventsSuccess {
        data {
          edges { cursor node { ${CARD_EVENT_FIELDS} } }
          pageInfo { hasNextPage endCursor }
        }
      }
      ...ErrorFields
    }
  }
  ${print(ErrorFields)}`;

type HistoryPage = {
  data?: {
    cardEvents:
      | {
          __typename: 'QueryCardEventsSuccess';
          data: {
            edges: { cursor: string; node: StreamedCardEvent }[];
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
          };
        }
      | { __typename: string; code: string; message: string };
  };
  errors?: unknown[];
};

/**
 * Reads the whole `Query.cardEvents` connection over HTTP, `pageSize` at a time (oldest first by
 * timestamp, then acceptance), following `endCursor` until `hasNextPage` is false.
 * @throws Error when a page answers errors or a typed error result.
 */
export async function readHistory(
  baseUrl: string,
  token: string,
  filter: { vaultId?: string; cardId?: string } = {},
  pageSize = 100,
): Promise<StreamedCardEvent[]> {
  const events: StreamedCardEvent[] = [];
  let after: string | null = null;
  for (;;) {
    const response = await request(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        query: CARD_EVENTS_HISTORY_QUERY,
        variables: { first: pageSize, after, ...filter },
      }),
    });
    const page = (await response.body.json()) as HistoryPage;
    const result = page.data?.cardEvents;
    if (page.errors || result?.__typename !== 'QueryCardEventsSuccess' || !('data' in result)) {
      throw new Error(`history page failed (${response.statusCode}): ${JSON.stringify(page)}`);
    }
    for (const edge of result.data.edges) {
      if (edge.cursor !== edge.node.cursor) throw new Error(`edge cursor differs from node cursor`);
      events.push(edge.node);
    }
    if (!result.data.pageInfo.hasNextPage) return events;
    after = result.data.pageInfo.endCursor;
  }
}

/** Variables of {@link CARD_EVENTS_SUBSCRIPTION}. */
export interface CardEventsVariables {
  after?: string;
  vaultId?: string;
  cardId?: string;
  types?: string[];
}

/**
 * A graphql-ws client of `${baseUrl}/graphql` (lazy: the socket opens with the first operation; no
 * retries) sending `token` as `connectionParams.authorization`; `onClosed` gets the close code.
 */
export function graphqlWsClient(baseUrl: string, token: string, onClosed?: (code: number) => void): Client {
  return createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
    on: { closed: (event) => onClosed?.((event as { code: number }).code) },
  });
}

/** One graphql-ws connection holding one `Subscription.cardEvents`, recording what it receives. */
export interface CardEventSubscriber {
  readonly client: Client;
  /** Events received, in arrival order. */
  readonly events: readonly StreamedCardEvent[];
  /** Errors received (`next` payload errors and the `error` message, or the close event). */
  readonly errors: readonly unknown[];
  /** Close code of the socket once closed by either side. */
  readonly closeCode: number | undefined;
  /** Ids of {@link events}, in arrival order. */
  ids(): string[];
  /**
   * Resolves once `condition()` holds (checked on every message and close).
   * @throws Error naming `what` and what was received when `timeoutMs` (default 10,000) passes first.
   */
  waitUntil(condition: () => boolean, what: string | (() => string), timeoutMs?: number): Promise<void>;
  /** {@link waitUntil} every id of `ids` has arrived. */
  waitForIds(ids: Iterable<string>, timeoutMs?: number): Promise<void>;
  /** {@link waitUntil} the socket has closed; resolves to its close code. */
  waitForClose(timeoutMs?: number): Promise<number>;
  /** Closes the connection (client side, 1000) and waits for it. */
  close(): Promise<void>;
}

/**
 * Opens a graphql-ws connection to `${baseUrl}/graphql` with `token` in
 * `connectionParams.authorization` and subscribes to `cardEvents(variables)` at once.
 * `query` replaces the subscription document (e.g. to send an oversized message).
 */
export function subscribeCardEvents(
  baseUrl: string,
  token: string,
  variables: CardEventsVariables = {},
  query: string = CARD_EVENTS_SUBSCRIPTION,
  field: 'cardEvents' | 'networkTokenEvents' = 'cardEvents',
): CardEventSubscriber {
  const events: StreamedCardEvent[] = [];
  const errors: unknown[] = [];
  const checks = new Set<() => void>();
  let closeCode: number | undefined;
  const changed = () => {
    for (const check of [...checks]) check();
  };
  const client = graphqlWsClient(baseUrl, token, (code) => {
    closeCode = code;
    changed();
  });
  client.subscribe<Record<string, StreamedCardEvent>>(
    { query, variables: { ...variables } },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        const event = result.data?.[field];
        if (event) events.push(event);
        changed();
      },
      error: (error) => {
        errors.push(error);
        changed();
      },
      complete: changed,
    },
  );

  const subscriber: CardEventSubscriber = {
    client,
    events,
    errors,
    get closeCode() {
      return closeCode;
    },
    ids: () => events.map((event) => event.id),
    waitUntil(condition, what, timeoutMs = 10_000) {
      if (condition()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!condition()) return;
          checks.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          checks.delete(check);
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}; received ${events.length} events, ` +
                `errors ${JSON.stringify(errors)}, close code ${closeCode}`,
            ),
          );
        }, timeoutMs);
        checks.add(check);
      });
    },
    waitForIds(ids, timeoutMs) {
      const wanted = [...ids];
      const received = new Set<string>();
      let scanned = 0;
      return subscriber.waitUntil(
        () => {
          for (; scanned < events.length; scanned++) received.add(events[scanned]!.id);
          return wanted.every((id) => received.has(id));
        },
        () =>
          `${wanted.length} ids (${wanted.filter((id) => !received.has(id)).length} missing, e.g. ${wanted.find((id) => !received.has(id))})`,
        timeoutMs,
      );
    },
    async waitForClose(timeoutMs) {
      await subscriber.waitUntil(() => closeCode !== undefined, 'the socket to close', timeoutMs);
      return closeCode!;
    },
    async close() {
      await client.dispose();
    },
  };
  return subscriber;
}

/**
 * Polls `condition` every 10 ms until it holds.
 * @throws Error naming `what` when `timeoutMs` (default 5,000) passes first.
 */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Ids that occur more than once in `ids`. */
export function duplicatesOf(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) repeated.add(id);
    seen.add(id);
  }
  return [...repeated];
}
