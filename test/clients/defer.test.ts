import { performance } from 'node:perf_hooks';
import { print } from 'graphql';
import { meros } from 'meros/browser';
import { describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { BULK_BIN_BRANDS, BULK_TEST_PANS, member, useStack } from '../support/fixtures.ts';

/** How long the sandbox's card attributes lookup waits before it answers in these tests. */
const SLOW_LOOKUP_MS = 300;

const CreateCard = graphql(`
  mutation CL_DF_CreateCard($pan: String!) {
    createCard(input: { pan: $pan, cvc: "123", expMonth: 12, expYear: 30 }) {
      __typename
      ... on MutationCreateCardSuccess { data { cardId bin } }
      ... on Error { code message }
    }
  }
`);

const DeferredAttributes = graphql(`
  query CL_DF_DeferredAttributes($cardId: String!) {
    card(cardId: $cardId) {
      __typename
      ... on QueryCardSuccess {
        data {
          cardId
          bin
          ... @defer(label: "attributes") { attributes { brand cardType } }
        }
      }
      ... on Error { code message }
    }
  }
`);

/** A part of a multipart answer with the time it was read (ms on `performance.now()`). */
type TimedPart = { at: number; body: Record<string, unknown> };

describe('@defer over multipart HTTP, SSE and graphql-ws', () => {
  const t = useStack({}, { cardAttributesDelayMs: SLOW_LOOKUP_MS });

  /** Creates a card of `pan` and answers its id and BIN (its attributes not read, so not cached). */
  async function createCard(pan: string): Promise<{ cardId: string; bin: string }> {
    const answer = await t.stack.execute(CreateCard, { pan }, t.vault1Token);
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
});
