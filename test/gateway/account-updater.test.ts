import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { replacementPan, SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import type { It_Au_CheckMutation, MerchantInput } from '../generated/graphql.ts';
import { graphql } from '../generated/index.ts';
import { member, useStack } from '../support/fixtures.ts';
import { DOCUMENTED } from '../support/wire.ts';

/**
 * Account updater v1 through the gateway's GraphQL API over HTTP against the embedded sandbox:
 * `enrollAccountUpdaterCard`, `accountUpdaterCard`, `node(id)` and `checkAccountUpdaterCard` for every
 * test card of sandbox contract §5.1 to §5.3, brands of §7 and the merchant rules of the spec's "Enroll
 * request rules" (docs/gap-decisions.md "Account updater v1").
 */

// Shared by the documents below; the codegen inlines it into each of them.
graphql(`
  fragment IT_AU_CardFields on AccountUpdaterCard {
    id
    cardId
    vaultId
    name
    number
    expMonth
    expYear
    state
    event
    capabilities
    createdAt
    updatedAt
    merchant { serviceMerchantId subMerchantName subMerchantMid }
    billingAddress { name company address1 address2 city region country postalCode phone }
  }
`);

const Enrol = graphql(`
  mutation IT_AU_Enrol($input: EnrollAccountUpdaterCardInput!, $vaultId: String) {
    enrollAccountUpdaterCard(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationEnrollAccountUpdaterCardSuccess { data { ...IT_AU_CardFields } }
      ...ErrorFields
    }
  }
`);

const ReadCard = graphql(`
  query IT_AU_ReadCard($cardId: String!, $vaultId: String) {
    accountUpdaterCard(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ... on QueryAccountUpdaterCardSuccess { data { ...IT_AU_CardFields } }
      ...ErrorFields
    }
  }
`);

const ReadNode = graphql(`
  query IT_AU_ReadNode($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on AccountUpdaterCard { cardId vaultId number state }
    }
  }
`);

const Check = graphql(`
  mutation IT_AU_Check($input: CheckAccountUpdaterCardInput!, $vaultId: String) {
    checkAccountUpdaterCard(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationCheckAccountUpdaterCardSuccess {
        data {
          name
          number
          maskedNumber
          expMonth
          expYear
          event
          failureCode
          merchant { serviceMerchantId subMerchantName subMerchantMid }
        }
      }
      ...ErrorFields
    }
  }
`);

/**
 * The format-preserving alias the sandbox issues for `pan` (docs/gap-decisions.md, "Identifiers and
 * aliases"): BIN, seven Base62 characters with at least one letter, last four.
 */
function expectAliasOf(alias: string, pan: string): void {
  expect(alias).toMatch(new RegExp(`^${pan.slice(0, 6)}[0-9A-Za-z]{7}${pan.slice(-4)}$`));
  expect(alias.slice(6, 13)).toMatch(/[A-Za-z]/);
}

/**
 * The current number of a check result for `pan`: the documented answer carries the plain PAN, which
 * the gateway shows masked only (`number` null); the specification's reading answers the alias
 * (sandbox contract §8). `maskedNumber` is BIN and last four either way.
 */
function expectCheckedNumber(data: { number?: string | null; maskedNumber?: unknown }, pan: string): void {
  expect(data.maskedNumber).toBe(`${pan.slice(0, 6)}******${pan.slice(-4)}`);
  if (DOCUMENTED) expect(data.number).toBeNull();
  else expectAliasOf(data.number!, pan);
}

const CARD_ID = /^CRD[0-9A-Za-z]{22}$/;
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Contract §5.1: PAN, expected event, what the answer changes. */
const IMMEDIATE_CARDS: readonly [string, string, 'number' | 'expiry' | undefined][] = [
  ['5100260000391001', 'UPDATED', 'number'],
  ['4000210000791001', 'UPDATED', 'number'],
  ['5100260000791002', 'UPDATED', 'expiry'],
  ['5100260000291003', 'ENROLLED', undefined],
  ['4000210000691003', 'ENROLLED', undefined],
  ['5100260000691004', 'CLOSED', undefined],
  ['4000210000191004', 'CLOSED', undefined],
  ['4000210000591005', 'EXPIRED', undefined],
  ['4000210000091006', 'CONTACT_CARDHOLDER_ADVICE', undefined],
  ['5100260000091007', 'NON_PARTICIPATING', undefined],
  ['4000210000991007', 'NON_PARTICIPATING', undefined],
  ['5100260000991008', 'UNKNOWN', undefined],
];

/** Contract §5.2: every card answering `enrolling` (the notification follows). */
const WEBHOOK_CARDS: readonly string[] = [
  '5100260000292001',
  '4000210000692001',
  '5100260000692002',
  '4000210000192002',
  '5100260000192003',
  '4000210000592003',
  '5100260000592004',
  '4000210000092004',
  '5100260000092005',
  '4000210000992005',
  '5100260000992006',
  '4000210000492006',
  '4000210000892007',
  '4000210000392008',
];

/** Contract §5.3, Visa and Mastercard: PAN, event, what the answer changes. */
const CHECK_CARDS_VISA_MASTERCARD: readonly [string, string, 'number' | 'expiry' | undefined][] = [
  ['5100260000193001', 'UPDATED', 'number'],
  ['4000210000593001', 'UPDATED', 'number'],
  ['5100260000593002', 'UPDATED', 'expiry'],
  ['4000210000093002', 'UPDATED', 'expiry'],
  ['5100260000093003', 'VALID', undefined],
  ['4000210000993003', 'VALID', undefined],
  ['5100260000993004', 'CLOSED', undefined],
  ['4000210000493004', 'CLOSED', undefined],
  ['5100260000493005', 'EXPIRED', undefined],
  ['4000210000893005', 'EXPIRED', undefined],
  ['5100260000893006', 'CONTACT_CARDHOLDER_ADVICE', undefined],
  ['4000210000393006', 'CONTACT_CARDHOLDER_ADVICE', undefined],
  ['5100260000393007', 'NON_PARTICIPATING', undefined],
  ['4000210000793007', 'NON_PARTICIPATING', undefined],
];

/** Contract §5.3, American Express and Discover (answer only when enrolled). */
const CHECK_CARDS_AMEX_DISCOVER: readonly [string, string, 'number' | undefined][] = [
  ['378282000193001', 'UPDATED', 'number'],
  ['6011000000493001', 'UPDATED', 'number'],
  ['378282000093003', 'VALID', undefined],
  ['6011000000393003', 'VALID', undefined],
];

const NORMAL_VISA = '4111111111111111';
const NORMAL_MASTERCARD = '5555555555554444';
const DINERS = '36227206271667';
const JCB = '3530111333300000';
const VAULT1 = 'tntsandbox1';
const VAULT2 = 'tntsandbox2';

/** A billing address with every member filled, as the GraphQL input takes it and the card answers it. */
const BILLING_ADDRESS = {
  name: 'Grace Hopper',
  company: 'Navy',
  address1: '1 Main St',
  address2: 'Floor 2',
  city: 'Arlington',
  region: 'VA',
  country: 'US',
  postalCode: '22201',
  phone: '+1 555 0100',
};

describe('account updater v1 through GraphQL', () => {
  const t = useStack();

  const enrol = (
    number: string,
    token: string,
    extra: {
      expYear?: number;
      vaultId?: string;
      merchant?: MerchantInput;
    } = {},
  ) =>
    t.stack.execute(
      Enrol,
      {
        input: {
          name: 'Ada Lovelace',
          number,
          expMonth: 12,
          expYear: extra.expYear ?? 30,
          ...(extra.merchant ? { merchant: extra.merchant } : {}),
        },
        ...(extra.vaultId ? { vaultId: extra.vaultId } : {}),
      },
      token,
    );

  /** The card of a successful enrolment answer; fails the test on an error member. */
  const enrolledCard = (result: Awaited<ReturnType<typeof enrol>>) =>
    member(result.data?.enrollAccountUpdaterCard, 'MutationEnrollAccountUpdaterCardSuccess').data;

  /** The outcome of a successful check answer; fails the test on an error member. */
  const checkedCard = (result: { data?: It_Au_CheckMutation | null }) =>
    member(result.data?.checkAccountUpdaterCard, 'MutationCheckAccountUpdaterCardSuccess').data;

  const readCard = (cardId: string, token: string) => t.stack.execute(ReadCard, { cardId }, token);

  /** Reads the card until `state` is ENROLLED (the sandbox completes enrolment after 100 ms). */
  async function waitUntilEnrolled(cardId: string, token: string, timeoutMs = 3_000) {
    return vi.waitFor(
      async () => {
        const result = await readCard(cardId, token);
        const card = member(result.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data;
        expect(card.state).toBe('ENROLLED');
        return card;
      },
      { timeout: timeoutMs, interval: 25 },
    );
  }

  /**
   * The format-preserving alias of `pan` in vault 1, read through a stateless check (no enrolment),
   * when the check answers aliases (the specification's reading; the documented check answers the
   * plain PAN, which the gateway masks: null).
   */
  async function aliasOfSubmittedPan(pan: string): Promise<string | null | undefined> {
    const result = await t.stack.execute(
      Check,
      { input: { name: 'Ada Lovelace', number: pan, expMonth: 12, expYear: 30 } },
      t.vault1Token,
    );
    return checkedCard(result).number;
  }

  it('lists every card of contract §5.1 to §5.3 in these tables', () => {
    const tested = new Set([
      ...IMMEDIATE_CARDS.map(([pan]) => pan),
      '5100260000991099',
      ...WEBHOOK_CARDS,
      ...CHECK_CARDS_VISA_MASTERCARD.map(([pan]) => pan),
      ...CHECK_CARDS_AMEX_DISCOVER.map(([pan]) => pan),
    ]);
    const contract = SANDBOX_TEST_CARDS.filter((card) =>
      ['enrolment-immediate', 'enrolment-webhook', 'card-check'].includes(card.table),
    ).map((card) => card.pan);
    expect([...tested].sort()).toEqual([...contract].sort());
  });

  describe('enrollAccountUpdaterCard, outcome in the immediate answer (contract §5.1)', () => {
    it.each(IMMEDIATE_CARDS)('%s answers ENROLLED with event %s', async (pan, event, update) => {
      const result = await enrol(pan, t.vault1Token);
      expect(result.status).toBe(200);
      const card = enrolledCard(result);
      expect(card).toMatchObject({
        vaultId: VAULT1,
        name: 'Ada Lovelace',
        expMonth: 12,
        expYear: update === 'expiry' ? 33 : 30,
        state: 'ENROLLED',
        event,
        capabilities: ['ACCOUNT_UPDATER'],
        merchant: null,
        billingAddress: null,
      });
      expect(card.cardId).toMatch(CARD_ID);
      expect(card.createdAt).toMatch(ISO_UTC);
      expect(card.updatedAt).toMatch(ISO_UTC);
      if (update === 'number') {
        // The new number keeps the BIN; its last four are those of the sandbox's replacement PAN.
        expectAliasOf(card.number, replacementPan(pan));
        expect(card.number).not.toBe(await aliasOfSubmittedPan(pan));
      } else {
        expectAliasOf(card.number, pan);
        if (!DOCUMENTED) expect(card.number).toBe(await aliasOfSubmittedPan(pan));
      }
      expect(JSON.stringify(result)).not.toContain(pan);

      // Mock cards are never saved (contract §5): reading the id answers card-not-found.
      const read = await readCard(card.cardId, t.vault1Token);
      expect(member(read.data?.accountUpdaterCard, 'CardNotFoundError').code).toBe('card-not-found');
    });

    it('5100260000991099 answers AccountUpdaterNotSupportedError', async () => {
      const result = await enrol('5100260000991099', t.vault1Token);
      const error = member(result.data?.enrollAccountUpdaterCard, 'AccountUpdaterNotSupportedError');
      expect(error.code).toBe('account-updater-not-supported');
      expect(JSON.stringify(result)).not.toContain('5100260000991099');
    });
  });

  describe('enrollAccountUpdaterCard, outcome by notification (contract §5.2)', () => {
    it.each(WEBHOOK_CARDS)('%s answers ENROLLING with no event yet', async (pan) => {
      const result = await enrol(pan, t.vault1Token);
      const card = enrolledCard(result);
      expect(card).toMatchObject({
        vaultId: VAULT1,
        name: 'Ada Lovelace',
        expMonth: 12,
        expYear: 30,
        state: 'ENROLLING',
        event: null,
        capabilities: [],
      });
      expect(card.cardId).toMatch(CARD_ID);
      expectAliasOf(card.number, pan);
      const read = await readCard(card.cardId, t.vault1Token);
      expect(member(read.data?.accountUpdaterCard, 'CardNotFoundError').code).toBe('card-not-found');
    });
  });

  describe('enrollAccountUpdaterCard of a normal card', () => {
    it('answers ENROLLING, then the saved card is ENROLLED with ACCOUNT_UPDATER and event ENROLLED', async () => {
      const result = await t.stack.execute(
        Enrol,
        {
          input: {
            name: 'Grace Hopper',
            number: NORMAL_VISA,
            expMonth: 7,
            expYear: 31,
            billingAddress: BILLING_ADDRESS,
          },
        },
        t.vault1Token,
      );
      const enrolled = enrolledCard(result);
      expect(enrolled).toMatchObject({
        name: 'Grace Hopper',
        expMonth: 7,
        expYear: 31,
        state: 'ENROLLING',
        event: null,
        capabilities: [],
        billingAddress: BILLING_ADDRESS,
      });
      expectAliasOf(enrolled.number, NORMAL_VISA);

      const card = await waitUntilEnrolled(enrolled.cardId, t.vault1Token);
      expect(card).toMatchObject({
        cardId: enrolled.cardId,
        vaultId: VAULT1,
        number: enrolled.number,
        name: 'Grace Hopper',
        expMonth: 7,
        expYear: 31,
        state: 'ENROLLED',
        event: 'ENROLLED',
        capabilities: ['ACCOUNT_UPDATER'],
        billingAddress: enrolled.billingAddress,
        createdAt: enrolled.createdAt,
      });
      expect(card.updatedAt >= card.createdAt).toBe(true);
    });

    it('hides a vault-1 card from a vault-2 token (CardNotFoundError)', async () => {
      const result = await enrol(NORMAL_MASTERCARD, t.vault1Token);
      const { cardId } = enrolledCard(result);
      expect(
        member(
          (await readCard(cardId, t.vault1Token)).data?.accountUpdaterCard,
          'QueryAccountUpdaterCardSuccess',
        ),
      ).toBeTruthy();
      const other = await readCard(cardId, t.vault2Token);
      expect(member(other.data?.accountUpdaterCard, 'CardNotFoundError').code).toBe('card-not-found');
      const bothVaults = await t.stack.token({ vaults: [VAULT1, VAULT2] });
      const asVault2 = await t.stack.execute(ReadCard, { cardId, vaultId: VAULT2 }, bothVaults);
      expect(member(asVault2.data?.accountUpdaterCard, 'CardNotFoundError').code).toBe('card-not-found');
    });

    it('answers CardNotFoundError for a well-formed id that does not exist', async () => {
      const result = await readCard('CRD0000000000000000000000', t.vault1Token);
      expect(member(result.data?.accountUpdaterCard, 'CardNotFoundError').code).toBe('card-not-found');
    });
  });

  describe('node(id) of an AccountUpdaterCard', () => {
    it('answers the card in its vault and null for another vault', async () => {
      const result = await enrol(NORMAL_VISA, t.vault1Token);
      const enrolled = enrolledCard(result);
      expect(Buffer.from(enrolled.id, 'base64').toString('utf8')).toBe(
        `AccountUpdaterCard:${VAULT1}:${enrolled.cardId}`,
      );
      const same = await t.stack.execute(ReadNode, { id: enrolled.id }, t.vault1Token);
      expect(same.data?.node).toEqual({
        __typename: 'AccountUpdaterCard',
        id: enrolled.id,
        cardId: enrolled.cardId,
        vaultId: VAULT1,
        number: enrolled.number,
        state: 'ENROLLING',
      });
      const other = await t.stack.execute(ReadNode, { id: enrolled.id }, t.vault2Token);
      expect(other.errors).toBeUndefined();
      expect(other.data?.node).toBeNull();
    });
  });

  describe('brands (contract §7)', () => {
    it.each([
      ['Diners Club', DINERS],
      ['JCB', JCB],
    ])('%s enrolment answers CardBrandNotSupportedError', async (_brand, pan) => {
      const result = await enrol(pan, t.vault1Token);
      const error = member(result.data?.enrollAccountUpdaterCard, 'CardBrandNotSupportedError');
      expect(error.code).toBe('card-brand-not-supported');
      expect(JSON.stringify(result)).not.toContain(pan);
    });

    it.each([
      ['Diners Club', DINERS],
      ['JCB', JCB],
    ])(
      '%s check answers NON_PARTICIPATING with failureCode account-updater-not-supported',
      async (_b, pan) => {
        const result = await t.stack.execute(
          Check,
          { input: { name: 'Ada Lovelace', number: pan, expMonth: 12, expYear: 30 } },
          t.vault1Token,
        );
        const data = checkedCard(result);
        expect(data).toMatchObject({
          event: 'NON_PARTICIPATING',
          failureCode: 'account-updater-not-supported',
          expMonth: 12,
          expYear: 30,
        });
        expectCheckedNumber(data, pan);
      },
    );
  });

  describe('merchants (spec "Enroll request rules"; tntsandbox2 has two merchants)', () => {
    it('reports the upstream 400 for a missing merchant or serviceMerchantId on the input field', async () => {
      const withoutMerchant = await enrol(NORMAL_VISA, t.vault2Token);
      const missing = member(withoutMerchant.data?.enrollAccountUpdaterCard, 'InputValidationError');
      expect(missing.code).toBe('invalid-input');
      expect(missing.issues.map((issue) => issue.path)).toEqual([['input', 'merchant', 'serviceMerchantId']]);

      const withoutId = await enrol(NORMAL_VISA, t.vault2Token, {
        merchant: { subMerchantName: 'Corner Shop' },
      });
      const missingId = member(withoutId.data?.enrollAccountUpdaterCard, 'InputValidationError');
      expect(missingId.issues.map((issue) => issue.path)).toEqual([
        ['input', 'merchant', 'serviceMerchantId'],
      ]);
      expect(missingId.issues[0]?.message).toContain('several merchants');
      expect(JSON.stringify([withoutMerchant, withoutId])).not.toContain(NORMAL_VISA);
    });

    it('answers MerchantNotFoundError for an unknown serviceMerchantId', async () => {
      const result = await enrol(NORMAL_VISA, t.vault2Token, {
        merchant: { serviceMerchantId: 'SMunknownmerchant000001', subMerchantName: 'Corner Shop' },
      });
      expect(member(result.data?.enrollAccountUpdaterCard, 'MerchantNotFoundError').code).toBe(
        'merchant-not-found',
      );
    });

    it('enrols on behalf of a named merchant and echoes it', async () => {
      const result = await enrol(NORMAL_VISA, t.vault2Token, {
        merchant: { serviceMerchantId: 'SMsandbox2merchant00002', subMerchantName: 'Corner Shop' },
      });
      const card = enrolledCard(result);
      expect(card).toMatchObject({
        vaultId: VAULT2,
        state: 'ENROLLING',
        merchant: {
          serviceMerchantId: 'SMsandbox2merchant00002',
          subMerchantName: 'Corner Shop',
          subMerchantMid: '200002',
        },
      });
    });

    it('resolves the only merchant of tntsandbox1 without serviceMerchantId', async () => {
      const result = await enrol('5100260000291003', t.vault1Token, {
        merchant: { subMerchantName: 'Corner Shop' },
      });
      const card = enrolledCard(result);
      expect(card.merchant).toEqual({
        serviceMerchantId: 'SMsandbox1merchant00001',
        subMerchantName: 'Corner Shop',
        subMerchantMid: '100001',
      });
    });
  });

  describe('checkAccountUpdaterCard (contract §5.3)', () => {
    const CVV = '7391';

    it.each(CHECK_CARDS_VISA_MASTERCARD)('%s answers %s without enrolment', async (pan, event, update) => {
      const result = await t.stack.execute(
        Check,
        { input: { name: 'Ada Lovelace', number: pan, expMonth: 11, expYear: 29, cvv: CVV } },
        t.vault1Token,
      );
      const data = checkedCard(result);
      expect(data).toMatchObject({
        name: 'Ada Lovelace',
        expMonth: 11,
        expYear: update === 'expiry' ? 32 : 29,
        event,
        failureCode: null,
        merchant: null,
      });
      expectCheckedNumber(data, update === 'number' ? replacementPan(pan) : pan);
      const text = JSON.stringify(result);
      expect(text).not.toContain(pan);
      expect(text).not.toContain(CVV);
      // The documented answer carried the plain PAN: it reaches no log line either.
      const logged = readFileSync(t.stack.logFile, 'utf8');
      expect(logged).not.toContain(pan);
      expect(logged).not.toContain(replacementPan(pan));
    });

    it.each(CHECK_CARDS_AMEX_DISCOVER)(
      '%s answers AccountUpdaterNotSupportedError until enrolled in the vault, then %s',
      async (pan, event, update) => {
        const check = () =>
          t.stack.execute(
            Check,
            { input: { name: 'Ada Lovelace', number: pan, expMonth: 11, expYear: 29, cvv: CVV } },
            t.vault1Token,
          );
        const before = await check();
        expect(member(before.data?.checkAccountUpdaterCard, 'AccountUpdaterNotSupportedError').code).toBe(
          'account-updater-not-supported',
        );

        const enrolment = await enrol(pan, t.vault1Token);
        const { cardId } = enrolledCard(enrolment);
        await waitUntilEnrolled(cardId, t.vault1Token);

        const after = await check();
        const data = checkedCard(after);
        expect(data).toMatchObject({ expMonth: 11, expYear: 29, event, failureCode: null });
        expectCheckedNumber(data, update === 'number' ? replacementPan(pan) : pan);
        const text = JSON.stringify([before, after]);
        expect(text).not.toContain(pan);
        expect(text).not.toContain(CVV);
      },
    );

    it('echoes the merchant of the check', async () => {
      const result = await t.stack.execute(
        Check,
        {
          input: {
            name: 'Ada Lovelace',
            number: '4000210000993003',
            expMonth: 11,
            expYear: 29,
            merchant: { serviceMerchantId: 'SMsandbox2merchant00001', subMerchantName: 'Corner Shop' },
          },
        },
        t.vault2Token,
      );
      const data = checkedCard(result);
      expect(data.merchant).toEqual({
        serviceMerchantId: 'SMsandbox2merchant00001',
        subMerchantName: 'Corner Shop',
        subMerchantMid: '200001',
      });
      expect(data.event).toBe('VALID');
    });
  });
});
