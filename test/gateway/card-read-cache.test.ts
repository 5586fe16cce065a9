import { describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { member, useStack } from '../support/fixtures.ts';

/**
 * Card reads cached until the card changes (issue 13 "Reads cached until the card changes"): a
 * repeated read of a card is answered with no upstream call until an `au_card.*` event of that card
 * arrives, and the read after it is fresh.
 */
const Enrol = graphql(`
  mutation IT13_Enrol($input: EnrollAccountUpdaterCardInput!) {
    enrollAccountUpdaterCard(input: $input) {
      __typename
      ... on MutationEnrollAccountUpdaterCardSuccess { data { cardId state } }
      ... on Error { code message }
    }
  }
`);

const ReadCard = graphql(`
  query IT13_ReadCard($cardId: String!) {
    accountUpdaterCard(cardId: $cardId) {
      __typename
      ... on QueryAccountUpdaterCardSuccess { data { cardId state event } }
      ... on Error { code message }
    }
  }
`);

describe('card read cache', () => {
  // The enrolment notification comes 3 s after the enrolment: time for the reads before it.
  const t = useStack({ SANDBOX_WEBHOOK_DELAY_MS: '3000' });

  const cardReads = (cardId: string) =>
    t.stack
      .sandbox!.requests()
      .filter((r) => r.method === 'GET' && r.path === `/account-updater/cards/${cardId}`).length;
  const read = async (cardId: string) =>
    member(
      (await t.stack.execute(ReadCard, { cardId }, t.vault1Token)).data?.accountUpdaterCard,
      'QueryAccountUpdaterCardSuccess',
    ).data;

  it('serves a repeated read with 0 upstream calls until the card event arrives, then reads it fresh', async () => {
    const enrolled = member(
      (
        await t.stack.execute(
          Enrol,
          { input: { name: 'Ada Lovelace', number: '4111111111111111', expMonth: 12, expYear: 30 } },
          t.vault1Token,
        )
      ).data?.enrollAccountUpdaterCard,
      'MutationEnrollAccountUpdaterCardSuccess',
    ).data;
    expect(enrolled.state).toBe('ENROLLING');
    const { cardId } = enrolled;

    expect(await read(cardId)).toEqual({ cardId, state: 'ENROLLING', event: null });
    expect(cardReads(cardId)).toBe(1);
    for (let i = 0; i < 3; i++)
      expect(await read(cardId)).toEqual({ cardId, state: 'ENROLLING', event: null });
    expect(cardReads(cardId)).toBe(1);

    // The sandbox enrols the card and sends au_card.enrolled; the event drops the cached read.
    await expect
      .poll(async () => (await read(cardId)).state, { timeout: 15_000, interval: 200 })
      .toBe('ENROLLED');
    const readsAfterEvent = cardReads(cardId);
    expect(readsAfterEvent).toBe(2);
    expect(await read(cardId)).toEqual({ cardId, state: 'ENROLLED', event: 'ENROLLED' });
    expect(cardReads(cardId)).toBe(readsAfterEvent);
  });
});
