import { readFileSync } from 'node:fs';
import { type ExecutionResult, type GraphQLFormattedError, print } from 'graphql';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { EnrolCard } from '../support/documents.ts';
import {
  BULK_TEST_PANS,
  collect,
  member,
  type Stack,
  startStack,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { openSse, readEvents } from '../support/sse.ts';

/**
 * Issue 10, class 3 ("upstream amplification"): `nodes(ids:)` with thousands of forged ids, and a
 * history page whose size comes from a variable joined with `card`, must not turn into thousands of
 * upstream GETs. The ids are capped (`too-many-ids`), the cost is computed with the variables and
 * refused before execution (`operation-too-expensive`) on HTTP, SSE and graphql-ws alike, the
 * upstream calls of one operation are counted against its budget (`upstream-budget-exceeded`), and
 * the cost never refuses a page size the resolver serves (the shipped CardEventHistory at its
 * largest page).
 */

const VAULT1 = 'tntsandbox1';

const ManyNodes = graphql(`
  query HD_UC_ManyNodes($ids: [ID!]!) {
    nodes(ids: $ids) { __typename id }
  }
`);

const HistoryWithCards = graphql(`
  query HD_UC_HistoryWithCards($first: Int) {
    cardEvents(first: $first) {
      __typename
      ... on QueryCardEventsSuccess {
        data { edges { node { id card { __typename ... on CardEventCardSuccess { data { cardId } } } } } }
      }
      ...ErrorFields
    }
  }
`);

const FourCards = graphql(`
  mutation HD_UC_FourCards($input: CreateCardInput!) {
    a: createCard(input: $input) { __typename ... on UpstreamError { code retryable } ... on MutationCreateCardSuccess { data { cardId } } }
    b: createCard(input: $input) { __typename ... on UpstreamError { code retryable } ... on MutationCreateCardSuccess { data { cardId } } }
    c: createCard(input: $input) { __typename ... on UpstreamError { code retryable } ... on MutationCreateCardSuccess { data { cardId } } }
    d: createCard(input: $input) { __typename ... on UpstreamError { code retryable } ... on MutationCreateCardSuccess { data { cardId } } }
  }
`);

/** 3,000 well-formed but forged Relay IDs of the caller's vault. */
const FORGED_IDS = Array.from({ length: 3_000 }, (_, i) =>
  Buffer.from(`AccountUpdaterCard:${VAULT1}:CRD${String(i).padStart(22, '0')}`).toString('base64'),
);

type Errors = ExecutionResult['errors'];
const codes = (errors: Errors) => (errors ?? []).map((error) => error.extensions?.code);

/** A stack with `env` for the tests of one describe block, and the transports to reach it. */
function gateway(env: Record<string, string>) {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack(env);
    token = await stack.token({ vaults: [VAULT1] });
  });
  afterAll(() => stack.stop());

  /** Upstream requests (token endpoint aside) the sandbox answered while `work` ran. */
  async function upstreamCallsDuring<T>(work: () => Promise<T>) {
    const before = stack.sandbox!.requests().length;
    const result = await work();
    const calls = stack.sandbox!.requests().slice(before);
    return { result, calls: calls.filter((call) => call.path !== '/oauth/token') };
  }

  /** Runs `document` over graphql-ws and resolves with its one result. */
  function overWebSocket(query: string, variables: Record<string, unknown>): Promise<ExecutionResult> {
    const client = stack.wsClient(token);
    return new Promise((resolve, reject) => {
      let result: ExecutionResult = {};
      client.subscribe(
        { query, variables },
        {
          next: (next) => (result = next as ExecutionResult),
          error: reject,
          complete: () => resolve(result),
        },
      );
    });
  }

  /**
   * Runs `document` over graphql-ws, expecting it refused before it runs: resolves with the errors
   * of the `error` message (graphql-ws's answer to a request error), rejects on a result or on
   * `complete`.
   */
  function refusedOverWebSocket(
    query: string,
    variables: Record<string, unknown>,
  ): Promise<readonly GraphQLFormattedError[]> {
    const client = stack.wsClient(token);
    return new Promise((resolve, reject) => {
      client.subscribe(
        { query, variables },
        {
          next: (next) =>
            reject(new Error(`expected an error message, got a result: ${JSON.stringify(next)}`)),
          error: (error) =>
            Array.isArray(error) ? resolve(error as GraphQLFormattedError[]) : reject(error as Error),
          complete: () => reject(new Error('expected an error message, got complete')),
        },
      );
    });
  }

  /** Runs `document` over SSE (POST, Accept: text/event-stream) and resolves with its first result. */
  async function overSse(query: string, variables: Record<string, unknown>): Promise<ExecutionResult> {
    const stream = await openSse(stack.url, { query, variables }, token);
    const next = (await readEvents(stream)).find((event) => event.event === 'next');
    return JSON.parse(next!.data) as ExecutionResult;
  }

  return {
    get stack() {
      return stack;
    },
    get token() {
      return token;
    },
    upstreamCallsDuring,
    overWebSocket,
    refusedOverWebSocket,
    overSse,
  };
}

describe('default limits (NODES_MAX_IDS=100, UPSTREAM_CALL_BUDGET=100)', () => {
  const g = gateway({});

  it('caps nodes(ids:): 3,000 forged ids answer too-many-ids with no upstream call, on every transport', async () => {
    const http = await g.upstreamCallsDuring(() => g.stack.execute(ManyNodes, { ids: FORGED_IDS }, g.token));
    expect(http.result.data).toEqual({ nodes: null });
    expect(codes(http.result.errors)).toEqual(['too-many-ids']);
    expect(http.result.errors?.[0]?.message).toBe('nodes accepts at most 100 ids, 3000 were sent');
    expect(http.calls).toEqual([]);

    // graphql-ws refuses a 3,000-id message by size (WS_MAX_PAYLOAD_BYTES); 150 still exceed the cap.
    const ws = await g.upstreamCallsDuring(() =>
      g.overWebSocket(print(ManyNodes), { ids: FORGED_IDS.slice(0, 150) }),
    );
    expect(ws.result.data).toEqual({ nodes: null });
    expect(codes(ws.result.errors)).toEqual(['too-many-ids']);
    expect(ws.calls).toEqual([]);

    const sse = await g.upstreamCallsDuring(() => g.overSse(print(ManyNodes), { ids: FORGED_IDS }));
    expect(sse.result.data).toEqual({ nodes: null });
    expect(codes(sse.result.errors)).toEqual(['too-many-ids']);
    expect(sse.calls).toEqual([]);
  });

  it('refuses cardEvents(first: $n) joined with card before any upstream GET, on every transport', async () => {
    const variables = { first: 500 };
    const http = await g.upstreamCallsDuring(() => g.stack.execute(HistoryWithCards, variables, g.token));
    expect(http.result.status).toBe(400);
    expect(http.result.data).toBeUndefined();
    expect(codes(http.result.errors)).toEqual(['operation-too-expensive']);
    expect(http.result.errors?.[0]).toMatchObject({
      message:
        'The operation may make 500 upstream calls, more than the budget of 100: ask for smaller pages (first), fewer ids or fewer joined fields',
      extensions: { upstreamCalls: 500 },
    });
    expect(http.calls).toEqual([]);

    // graphql-ws answers a refusal before execution with an `error` message (docs/transports.md).
    const ws = await g.upstreamCallsDuring(() => g.refusedOverWebSocket(print(HistoryWithCards), variables));
    expect(codes(ws.result as Errors)).toEqual(['operation-too-expensive']);
    expect(ws.result[0]).toMatchObject({
      message:
        'The operation may make 500 upstream calls, more than the budget of 100: ask for smaller pages (first), fewer ids or fewer joined fields',
      extensions: { code: 'operation-too-expensive', upstreamCalls: 500 },
    });
    expect(ws.calls).toEqual([]);

    const sse = await g.upstreamCallsDuring(() => g.overSse(print(HistoryWithCards), variables));
    expect(codes(sse.result.errors)).toEqual(['operation-too-expensive']);
    expect(sse.calls).toEqual([]);

    // The variable decides: one page more than the budget is refused, the budget itself is served.
    const over = await g.stack.execute(HistoryWithCards, { first: 101 }, g.token);
    expect(over.errors?.[0]?.extensions).toMatchObject({
      code: 'operation-too-expensive',
      upstreamCalls: 101,
    });
    const within = await g.stack.execute(HistoryWithCards, { first: 100 }, g.token);
    expect(within.errors).toBeUndefined();
    expect(within.data?.cardEvents?.__typename).toBe('QueryCardEventsSuccess');
  });

  it('serves the shipped CardEventHistory at the largest page the resolver allows (first: 500)', async () => {
    const operations = readFileSync(new URL('../../src/client/operations.graphql', import.meta.url), 'utf8');
    for (const first of [150, 500, 10_000]) {
      const response = await request(`${g.stack.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${g.token}` },
        body: JSON.stringify({ query: operations, operationName: 'CardEventHistory', variables: { first } }),
      });
      const body = (await response.body.json()) as ExecutionResult<{ cardEvents: { __typename: string } }>;
      expect(response.statusCode).toBe(200);
      expect(body.errors).toBeUndefined();
      expect(body.data?.cardEvents.__typename).toBe('QueryCardEventsSuccess');
    }
  });
});

describe('UPSTREAM_CALL_BUDGET=3', () => {
  const g = gateway({ UPSTREAM_CALL_BUDGET: '3' });

  it('computes the cost with variables: nodes within the cap but over the upstream budget is refused before execution', async () => {
    const ids = FORGED_IDS.slice(0, 4);
    const http = await g.upstreamCallsDuring(() => g.stack.execute(ManyNodes, { ids }, g.token));
    expect(http.result.status).toBe(400);
    expect(http.result.data).toBeUndefined();
    expect(http.result.errors).toMatchObject([
      {
        message:
          'The operation may make 4 upstream calls, more than the budget of 3: ask for smaller pages (first), fewer ids or fewer joined fields',
        extensions: { code: 'operation-too-expensive', cost: 4, upstreamCalls: 4 },
      },
    ]);
    expect(http.calls).toEqual([]);

    // Three ids fit: each is read (and, forged, answers null).
    const fitting = await g.stack.execute(ManyNodes, { ids: ids.slice(0, 3) }, g.token);
    expect(fitting.errors).toBeUndefined();
    expect(fitting.data).toEqual({ nodes: [null, null, null] });
  });

  it('counts upstream calls while the operation runs: the call beyond the budget fails with upstream-budget-exceeded', async () => {
    const { result, calls } = await g.upstreamCallsDuring(() =>
      g.stack.execute(FourCards, { input: { pan: '4242424242424242', expMonth: 12, expYear: 30 } }, g.token),
    );
    expect(result.errors).toBeUndefined();
    for (const alias of ['a', 'b', 'c'] as const) {
      member(result.data?.[alias], 'MutationCreateCardSuccess');
    }
    expect(result.data?.d).toEqual({
      __typename: 'UpstreamError',
      code: 'upstream-budget-exceeded',
      retryable: false,
    });
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual(
      Array.from({ length: 3 }, () => 'POST /card-interface/cards'),
    );
  });
});

const LiveCardsWithTokens = graphql(`
  subscription HD_UC_LiveCardsWithTokens {
    cardEvents {
      cardId
      card { __typename ... on CardEventCardSuccess { data { cardId networkToken { state } } } ...ErrorFields }
    }
  }
`);

describe('UPSTREAM_CALL_BUDGET=2 on a subscription', () => {
  const g = gateway({ UPSTREAM_CALL_BUDGET: '2' });

  it('gives every event the whole budget: three events each reading a network token all succeed', async () => {
    const client = g.stack.wsClient(g.token);
    const received = collect(client, LiveCardsWithTokens, {}, 3, 10_000);
    await waitForSubscribers(g.stack.app, VAULT1, 1);
    const cardIds: string[] = [];
    for (const pan of BULK_TEST_PANS.slice(0, 3)) {
      const result = await g.stack.execute(
        EnrolCard,
        { input: { name: 'Budget Holder', number: pan, expMonth: 12, expYear: 30 } },
        g.token,
      );
      cardIds.push(
        member(result.data?.enrollAccountUpdaterCard, 'MutationEnrollAccountUpdaterCardSuccess').data.cardId,
      );
    }
    const events = await received;
    expect(events).toHaveLength(3);
    for (const event of events) {
      expect(event.errors).toBeUndefined();
      // One network token read per event (none provisioned: null), three in all, beyond a budget of 2
      // had it been shared by the whole subscription.
      expect(event.data?.cardEvents.card).toMatchObject({
        __typename: 'CardEventCardSuccess',
        data: { networkToken: null },
      });
    }
    expect(events.map((event) => event.data?.cardEvents.cardId).sort()).toEqual([...cardIds].sort());
  });
});
