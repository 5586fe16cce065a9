import { parse } from 'graphql';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { operationCost } from '../../src/plugins/operation-cost.ts';
import { schema } from '../../src/schema/index.ts';
import { useStack } from '../support/fixtures.ts';

/**
 * The operation cost is remembered per parsed document when it reads no variable
 * (src/plugins/operation-cost.ts); a cost that reads variables is computed for every request with
 * that request's variables, and a remembered cost never lets through what the limits refuse.
 */

const JOINED_PAGE = (first: string) => `query Page${first.startsWith('$') ? '($n: Int)' : ''} {
  cardEvents(first: ${first}) { __typename ... on QueryCardEventsSuccess {
    data { edges { node { id card { __typename } } } } } } }`;

describe('operationCost readsVariables', () => {
  it('is false for literal page sizes and variables the cost does not read, true otherwise', () => {
    const cost = (document: string, variables: Record<string, unknown> = {}) =>
      operationCost(schema, parse(document), undefined, variables);
    expect(cost(JOINED_PAGE('50'))).toEqual({ cost: 250, upstreamCalls: 50, readsVariables: false });
    expect(cost(JOINED_PAGE('$n'), { n: 50 })).toEqual({
      cost: 250,
      upstreamCalls: 50,
      readsVariables: true,
    });
    expect(
      cost('query ($id: String!) { accountUpdaterCard(cardId: $id) { __typename } }', { id: 'x' }),
    ).toEqual({ cost: 1, upstreamCalls: 1, readsVariables: false });
    expect(cost('query ($s: Boolean!) { viewer @skip(if: $s) { subject } }', { s: false })).toMatchObject({
      readsVariables: true,
    });
  });
});

describe('operation cost cache', () => {
  const t = useStack();

  async function post(query: string, variables?: Record<string, unknown>) {
    const response = await request(`${t.stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await t.stack.token()}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.body.json()) as { errors?: { extensions?: { code?: string } }[] };
    return { status: response.statusCode, codes: (body.errors ?? []).map((e) => e.extensions?.code) };
  }

  it('computes a variable-dependent cost per request, after a cheap request of the same document', async () => {
    const document = JOINED_PAGE('$n');
    expect(await post(document, { n: 10 })).toEqual({ status: 200, codes: [] });
    expect(await post(document, { n: 101 })).toEqual({ status: 400, codes: ['operation-too-expensive'] });
    expect(await post(document, { n: 10 })).toEqual({ status: 200, codes: [] });
  });

  it('refuses an over-budget document every time, and serves a cheap one every time', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await post(JOINED_PAGE('101'))).toEqual({ status: 400, codes: ['operation-too-expensive'] });
      expect(await post(JOINED_PAGE('100'))).toEqual({ status: 200, codes: [] });
    }
  });
});
