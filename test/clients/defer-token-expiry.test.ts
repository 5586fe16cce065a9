import { print } from 'graphql';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { CreateCardOfPan, DeferredAttributes } from '../support/documents.ts';
import { BULK_TEST_PANS, member, testToken, useStack } from '../support/fixtures.ts';
import { openSse, readEvents } from '../support/sse.ts';

/**
 * A deferred part is bound by the client token's lifetime like a subscription: an answer whose
 * deferred fields are still pending at the token's `exp` ends then, with one last `token-expired`
 * result, and the pending parts are never sent.
 */

/**
 * The sandbox's card attributes lookup outlives the token: its deferred part is still pending at exp.
 * Each test's card has a BIN of its own (BULK_TEST_PANS holds five per BIN): the gateway shares a
 * lookup in flight, so a second card of the same BIN would get its attributes when the first
 * test's lookup answers, before its own token's exp.
 */
const SLOW_LOOKUP_MS = 7_000;

const TOKEN_EXPIRED = {
  message: 'The client token has expired: subscribe again with a fresh token',
  extensions: { code: 'token-expired', requestId: expect.any(String) },
};

describe('@defer and the client token’s lifetime', () => {
  // The stack's upstream timeout (2 s in tests) would end the lookup before the token: raised past it.
  const t = useStack({ UPSTREAM_TIMEOUT_MS: '10000' }, { cardAttributesDelayMs: SLOW_LOOKUP_MS });

  it('SSE: the first part, then at exp one token-expired result and complete; the deferred part never comes', async () => {
    const created = await t.stack.execute(CreateCardOfPan, { pan: BULK_TEST_PANS[15]! }, t.vault1Token);
    const { cardId, bin } = member(created.data?.createCard, 'MutationCreateCardSuccess').data;
    const token = await testToken({ expiresInS: 4 });
    const expiresAt = decodeJwt(token).exp! * 1000;
    const stream = await openSse(
      t.stack.url,
      { query: print(DeferredAttributes), variables: { cardId } },
      token,
    );
    expect(stream.status).toBe(200);
    const events = await readEvents(stream, Number.POSITIVE_INFINITY, 6_000);
    const endedAt = Date.now();
    expect(
      events.map((event) => ({ event: event.event, data: event.data && JSON.parse(event.data) })),
    ).toEqual([
      {
        event: 'next',
        data: { data: { card: { __typename: 'QueryCardSuccess', data: { cardId, bin } } }, hasNext: true },
      },
      { event: 'next', data: { errors: [TOKEN_EXPIRED] } },
      { event: 'complete', data: '' },
    ]);
    expect(endedAt).toBeGreaterThanOrEqual(expiresAt);
    expect(endedAt).toBeLessThan(expiresAt + 1_500);
  });

  it('graphql-ws: the first part, then at exp the socket closes with 4403; the deferred part never comes', async () => {
    const created = await t.stack.execute(CreateCardOfPan, { pan: BULK_TEST_PANS[20]! }, t.vault1Token);
    const { cardId, bin } = member(created.data?.createCard, 'MutationCreateCardSuccess').data;
    const token = await testToken({ expiresInS: 4 });
    const expiresAt = decodeJwt(token).exp! * 1000;
    const client = t.stack.wsClient(token);
    const results: unknown[] = [];
    const ended = (async () => {
      for await (const result of client.iterate({ query: print(DeferredAttributes), variables: { cardId } }))
        results.push(result);
    })();
    await expect(ended).rejects.toMatchObject({ code: 4403 });
    const endedAt = Date.now();
    expect(results).toEqual([
      { data: { card: { __typename: 'QueryCardSuccess', data: { cardId, bin } } }, hasNext: true },
    ]);
    expect(endedAt).toBeGreaterThanOrEqual(expiresAt);
    expect(endedAt).toBeLessThan(expiresAt + 1_500);
  });
});
