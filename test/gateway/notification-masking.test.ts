import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cvcSpellingArbitrary,
  digitsOf,
  networkTokenNotification,
  notification,
  panSpellingArbitrary,
  postGraphql,
  postNotification,
  type Stack,
  splitPanArbitrary,
  startStack,
  testToken,
} from '../support/fixtures.ts';

/**
 * Issue 26 item 1 on a running gateway (sqlite event log): signed notifications carrying card numbers
 * spelt every way the masker claims to read, in mapped members (failure reason, card id, event
 * name, network token state, token id, payment account reference) and in unmapped bodies (with
 * security codes under every spelling of their name, name/value pairs, JSON-encoded details at
 * several depths, numbers split over array items and sibling members), are answered 200 and come
 * back from history and `unmappedNotifications` without any of them; the log file and every file of
 * the data directory (the sqlite database, its WAL and shared memory) hold none either. The detector
 * ({@link digitsOf}) reads every digit of any script in order, so it is independent of the masker.
 */

const CARD_HISTORY = `
  query MaskingCardHistory { cardEvents(first: 500) { __typename
    ... on QueryCardEventsSuccess { data { edges { node { id cardId event failureReason type } } } } } }`;
const TOKEN_HISTORY = `
  query MaskingTokenHistory { networkTokenEvents(first: 500) { __typename
    ... on QueryNetworkTokenEventsSuccess {
      data { edges { node { id event stateName networkTokenId paymentAccountReference panAlias } } } } } }`;
const UNMAPPED = `
  query MaskingUnmapped { unmappedNotifications(first: 500) { __typename
    ... on QueryUnmappedNotificationsSuccess { data { edges { node { id reason body } } } } } }`;

let stack: Stack;
let stopped = false;
/** Every PAN a test sent, to look for in everything the gateway keeps, serves and logs. */
const sentPans: string[] = [];

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  if (!stopped) await stack.stop();
});

/** Every file of the stack's data directory, read whole (the sqlite database, `-wal` and `-shm`). */
function dataDirectoryFiles(): { name: string; text: string }[] {
  const dataDir = join(dirname(stack.logFile), 'data');
  return readdirSync(dataDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => ({
      name: entry.name,
      text: readFileSync(join(entry.parentPath, entry.name)).toString('utf8'),
    }));
}

/** The PANs of {@link sentPans} that `text` holds, however spelt. */
function leakedIn(text: string): string[] {
  const digits = digitsOf(text);
  return sentPans.filter((pan) => digits.includes(pan));
}

describe('card data in signed notifications on the gateway (issue 26 item 1)', () => {
  it('property: mapped card members holding a PAN are masked or dropped, in history and answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        panSpellingArbitrary(),
        fc.constantFrom('reason', 'error_code', 'failure_code'),
        async ({ pan, spelling }, reasonMember) => {
          sentPans.push(pan);
          const sent = [
            notification({
              event: 'cmp_au_card.enrollment_failed',
              cardId: `CRD${pan}`,
              details: { [reasonMember]: pan },
            }),
            notification({ event: `au_card.${spelling}`, cardId: `CRD${pan}` }),
            notification({ event: 'cmp_au_card.enrollment_failed', details: { [reasonMember]: spelling } }),
          ];
          for (const body of sent) {
            const answer = await postNotification(stack.url, body);
            expect(answer).toEqual({ status: 200, body: { data: { id: body.id, status: 'accepted' } } });
          }
        },
      ),
      { numRuns: 15 },
    );
    const history = await postGraphql(stack.url, { query: CARD_HISTORY }, await testToken());
    const text = JSON.stringify(history.body);
    expect(history.body).toMatchObject({ data: { cardEvents: { __typename: 'QueryCardEventsSuccess' } } });
    expect(leakedIn(text), text).toEqual([]);
    const nodes = (
      history.body.data as { cardEvents: { data: { edges: { node: Record<string, unknown> }[] } } }
    ).cardEvents.data.edges.map(({ node }) => node);
    expect(nodes).toHaveLength(45);
    // A card id or reason code holding a card number is dropped, never kept masked.
    expect(
      nodes.filter((node) => node.type === 'ENROLLMENT_FAILED').map((node) => node.failureReason),
    ).toEqual(Array.from({ length: 30 }, () => null));
    expect(
      nodes.map((node) => node.cardId).filter((cardId) => cardId !== 'CRDabcdefghijklmnopqrstuv'),
    ).toEqual(Array.from({ length: 30 }, () => null));
  });

  it('property: network token members holding a PAN are masked or dropped', async () => {
    await fc.assert(
      fc.asyncProperty(panSpellingArbitrary(), async ({ pan, spelling }) => {
        sentPans.push(pan);
        const body = networkTokenNotification({
          wire: 'documented',
          details: {
            state: `CARD_${pan}`,
            network_token_id: spelling,
            payment_account_reference: spelling,
          },
          envelope: { event: `network_token.${spelling}` },
        });
        const answer = await postNotification(stack.url, body);
        expect(answer).toEqual({ status: 200, body: { data: { id: body.id, status: 'accepted' } } });
      }),
      { numRuns: 15 },
    );
    const history = await postGraphql(stack.url, { query: TOKEN_HISTORY }, await testToken());
    const text = JSON.stringify(history.body);
    expect(leakedIn(text), text).toEqual([]);
    const nodes = (
      history.body.data as { networkTokenEvents: { data: { edges: { node: Record<string, unknown> }[] } } }
    ).networkTokenEvents.data.edges.map(({ node }) => node);
    expect(nodes.map((node) => node.stateName)).toEqual(Array.from({ length: 15 }, () => null));
  });

  it('property: unmapped bodies keep no PAN spelling and no security code, however sent', async () => {
    const sentCodes: { name: string; code: string }[] = [];
    await fc.assert(
      fc.asyncProperty(
        panSpellingArbitrary(),
        splitPanArbitrary(),
        splitPanArbitrary(),
        cvcSpellingArbitrary(),
        cvcSpellingArbitrary(),
        fc.integer({ min: 1, max: 3 }),
        async (spelled, inArray, inMembers, cvc, pair, depth) => {
          sentPans.push(spelled.pan, inArray.pan, inMembers.pan);
          sentCodes.push(cvc, pair);
          let details: unknown = {
            reason: spelled.spelling,
            digits: inArray.parts,
            ...Object.fromEntries(
              inMembers.parts.map((part, index) => [`part${'abcdefgh'[index]}`, String(part)]),
            ),
            [cvc.name]: cvc.code,
            fields: [{ name: pair.name, value: pair.code }],
          };
          for (let level = 0; level < depth; level++) details = JSON.stringify({ details });
          // No `id`: kept as unmapped (reason no-id) for tntsandbox1's operators.
          const body = notification({ envelope: { id: undefined, details } });
          const answer = await postNotification(stack.url, body);
          expect(answer.status).toBe(200);
          expect(answer.body.data?.status).toBe('unmapped');
        },
      ),
      { numRuns: 30 },
    );
    const operator = await testToken({ vaults: ['tntsandbox1'], scopes: ['operator:read'] });
    const listed = await postGraphql(stack.url, { query: UNMAPPED }, operator);
    const nodes = (
      listed.body.data as { unmappedNotifications: { data: { edges: { node: { body: string } }[] } } }
    ).unmappedNotifications.data.edges.map(({ node }) => node);
    expect(nodes).toHaveLength(30);
    const text = JSON.stringify(listed.body);
    expect(leakedIn(text), text).toEqual([]);
    for (const { body } of nodes) expect(() => JSON.parse(body)).not.toThrow();
    for (const { name, code } of sentCodes) {
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      // The code right after its name, with no `[redacted]` between: a code kept.
      expect(text).not.toMatch(new RegExp(`${escaped}(?:(?!\\[redacted\\])[^0-9]){0,60}${code}(?!\\d)`));
    }
  });

  it('keeps no PAN spelling in the log or in any file of the data directory, WAL included', {
    timeout: 60_000,
  }, async () => {
    expect(sentPans.length).toBeGreaterThan(100);
    const whileRunning = dataDirectoryFiles();
    expect(whileRunning.map((file) => file.name).sort()).toEqual(
      expect.arrayContaining([expect.stringMatching(/-wal$/)]),
    );
    for (const file of whileRunning) expect(leakedIn(file.text), file.name).toEqual([]);
    stopped = true;
    await stack.stop();
    for (const file of dataDirectoryFiles()) expect(leakedIn(file.text), file.name).toEqual([]);
    const log = readFileSync(stack.logFile, 'utf8');
    expect(log.length).toBeGreaterThan(0);
    expect(leakedIn(log)).toEqual([]);
  });
});
