import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange } from '@urql/core';
import { print } from 'graphql';
import { meros } from 'meros/browser';
import { describe, expect, it } from 'vitest';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import { possibleTypes } from '../../src/client/generated/index.ts';
import { CreateCardOfPan, DeferredAttributes } from '../support/documents.ts';
import { BULK_BIN_BRANDS, BULK_TEST_PANS, member, postGraphql, useStack } from '../support/fixtures.ts';
import { openSse, readEvents } from '../support/sse.ts';
import { sampleValue, scrapeMetrics } from '../support/telemetry.ts';

/** How long the sandbox's card attributes lookup waits before it answers in these tests. */
const SLOW_LOOKUP_MS = 300;

/** A part of a multipart answer with the time it was read (ms on `performance.now()`). */
type TimedPart = { at: number; body: Record<string, unknown> };

describe('@defer over multipart HTTP, SSE and graphql-ws', () => {
  const t = useStack({}, { cardAttributesDelayMs: SLOW_LOOKUP_MS });

  /** Creates a card of `pan` and answers its id and BIN (its attributes not read, so not cached). */
  async function createCard(pan: string): Promise<{ cardId: string; bin: string }> {
    const answer = await t.stack.execute(CreateCardOfPan, { pan }, t.vault1Token);
    return member(answer.data?.createCard, 'MutationCreateCardSuccess').data as never;
  }

  /** POSTs the deferred query with `accept`, answering the fetch Response. */
  function postDeferred(cardId: string, accept: string): Promise<Response> {
    return fetch(`${t.stack.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept,
        authorization: `Bearer ${t.vault1Token}`,
      },
      body: JSON.stringify({ query: print(DeferredAttributes), variables: { cardId } }),
    });
  }

  it('multipart (Apollo Client’s Accept): the card in the first part, ≥ 50 ms before the deferred attributes', async () => {
    const { cardId, bin } = await createCard(BULK_TEST_PANS[0]!);
    const response = await postDeferred(cardId, 'multipart/mixed;deferSpec=20220824');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('multipart/mixed; boundary="-"');
    const parts = await meros<Record<string, unknown>>(response);
    if (parts instanceof Response) throw new Error('not a multipart answer');
    const timed: TimedPart[] = [];
    for await (const part of parts) timed.push({ at: performance.now(), body: part.body as never });

    expect(timed.map((part) => part.body)).toEqual([
      {
        data: { card: { __typename: 'QueryCardSuccess', data: { cardId, bin } } },
        hasNext: true,
      },
      {
        incremental: [
          {
            data: { attributes: { brand: BULK_BIN_BRANDS[bin.slice(0, 6)], cardType: 'CREDIT' } },
            path: ['card', 'data'],
            label: 'attributes',
          },
        ],
        hasNext: false,
      },
    ]);
    expect(timed.at(-1)!.at - timed[0]!.at).toBeGreaterThanOrEqual(50);
  });

  /** What each BIN of the bulk cards answers as `attributes { brand cardType }` (all credit cards). */
  const attributesOf = (bin: string) => ({ brand: BULK_BIN_BRANDS[bin.slice(0, 6)], cardType: 'CREDIT' });

  it('JSON only, or no Accept: one JSON answer with the deferred attributes merged in place', async () => {
    const { cardId, bin } = await createCard(BULK_TEST_PANS[5]!);
    const expected = {
      data: {
        card: { __typename: 'QueryCardSuccess', data: { cardId, bin, attributes: attributesOf(bin) } },
      },
    };
    const leanRequests = async () =>
      sampleValue(
        (await scrapeMetrics(t.stack.metricsUrl)).samples,
        'cardgraph_graphql_http_requests_total',
        {
          path: 'lean',
        },
      );
    const leanBefore = await leanRequests();
    for (const [accept, contentType] of [
      ['application/json', 'application/json; charset=utf-8'],
      ['application/graphql-response+json', 'application/graphql-response+json; charset=utf-8'],
      // What fetch sends without an Accept of the caller's: still JSON, never an unasked-for multipart.
      ['*/*', 'application/json; charset=utf-8'],
    ]) {
      const answer = await postDeferred(cardId, accept!);
      expect([accept, answer.status, answer.headers.get('content-type')]).toEqual([accept, 200, contentType]);
      expect(await answer.json()).toEqual(expected);
    }
    // JSON requests stay on the lean HTTP path (src/server/graphql-http.ts), which merges them too.
    expect(await leanRequests()).toBe(leanBefore + 3);
  });

  it('SSE (`Accept: text/event-stream`): one `next` event per part, then `complete`', async () => {
    const { cardId, bin } = await createCard(BULK_TEST_PANS[10]!);
    const stream = await openSse(
      t.stack.url,
      { query: print(DeferredAttributes), variables: { cardId } },
      t.vault1Token,
    );
    expect(stream.status).toBe(200);
    const events = await readEvents(stream);
    expect(
      events.map((event) => ({ event: event.event, data: event.data && JSON.parse(event.data) })),
    ).toEqual([
      {
        event: 'next',
        data: { data: { card: { __typename: 'QueryCardSuccess', data: { cardId, bin } } }, hasNext: true },
      },
      {
        event: 'next',
        data: {
          incremental: [
            { data: { attributes: attributesOf(bin) }, path: ['card', 'data'], label: 'attributes' },
          ],
          hasNext: false,
        },
      },
      { event: 'complete', data: '' },
    ]);
  });

  it('graphql-ws: one `next` message per part', async () => {
    const { cardId, bin } = await createCard(BULK_TEST_PANS[15]!);
    const client = t.stack.wsClient(t.vault1Token);
    const results: unknown[] = [];
    for await (const result of client.iterate({ query: print(DeferredAttributes), variables: { cardId } })) {
      results.push(result);
    }
    expect(results).toEqual([
      { data: { card: { __typename: 'QueryCardSuccess', data: { cardId, bin } } }, hasNext: true },
      {
        incremental: [
          { data: { attributes: attributesOf(bin) }, path: ['card', 'data'], label: 'attributes' },
        ],
        hasNext: false,
      },
    ]);
  });

  it('Apollo Client 4 (Defer20220824Handler): the card streams first, the attributes complete it', async () => {
    const { cardId, bin } = await createCard(BULK_TEST_PANS[20]!);
    const client = new ApolloClient({
      link: new HttpLink({
        uri: `${t.stack.url}/graphql`,
        headers: { authorization: `Bearer ${t.vault1Token}` },
      }),
      cache: new InMemoryCache({ possibleTypes }),
      incrementalHandler: new Defer20220824Handler(),
    });
    const seen: { at: number; dataState: string; data: unknown }[] = [];
    const subscription = client
      .watchQuery({ query: DeferredAttributes, variables: { cardId } })
      .subscribe((result) => {
        if (!result.loading || result.dataState === 'streaming')
          seen.push({ at: performance.now(), dataState: result.dataState, data: result.data });
      });
    try {
      await expect.poll(() => seen.at(-1)?.dataState, { timeout: 5_000 }).toBe('complete');
    } finally {
      subscription.unsubscribe();
    }
    const card = (attributes?: object) => ({
      card: { __typename: 'QueryCardSuccess', data: { __typename: 'Card', cardId, bin, ...attributes } },
    });
    expect(seen.map(({ dataState, data }) => ({ dataState, data }))).toEqual([
      { dataState: 'streaming', data: card() },
      {
        dataState: 'complete',
        data: card({ attributes: { __typename: 'CardAttributes', ...attributesOf(bin) } }),
      },
    ]);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(50);
  });

  it('urql (fetchExchange): multipart by default, SSE when asked; the partial result, then the whole', async () => {
    const bins = [BULK_TEST_PANS[1]!, BULK_TEST_PANS[6]!];
    for (const [index, accept] of [undefined, 'text/event-stream'].entries()) {
      const { cardId, bin } = await createCard(bins[index]!);
      const client = new Client({
        url: `${t.stack.url}/graphql`,
        fetchOptions: {
          headers: { authorization: `Bearer ${t.vault1Token}`, ...(accept ? { accept } : {}) },
        },
        exchanges: [fetchExchange],
      });
      const seen: { hasNext: boolean; data: unknown }[] = [];
      const { unsubscribe } = client
        .query(DeferredAttributes, { cardId })
        .subscribe((result) => seen.push({ hasNext: result.hasNext, data: result.data }));
      try {
        await expect.poll(() => seen.at(-1)?.hasNext, { timeout: 5_000 }).toBe(false);
      } finally {
        unsubscribe();
      }
      const card = (attributes?: object) => ({
        card: { __typename: 'QueryCardSuccess', data: { cardId, bin, ...attributes } },
      });
      expect(seen).toEqual([
        { hasNext: true, data: card() },
        { hasNext: false, data: card({ attributes: attributesOf(bin) }) },
      ]);
    }
  });

  it('a deferred field’s error reaches the client, the access line and the error metrics', async () => {
    const { cardId, bin } = await createCard(BULK_TEST_PANS[11]!);
    // A token without the card attributes scope: the card reads, its deferred attributes are refused.
    const token = await t.stack.token({
      scopes: UPSTREAM_SCOPES.filter((scope) => scope !== 'card-attributes:basic'),
    });
    const labels = { operation: 'other', code: 'forbidden' };
    const before = sampleValue(
      (await scrapeMetrics(t.stack.metricsUrl)).samples,
      'cardgraph_graphql_errors_total',
      labels,
    );
    const operationsBefore = sampleValue(
      (await scrapeMetrics(t.stack.metricsUrl)).samples,
      'cardgraph_graphql_operations_total',
      { operation: 'other', type: 'query', outcome: 'error' },
    );
    const response = await fetch(`${t.stack.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'multipart/mixed;deferSpec=20220824',
        authorization: `Bearer ${token}`,
        'x-request-id': 'defer-forbidden',
      },
      body: JSON.stringify({ query: print(DeferredAttributes), variables: { cardId } }),
    });
    const parts = await meros<Record<string, unknown>>(response);
    if (parts instanceof Response) throw new Error('not a multipart answer');
    const bodies: unknown[] = [];
    for await (const part of parts) bodies.push(part.body);
    expect(bodies).toEqual([
      { data: { card: { __typename: 'QueryCardSuccess', data: { cardId, bin } } }, hasNext: true },
      {
        incremental: [
          {
            data: { attributes: null },
            path: ['card', 'data'],
            label: 'attributes',
            errors: [
              {
                message: 'Not authorized: Not authorized to resolve Card.attributes',
                path: ['card', 'data', 'attributes'],
                locations: [{ line: 9, column: 11 }],
                extensions: expect.objectContaining({ code: 'forbidden', requestId: 'defer-forbidden' }),
              },
            ],
          },
        ],
        hasNext: false,
      },
    ]);
    await expect
      .poll(
        () =>
          readFileSync(t.stack.logFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { msg: string; reqId?: string; errorCodes?: string[] })
            .find((line) => line.msg === 'request' && line.reqId === 'defer-forbidden')?.errorCodes,
      )
      .toEqual(['forbidden']);
    const after = await scrapeMetrics(t.stack.metricsUrl);
    expect(sampleValue(after.samples, 'cardgraph_graphql_errors_total', labels)).toBe(before + 1);
    expect(
      sampleValue(after.samples, 'cardgraph_graphql_operations_total', {
        operation: 'other',
        type: 'query',
        outcome: 'error',
      }),
    ).toBe(operationsBefore + 1);
  });

  it('the cost of deferred fields counts: an expensive deferred fragment refuses the operation before any part', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `CRDcost${String(i).padStart(18, '0')}`);
    const answer = await postGraphql(
      t.stack.url,
      {
        query: `query CL_DF_Cost($ids: [ID!]!) { viewer { subject } ... @defer { nodes(ids: $ids) { ... on Card { attributes { brand } } } } }`,
        variables: { ids },
      },
      t.vault1Token,
    );
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          /^The operation may make \d+ upstream calls, more than the budget of 100/,
        ),
        extensions: expect.objectContaining({ code: 'operation-too-expensive' }),
      }),
    ]);
  });

  it('the depth limit covers deferred fragments: too deep a deferred part refuses the operation before any part', async () => {
    // `ofType` nested inside the deferred fragment so graphql-armor measures depth 13 (the limit is 12).
    const deepType = `fields { type { ${'ofType { '.repeat(8)}name${' }'.repeat(8)} } }`;
    const response = await postGraphql(
      t.stack.url,
      {
        query: `query CL_DF_Depth { viewer { subject } ... @defer { __type(name: "Query") { ${deepType} } } }`,
      },
      t.vault1Token,
    );
    expect(response.body).toEqual({
      errors: [
        expect.objectContaining({
          message: 'Syntax Error: Query depth limit of 12 exceeded, found 13.',
          extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }),
        }),
      ],
    });
  });

  it('Apollo Client’s automatic persisted queries carry a deferred query: the hash alone streams its parts', async () => {
    const { cardId, bin } = await createCard(BULK_TEST_PANS[16]!);
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const sent: { query: boolean }[] = [];
    const apollo = () =>
      new ApolloClient({
        link: ApolloLink.from([
          new PersistedQueryLink({ sha256 }),
          new HttpLink({
            uri: `${t.stack.url}/graphql`,
            headers: { authorization: `Bearer ${t.vault1Token}` },
            fetch: (input, init) => {
              sent.push({ query: typeof init?.body === 'string' && 'query' in JSON.parse(init.body) });
              return fetch(input, init);
            },
          }),
        ]),
        cache: new InMemoryCache({ possibleTypes }),
        incrementalHandler: new Defer20220824Handler(),
      });
    const expected = {
      card: {
        __typename: 'QueryCardSuccess',
        data: {
          __typename: 'Card',
          cardId,
          bin,
          attributes: { __typename: 'CardAttributes', ...attributesOf(bin) },
        },
      },
    };
    const first = await apollo().query({ query: DeferredAttributes, variables: { cardId } });
    expect(first.data).toEqual(expected);
    // The hash alone missed, then the query was stored.
    expect(sent).toEqual([{ query: false }, { query: true }]);
    const second = await apollo().query({ query: DeferredAttributes, variables: { cardId } });
    expect(second.data).toEqual(expected);
    expect(sent.slice(2)).toEqual([{ query: false }]);
  });
});
