import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type ExecutionResult, print } from 'graphql';
import { createClient as createSseClient } from 'graphql-sse';
import type { Sink } from 'graphql-ws';
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import { AccountUpdaterCardByIdDocument } from '../../src/client/generated/index.ts';
import {
  expiredTestToken,
  postNotification,
  type StackUse,
  testToken,
  useStack,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { notification } from '../support/notifications.ts';

/**
 * One conformance suite over the four transports (as graphql-ws tests every adapter with one suite):
 * plain JSON over HTTP (fetch), Yoga's SSE on `/graphql` and graphql-sse on `/graphql/stream` in both
 * of its modes (the graphql-sse client), and graphql-ws (the graphql-ws client). Every transport runs
 * an operation through Yoga's public `getResultForParams`, and a live subscription through the one
 * live-subscription hub (src/live/hub.ts), so the same operation must give the same data, the same
 * error codes and messages, the same limits, the same persisted-operation rules and move the same
 * metrics on each. Where a transport's protocol has its own form for an answer (graphql-ws refuses a
 * token by closing its socket with 4403, at `connection_init` and at the token's `exp`), the case
 * asserts that documented form (docs/transports.md, "Differences by protocol").
 *
 * Two tables: {@link transportsOf} (how each road sends an operation and reads its answer, refusals
 * read from the wire) and {@link CASES} (an operation, the answer every road gives, the metric moves).
 */
const VAULT = 'tntsandbox1';
const LIVE = 'subscription { cardEvents { id type } }';
const CARD_QUERY = print(AccountUpdaterCardByIdDocument);
const MISSING_CARD = { cardId: 'CRD0000000000000000000000' };
/** The cost limit of the stack under test (the lowest `OPERATION_MAX_COST` accepts). */
const MAX_COST = 100;

/** The trusted document of `query Me` in the codegen manifest, and its id (sha256 hex). */
const ME = (() => {
  const manifest = JSON.parse(
    readFileSync(new URL('../../src/client/generated/persisted-documents.json', import.meta.url), 'utf8'),
  ) as Record<string, string>;
  const [id] = Object.entries(manifest).find(([, text]) => text.startsWith('query Me '))!;
  return { hash: id.slice('sha256:'.length) };
})();
/** `query Me`'s data for a {@link useStack} token (`test-user`, tntsandbox1, every upstream scope). */
const ME_DATA = {
  __typename: 'Query',
  viewer: {
    __typename: 'Viewer',
    // Every upstream scope, as the viewer lists them (sorted).
    scopes: [...UPSTREAM_SCOPES].sort(),
    subject: 'test-user',
    vaults: [VAULT],
  },
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** `extensions` naming an automatic persisted query (Apollo's protocol, version 1). */
const persisted = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });

/** An error as the suite compares it: its message and code (request ids differ per request). */
interface SeenError {
  message: string;
  code: string;
}

/**
 * What a transport answered: every result it delivered (errors as {@link SeenError}), the errors of
 * its refusal, or (graphql-ws refusing a token) its socket's close code.
 */
type Outcome =
  | { results: { data?: unknown; errors?: SeenError[] }[] }
  | { refused: SeenError[] }
  | { closed: number };

const seen = (errors: readonly { message: string; extensions?: Record<string, unknown> }[] | undefined) =>
  (errors ?? []).map((error) => ({ message: error.message, code: String(error.extensions?.code) }));

/** A result as {@link Outcome} holds it. */
function seenResult(result: ExecutionResult): { data?: unknown; errors?: SeenError[] } {
  return {
    ...('data' in result ? { data: result.data } : {}),
    ...(result.errors ? { errors: seen(result.errors) } : {}),
  };
}

/** A live subscription opened on a transport: what it received, and how and when it ended. */
interface Live {
  readonly results: { data?: unknown; errors?: SeenError[] }[];
  /** `complete`, or graphql-ws's close code; `at` in ms since the epoch. */
  readonly ended: { how: 'complete' | { closed: number } | { error: string }; at: number } | undefined;
  close(): void;
}

interface Transport {
  name: string;
  /**
   * When the road checks the client token (docs/transports.md, "Differences by protocol"):
   * - `optional`: `/graphql` runs an operation without a token (its fields answer `unauthenticated`
   *   as data), and refuses a bad one with 401 and its code;
   * - `every-request`: `/graphql/stream` refuses every request without a valid token with 401 and
   *   its code (a single-connection stream belongs to the client that reserved it; its distinct mode
   *   on the same path keeps the same rule);
   * - `connection-init`: graphql-ws checks it once, at `connection_init`, and refuses it by closing
   *   the socket with 4403 (its protocol has no answer with a code before a connection is acknowledged).
   */
  tokenCheck: 'optional' | 'every-request' | 'connection-init';
  /** The `transport` label of `cardgraph_graphql_live_subscriptions` its live subscriptions count under. */
  gauge: 'sse' | 'graphql-ws' | undefined;
  /** Runs `body` with `token` (none when null) to its end. */
  run(token: string | null, body: Record<string, unknown>): Promise<Outcome>;
  /** Opens a live subscription (the roads that stream). */
  live?(token: string, query: string): Live;
}

/**
 * A {@link Live} recording what a client's `subscribe(payload, sink)` delivers: its results, and its
 * end (`complete`, or an error: graphql-ws's close event carries the socket's code).
 */
function recordLive(subscribe: (sink: Sink<ExecutionResult>) => () => void): Live {
  const live: { -readonly [K in keyof Live]: Live[K] } = { results: [], ended: undefined, close: () => {} };
  live.close = subscribe({
    next: (result) => void live.results.push(seenResult(result)),
    error: (error) => {
      const code = (error as { code?: unknown }).code;
      live.ended = {
        how: typeof code === 'number' ? { closed: code } : { error: String(error) },
        at: Date.now(),
      };
    },
    complete: () => {
      live.ended ??= { how: 'complete', at: Date.now() };
    },
  });
  return live;
}

/** How a road refuses a bad client token ({@link Transport.tokenCheck}): 401 with its code, or close 4403. */
const tokenRefusal = (transport: Transport, error: SeenError): Outcome =>
  transport.tokenCheck === 'connection-init' ? { closed: 4403 } : { refused: [error] };

const UNAUTHENTICATED = {
  message: 'Authentication required: send Authorization: Bearer <token>',
  code: 'unauthenticated',
};

/** A transport with a stack to run on, and the clients to dispose after each test. */
function transportsOf(t: StackUse): Transport[] {
  const disposers: (() => void)[] = [];
  afterEach(() => {
    for (const dispose of disposers.splice(0)) dispose();
  });
  const bearer = (token: string | null): Record<string, string> =>
    token === null ? {} : { authorization: `Bearer ${token}` };

  /**
   * A graphql-sse client (distinct connections or single connection) on `path`. Its `fetchFn` keeps
   * the body of the last refused request (4xx/5xx of any of its `PUT`, `GET` and `POST`s): the client
   * itself throws only the status of a refusal in single-connection mode, so the suite reads the
   * refusal's JSON `errors` from the wire.
   */
  function sseTransport(name: string, path: string, singleConnection: boolean): Transport {
    const client = (token: string | null, refusal: { text?: string }) => {
      const created = createSseClient({
        url: `${t.stack.url}${path}`,
        singleConnection,
        retryAttempts: 0,
        headers: bearer(token),
        fetchFn: async (input: RequestInfo | URL, init?: RequestInit) => {
          const response = await fetch(input, init);
          if (response.status >= 400) refusal.text = await response.clone().text();
          return response;
        },
      });
      disposers.push(() => created.dispose());
      return created;
    };
    return {
      name,
      tokenCheck: path === '/graphql' ? 'optional' : 'every-request',
      gauge: 'sse',
      async run(token, body) {
        const refusal: { text?: string } = {};
        const results: ExecutionResult[] = [];
        try {
          for await (const result of client(token, refusal).iterate(body as never))
            results.push(result as ExecutionResult);
        } catch (error) {
          if (refusal.text === undefined) throw error;
          // A JSON `errors` body (graphql-sse), or Yoga's SSE answer of the refusal (its `next` event).
          const json = refusal.text.startsWith('{') ? refusal.text : /^data: (.+)$/m.exec(refusal.text)?.[1];
          return { refused: seen((JSON.parse(json ?? '{}') as ExecutionResult).errors) };
        }
        // Yoga's SSE answers a request error as a streamed result without `data`.
        const only = results.length === 1 ? results[0]! : undefined;
        if (only && !('data' in only) && only.errors?.length) return { refused: seen(only.errors) };
        return { results: results.map(seenResult) };
      },
      live: (token, query) => recordLive((sink) => client(token, {}).subscribe({ query }, sink)),
    };
  }

  return [
    {
      name: 'plain JSON over HTTP',
      tokenCheck: 'optional',
      gauge: undefined,
      async run(token, body) {
        const response = await fetch(`${t.stack.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...bearer(token) },
          body: JSON.stringify(body),
        });
        const result = (await response.json()) as ExecutionResult;
        if (!('data' in result) && result.errors?.length) return { refused: seen(result.errors) };
        return { results: [seenResult(result)] };
      },
    },
    sseTransport("Yoga's SSE on /graphql", '/graphql', false),
    sseTransport('graphql-sse distinct connections', '/graphql/stream', false),
    sseTransport('graphql-sse single connection', '/graphql/stream', true),
    {
      name: 'graphql-ws',
      tokenCheck: 'connection-init',
      gauge: 'graphql-ws',
      async run(token, body) {
        const client = t.stack.wsClient(token);
        disposers.push(() => void client.dispose());
        const results: ExecutionResult[] = [];
        try {
          for await (const result of client.iterate(body as never)) results.push(result as ExecutionResult);
        } catch (error) {
          // An `error` message: the operation's GraphQL errors; a close event: the socket's code.
          if (Array.isArray(error)) return { refused: seen(error) };
          const code = (error as { code?: unknown }).code;
          if (typeof code === 'number') return { closed: code };
          throw error;
        }
        return { results: results.map(seenResult) };
      },
      live(token, query) {
        const client = t.stack.wsClient(token);
        disposers.push(() => void client.dispose());
        return recordLive((sink) => client.subscribe({ query }, sink));
      },
    },
  ];
}

/**
 * The moves of `cardgraph_graphql_operations_total` (`operations operation type outcome`) and
 * `cardgraph_graphql_errors_total` (`errors operation code`) between two readings.
 */
type MetricMoves = Record<string, number>;

async function counters(t: StackUse): Promise<Map<string, number>> {
  const { operations, graphqlErrors } = t.stack.app.metrics;
  const values = new Map<string, number>();
  for (const { labels, value } of (await operations.get()).values)
    values.set(`operations ${labels.operation} ${labels.type} ${labels.outcome}`, value);
  for (const { labels, value } of (await graphqlErrors.get()).values)
    values.set(`errors ${labels.operation} ${labels.code}`, value);
  return values;
}

function movesBetween(before: Map<string, number>, after: Map<string, number>): MetricMoves {
  const moves: MetricMoves = {};
  for (const [key, value] of after) {
    const moved = value - (before.get(key) ?? 0);
    if (moved !== 0) moves[key] = moved;
  }
  return moves;
}

/** One operation, the answer every transport gives it and how it moves the metrics. */
interface Case {
  name: string;
  /** The client token; a valid tntsandbox1 token by default, none when null. */
  token?: () => Promise<string | null>;
  /** The request (a function of the transport where a road needs its own document, e.g. an APQ hash). */
  body: Record<string, unknown> | ((transport: Transport) => Record<string, unknown>);
  /** The answer (the same on every road, or each road's documented form). */
  outcome: Outcome | ((transport: Transport) => Outcome);
  /** The metric moves (the same on every road, or each road's where its answer has its own form). */
  metrics: MetricMoves | ((transport: Transport) => MetricMoves);
  /** A step before the request (e.g. registering an automatic persisted query). */
  before?: (transport: Transport) => Promise<void>;
}

/** `{ v0: viewer { subject } … }` with `count` aliases (graphql-armor does not count `__typename`'s). */
const aliases = (count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `v${i}: viewer { subject }`).join(' ')} }`;
/** `count` `@skip(if: false)` directives on one repeated `__typename` (fields that merge). */
const directives = (count: number) => `{ ${'__typename @skip(if: false) '.repeat(count)}}`;
/** `__type` with `ofType` nested so the deepest field sits at depth `depth`. */
const deep = (depth: number) =>
  `{ __type(name: "Query") { fields { type { ${'ofType { '.repeat(depth - 4)}name${' }'.repeat(depth - 4)} } } } }`;
/** A document of `count` tokens (`{`, `a` × (count - 2), `}`); small enough for graphql-ws's frame limit. */
const tokens = (count: number) => `{ ${'a '.repeat(count - 2)}}`;
/** Two `nodes(ids:)` of {@link MAX_COST} ids each: a cost of 2 × {@link MAX_COST}, known from its variables. */
const EXPENSIVE = 'query Expensive($ids: [ID!]!) { a: nodes(ids: $ids) { id } b: nodes(ids: $ids) { id } }';

/** The metric moves of an anonymous query refused by validation. */
const VALIDATION_FAILED = {
  'operations anonymous query error': 1,
  'errors anonymous GRAPHQL_VALIDATION_FAILED': 1,
};

const CASES: Case[] = [
  {
    name: 'a query: the same data (the typed error of a missing card)',
    body: { query: CARD_QUERY, variables: MISSING_CARD },
    outcome: {
      results: [
        {
          data: {
            __typename: 'Query',
            accountUpdaterCard: {
              __typename: 'CardNotFoundError',
              code: 'card-not-found',
              message: 'Card CRD0000000000000000000000 was not found in this vault',
            },
          },
        },
      ],
    },
    metrics: { 'operations AccountUpdaterCardById query success': 1 },
  },
  {
    name: 'an invalid operation: GRAPHQL_VALIDATION_FAILED',
    body: { query: '{ noSuchField }' },
    outcome: {
      refused: [
        { message: 'Cannot query field "noSuchField" on type "Query".', code: 'GRAPHQL_VALIDATION_FAILED' },
      ],
    },
    metrics: VALIDATION_FAILED,
  },
  // Limits: graphql-armor's (depth 12, aliases 15, directives 20, tokens 3,000) and the gateway's cost.
  {
    name: 'depth over 12: GRAPHQL_VALIDATION_FAILED',
    body: { query: deep(13) },
    outcome: {
      refused: [
        {
          message: 'Syntax Error: Query depth limit of 12 exceeded, found 13.',
          code: 'GRAPHQL_VALIDATION_FAILED',
        },
      ],
    },
    metrics: VALIDATION_FAILED,
  },
  {
    name: 'depth of 12 runs',
    body: { query: `query Depth12 ${deep(12)}` },
    outcome: { results: [{ data: { __type: { fields: expect.any(Array) } } }] },
    metrics: { 'operations other query success': 1 },
  },
  {
    name: 'aliases over 15: GRAPHQL_VALIDATION_FAILED',
    body: { query: aliases(16) },
    outcome: {
      refused: [
        {
          message: 'Syntax Error: Aliases limit of 15 exceeded, found 16.',
          code: 'GRAPHQL_VALIDATION_FAILED',
        },
      ],
    },
    metrics: VALIDATION_FAILED,
  },
  {
    name: 'directives over 20: GRAPHQL_VALIDATION_FAILED',
    body: { query: directives(21) },
    outcome: {
      refused: [
        {
          message: 'Syntax Error: Directives limit of 20 exceeded, found 21.',
          code: 'GRAPHQL_VALIDATION_FAILED',
        },
      ],
    },
    metrics: VALIDATION_FAILED,
  },
  {
    // The same document on every road: its parse failure is cached after the first, and counted each time.
    name: 'tokens over 3,000: GRAPHQL_PARSE_FAILED',
    body: { query: tokens(3_001) },
    outcome: {
      refused: [{ message: 'Syntax Error: Token limit of 3000 exceeded.', code: 'GRAPHQL_PARSE_FAILED' }],
    },
    metrics: { 'operations anonymous unknown error': 1, 'errors anonymous GRAPHQL_PARSE_FAILED': 1 },
  },
  {
    name: `cost over OPERATION_MAX_COST (${MAX_COST}), counted with the variables: operation-too-expensive`,
    body: { query: EXPENSIVE, variables: { ids: Array.from({ length: MAX_COST }, (_, i) => `id-${i}`) } },
    outcome: {
      refused: [
        {
          message: `The operation costs ${2 * MAX_COST}, more than the limit of ${MAX_COST}: ask for smaller pages (first), fewer ids or fewer nested objects`,
          code: 'operation-too-expensive',
        },
      ],
    },
    metrics: { 'operations other query error': 1, 'errors other operation-too-expensive': 1 },
  },
  {
    // The size of a document has no bound of its own: the HTTP roads take a body of up to 25 MB,
    // graphql-ws a message of up to WS_MAX_PAYLOAD_BYTES (16 KiB by default), over which ws closes
    // the socket with 1009 (Message Too Big), its protocol's answer. The token limit above bounds
    // what any road parses.
    name: 'a document over graphql-ws’s message limit (a 20 KB comment, 3 tokens): runs, or close 1009',
    body: { query: `{ __typename # ${'x'.repeat(20_000)}\n}` },
    outcome: (transport) =>
      transport.tokenCheck === 'connection-init'
        ? { closed: 1009 }
        : { results: [{ data: { __typename: 'Query' } }] },
    metrics: (transport): MetricMoves =>
      transport.tokenCheck === 'connection-init' ? {} : { 'operations anonymous query success': 1 },
  },
  // Client tokens.
  {
    name: 'no token: unauthenticated (as data where a token is optional)',
    token: async () => null,
    body: { query: CARD_QUERY, variables: MISSING_CARD },
    outcome: (transport) =>
      transport.tokenCheck === 'optional'
        ? {
            results: [
              {
                data: {
                  __typename: 'Query',
                  accountUpdaterCard: { __typename: 'UnauthenticatedError', ...UNAUTHENTICATED },
                },
              },
            ],
          }
        : tokenRefusal(transport, UNAUTHENTICATED),
    // Only a road that runs it counts an operation: refused tokens never reach GraphQL.
    metrics: (transport): MetricMoves =>
      transport.tokenCheck === 'optional' ? { 'operations AccountUpdaterCardById query success': 1 } : {},
  },
  {
    name: 'an invalid token: invalid-token',
    token: async () => 'not-a-jwt',
    body: { query: CARD_QUERY, variables: MISSING_CARD },
    outcome: (transport) =>
      tokenRefusal(transport, { message: 'Invalid token: not a valid JWS', code: 'invalid-token' }),
    metrics: {},
  },
  {
    name: 'an expired token: token-expired',
    token: () => expiredTestToken({ vaults: [VAULT] }),
    body: { query: CARD_QUERY, variables: MISSING_CARD },
    outcome: (transport) =>
      tokenRefusal(transport, { message: 'The token has expired', code: 'token-expired' }),
    metrics: {},
  },
  // Persisted operations (PERSISTED_OPERATIONS=allow, the default).
  {
    name: 'an unknown hash alone: PERSISTED_QUERY_NOT_FOUND',
    body: (transport) => ({ query: '', extensions: persisted(sha256(`{ __typename } # ${transport.name}`)) }),
    outcome: { refused: [{ message: 'PersistedQueryNotFound', code: 'PERSISTED_QUERY_NOT_FOUND' }] },
    metrics: {},
  },
  {
    name: 'a hash that is not its document’s: PERSISTED_QUERY_MISMATCH',
    body: { query: '{ __typename }', extensions: persisted(sha256('{ viewer { subject } }')) },
    outcome: { refused: [{ message: 'PersistedQueryMismatch', code: 'PERSISTED_QUERY_MISMATCH' }] },
    metrics: {},
  },
  {
    name: 'a trusted document’s id alone runs its document',
    body: { query: '', extensions: persisted(ME.hash) },
    outcome: { results: [{ data: ME_DATA }] },
    metrics: { 'operations Me query success': 1 },
  },
  {
    name: 'an automatic persisted query registered on the road runs by its hash alone',
    before: async (transport) => {
      const query = `{ __typename } # ${transport.name} registered`;
      expect(
        await transport.run(await testToken({ vaults: [VAULT] }), {
          query,
          extensions: persisted(sha256(query)),
        }),
      ).toEqual({
        results: [{ data: { __typename: 'Query' } }],
      });
    },
    body: (transport) => ({
      query: '',
      extensions: persisted(sha256(`{ __typename } # ${transport.name} registered`)),
    }),
    outcome: { results: [{ data: { __typename: 'Query' } }] },
    metrics: { 'operations anonymous query success': 1 },
  },
];

/** Cases of a gateway that runs only its trusted documents (`PERSISTED_OPERATIONS=require`). */
const REQUIRE_CASES: Case[] = [
  {
    name: 'a document without a trusted id: persisted-operation-required',
    body: { query: '{ __typename }' },
    outcome: {
      refused: [
        {
          message:
            'This gateway runs only its trusted documents: send extensions.persistedQuery.sha256Hash of one',
          code: 'persisted-operation-required',
        },
      ],
    },
    // Refused before parsing (Yoga's `onParams`): no operation to count, on any road.
    metrics: {},
  },
  {
    name: 'an id that is no trusted document: persisted-operation-not-found',
    body: { query: '', extensions: persisted(sha256('{ __typename }')) },
    outcome: {
      refused: [
        {
          message: 'This operation is not one of the gateway’s trusted documents',
          code: 'persisted-operation-not-found',
        },
      ],
    },
    metrics: {},
  },
  {
    name: 'a trusted document’s id runs its document',
    body: { query: '', extensions: persisted(ME.hash) },
    outcome: { results: [{ data: ME_DATA }] },
    metrics: { 'operations Me query success': 1 },
  },
];

/** Runs `c` on `transport`: the answer and the metric moves it must give. */
async function conforms(t: StackUse, transport: Transport, c: Case): Promise<void> {
  await c.before?.(transport);
  const token = c.token ? await c.token() : await testToken({ vaults: [VAULT] });
  const body = typeof c.body === 'function' ? c.body(transport) : c.body;
  const before = await counters(t);
  expect(await transport.run(token, body)).toEqual(
    typeof c.outcome === 'function' ? c.outcome(transport) : c.outcome,
  );
  await expect
    .poll(async () => movesBetween(before, await counters(t)))
    .toEqual(typeof c.metrics === 'function' ? c.metrics(transport) : c.metrics);
}

async function liveGauge(t: StackUse, transport: 'sse' | 'graphql-ws'): Promise<number> {
  const { values } = await t.stack.app.metrics.liveSubscriptions.get();
  return values.find((sample) => sample.labels.transport === transport)?.value ?? 0;
}

describe('five roads, one behaviour', () => {
  const t = useStack({ OPERATION_MAX_COST: String(MAX_COST) });
  const transports = transportsOf(t);

  describe.each(transports)('$name', (transport) => {
    it.each(CASES)('$name', (c) => conforms(t, transport, c));

    if (!transport.live) {
      // Plain JSON answers once: a live subscription asking for JSON only is refused (GraphQL over
      // HTTP's 406, naming the type it could have streamed), and nothing is left subscribed.
      it('refuses a live subscription that asks for JSON only: 406, Accept: text/event-stream', async () => {
        const response = await fetch(`${t.stack.url}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${await testToken({ vaults: [VAULT] })}`,
          },
          body: JSON.stringify({ query: LIVE }),
        });
        expect(response.status).toBe(406);
        expect(response.headers.get('accept')).toBe('text/event-stream');
        await waitForSubscribers(t.stack.app, VAULT, 0);
      });
      return;
    }

    it('delivers a live event through the hub, counting the subscription while it runs', async () => {
      const token = await testToken({ vaults: [VAULT] });
      const gauge = transport.gauge!;
      const [gaugeBefore, before] = [await liveGauge(t, gauge), await counters(t)];
      const live = transport.live!(token, LIVE);
      await waitForSubscribers(t.stack.app, VAULT, 1);
      await expect.poll(() => liveGauge(t, gauge)).toBe(gaugeBefore + 1);
      const event = notification();
      expect((await postNotification(t.stack.url, event)).status).toBe(200);
      await vi.waitFor(() =>
        expect(live.results).toEqual([{ data: { cardEvents: { id: event.id, type: 'UPDATED' } } }]),
      );
      live.close();
      await waitForSubscribers(t.stack.app, VAULT, 0);
      await expect.poll(() => liveGauge(t, gauge)).toBe(gaugeBefore);
      expect(movesBetween(before, await counters(t))).toEqual({
        'operations anonymous subscription success': 1,
      });
    });

    it(
      transport.name === 'graphql-ws'
        ? "ends a live subscription at its token's exp: the socket closes with 4403"
        : "ends a live subscription at its token's exp: one token-expired result, then complete",
      async () => {
        const token = await testToken({ vaults: [VAULT], expiresInS: 3 });
        const expiresAt = decodeJwt(token).exp! * 1000;
        const gauge = transport.gauge!;
        const [gaugeBefore, before] = [await liveGauge(t, gauge), await counters(t)];
        const live = transport.live!(token, LIVE);
        await waitForSubscribers(t.stack.app, VAULT, 1);
        expect(Date.now()).toBeLessThan(expiresAt);
        await vi.waitFor(() => expect(live.ended).toBeDefined(), { timeout: 6_000 });
        if (transport.tokenCheck === 'connection-init') {
          expect(live).toMatchObject({ results: [], ended: { how: { closed: 4403 } } });
        } else {
          expect(live).toMatchObject({
            results: [
              {
                errors: [
                  {
                    message: 'The client token has expired: subscribe again with a fresh token',
                    code: 'token-expired',
                  },
                ],
              },
            ],
            ended: { how: 'complete' },
          });
        }
        expect(live.ended!.at).toBeGreaterThanOrEqual(expiresAt);
        expect(live.ended!.at).toBeLessThan(expiresAt + 1_500);
        await waitForSubscribers(t.stack.app, VAULT, 0);
        await expect.poll(() => liveGauge(t, gauge)).toBe(gaugeBefore);
        // `cardgraph_graphql_errors_total` counts errors of results: graphql-ws's end is a close, no result.
        expect(movesBetween(before, await counters(t))).toEqual({
          'operations anonymous subscription success': 1,
          ...(transport.tokenCheck === 'connection-init' ? {} : { 'errors anonymous token-expired': 1 }),
        });
      },
    );
  });
});

describe('PERSISTED_OPERATIONS=require, five roads', () => {
  const t = useStack({ PERSISTED_OPERATIONS: 'require' });
  const transports = transportsOf(t);
  describe.each(transports)('$name', (transport) => {
    it.each(REQUIRE_CASES)('$name', (c) => conforms(t, transport, c));
  });
});
