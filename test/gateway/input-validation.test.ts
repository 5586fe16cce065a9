import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  CheckAccountUpdaterCardInput,
  CreateCardInput,
  EnrollAccountUpdaterCardInput,
} from '../generated/graphql.ts';
import { graphql } from '../generated/index.ts';
import { CreateCard, EnrolCard } from '../support/documents.ts';
import { postGraphql, type Stack, startStack } from '../support/fixtures.ts';

/**
 * Bad input through the gateway's GraphQL API: every class answers InputValidationError
 * `invalid-input` with the exact paths of the bad fields, never echoes a submitted PAN or CVC, and
 * sends nothing upstream (checked on the embedded sandbox's request log).
 */

const Check = graphql(`
  mutation IT_IV_Check($input: CheckAccountUpdaterCardInput!) {
    checkAccountUpdaterCard(input: $input) {
      __typename
      ... on MutationCheckAccountUpdaterCardSuccess { data { event } }
      ...ErrorFields
    }
  }
`);

const ByCardId = graphql(`
  mutation IT_IV_ByCardId($cardId: String!) {
    subscribeCardUpdates(cardId: $cardId) {
      __typename
      ...ErrorFields
    }
    unsubscribeCardUpdates(cardId: $cardId) {
      __typename
      ...ErrorFields
    }
    checkCardUpdates(cardId: $cardId) {
      __typename
      ...ErrorFields
    }
  }
`);

const ReadByCardId = graphql(`
  query IT_IV_ReadByCardId($cardId: String!) {
    card(cardId: $cardId) {
      __typename
      ...ErrorFields
    }
    accountUpdaterCard(cardId: $cardId) {
      __typename
      ...ErrorFields
    }
  }
`);

/** Luhn check digit wrong (the valid number is 4111111111111111). */
const BAD_LUHN_PAN = '4111111111111112';
/** Luhn-valid, but of no card family the specification names. */
const NO_FAMILY_PAN = '9999999999999995';
const VISA = '4111111111111111';
const CVC = '7391';
const VALID_CARD: CreateCardInput = { pan: VISA, cvc: CVC, expMonth: 11, expYear: 29 };
const VALID_ENROLMENT: EnrollAccountUpdaterCardInput = {
  name: 'Ada Lovelace',
  number: VISA,
  expMonth: 11,
  expYear: 29,
};
const VALID_CHECK: CheckAccountUpdaterCardInput = { ...VALID_ENROLMENT, cvv: CVC };

type Issues = readonly { path: readonly string[]; message: string }[];

/** Narrows a result to InputValidationError with code `invalid-input` and returns its issues. */
function invalidInput(
  value: { __typename?: string; code?: string; issues?: Issues } | null | undefined,
): Issues {
  expect(value?.__typename, JSON.stringify(value)).toBe('InputValidationError');
  expect(value?.code).toBe('invalid-input');
  expect(value?.issues?.length).toBeGreaterThan(0);
  return value!.issues!;
}

const paths = (issues: Issues) => issues.map((issue) => issue.path);

describe('input validation through GraphQL', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack();
    token = await stack.token({ vaults: ['tntsandbox1'] });
    // Warm the gateway's upstream access token so a valid control request changes the log predictably.
    const warm = await stack.execute(CreateCard, { input: VALID_CARD }, token);
    expect(warm.data?.createCard.__typename).toBe('MutationCreateCardSuccess');
  });
  afterAll(() => stack.stop());

  /** Runs `work` and asserts the sandbox answered no request meanwhile. */
  async function withoutUpstream<T>(work: () => Promise<T>): Promise<T> {
    const before = stack.sandbox!.requests().length;
    const result = await work();
    expect(stack.sandbox!.requests().slice(before)).toEqual([]);
    return result;
  }

  /** Asserts the serialised response carries none of `secrets`. */
  function expectNoEcho(result: unknown, ...secrets: string[]): void {
    const text = JSON.stringify(result);
    for (const secret of secrets) expect(text).not.toContain(secret);
  }

  it('sends a valid card upstream (control for the request-log assertions)', async () => {
    const before = stack.sandbox!.requests().length;
    const result = await stack.execute(CreateCard, { input: VALID_CARD }, token);
    expect(result.data?.createCard.__typename).toBe('MutationCreateCardSuccess');
    expect(stack.sandbox!.requests().slice(before)).toEqual([
      { method: 'POST', path: '/card-interface/cards', status: 201, vault: 'tntsandbox1' },
    ]);
  });

  describe('createCard', () => {
    it.each<[string, Partial<CreateCardInput>, string[][], string[]]>([
      ['a pan failing the Luhn check', { pan: BAD_LUHN_PAN }, [['input', 'pan']], [BAD_LUHN_PAN]],
      ['a pan of 12 digits', { pan: '411111111111' }, [['input', 'pan']], ['411111111111']],
      ['a pan with letters', { pan: '4111abcd11111111' }, [['input', 'pan']], ['4111abcd11111111']],
      ['expMonth 0', { expMonth: 0 }, [['input', 'expMonth']], []],
      ['expMonth 13', { expMonth: 13 }, [['input', 'expMonth']], []],
      ['expYear 100', { expYear: 100 }, [['input', 'expYear']], []],
      ['expYear -1', { expYear: -1 }, [['input', 'expYear']], []],
      ['cvc 12', { cvc: '12' }, [['input', 'cvc']], ['"12"']],
      ['cvc 12345', { cvc: '12345' }, [['input', 'cvc']], ['12345']],
      ['cvc abc', { cvc: 'abc' }, [['input', 'cvc']], ['abc']],
      ['cvcStatus other than active', { cvcStatus: 'inactive' }, [['input', 'cvcStatus']], []],
      ['a malformed panAlias', { pan: null, panAlias: 'alias-of-card' }, [['input', 'panAlias']], []],
      ['metadata that is not an object', { metadata: [1, 2] }, [['input', 'metadata']], []],
    ])('rejects %s', async (_case, change, expectedPaths, secrets) => {
      const input = { ...VALID_CARD, ...change };
      const result = await withoutUpstream(() => stack.execute(CreateCard, { input }, token));
      expect(result.status).toBe(200);
      expect(result.errors).toBeUndefined();
      const issues = invalidInput(result.data?.createCard);
      expect(paths(issues)).toEqual(expectedPaths);
      expectNoEcho(result, VISA, CVC, ...secrets);
    });

    it.each<[string, Partial<CreateCardInput>, string]>([
      ['pan', { pan: BAD_LUHN_PAN }, 'must be a card number of 13 to 19 digits that passes the Luhn check'],
      ['cvc', { cvc: 'abc' }, 'must be 3 or 4 digits'],
      ['expMonth', { expMonth: 13 }, 'must be 1 to 12'],
      ['expYear', { expYear: 100 }, 'must be a two-digit year'],
    ])('names the rule %s breaks, never the value', async (field, change, message) => {
      const result = await withoutUpstream(() =>
        stack.execute(CreateCard, { input: { ...VALID_CARD, ...change } }, token),
      );
      expect(invalidInput(result.data?.createCard)).toEqual([{ path: ['input', field], message }]);
    });

    it('rejects both pan and panAlias, and neither', async () => {
      const first = await stack.execute(
        CreateCard,
        { input: { pan: VISA, expMonth: 11, expYear: 29 } },
        token,
      );
      const created = first.data?.createCard;
      if (created?.__typename !== 'MutationCreateCardSuccess') throw new Error(JSON.stringify(first));
      const { panAlias } = created.data;

      const both = await withoutUpstream(() =>
        stack.execute(CreateCard, { input: { pan: VISA, panAlias, expMonth: 11, expYear: 29 } }, token),
      );
      expect(invalidInput(both.data?.createCard)).toEqual([
        { path: ['input', 'pan'], message: 'give exactly one of pan and panAlias' },
      ]);
      expectNoEcho(both, VISA);

      const neither = await withoutUpstream(() =>
        stack.execute(CreateCard, { input: { cvc: CVC, expMonth: 11, expYear: 29 } }, token),
      );
      expect(invalidInput(neither.data?.createCard)).toEqual([
        { path: ['input', 'pan'], message: 'give exactly one of pan and panAlias' },
      ]);
      expectNoEcho(neither, CVC);
    });

    // InputValidationError.issues is documented as "Every invalid field".
    it('reports every bad field at once', async () => {
      const result = await withoutUpstream(() =>
        stack.execute(
          CreateCard,
          { input: { pan: BAD_LUHN_PAN, cvc: '12345', expMonth: 0, expYear: 100 } },
          token,
        ),
      );
      expect(paths(invalidInput(result.data?.createCard)).sort()).toEqual([
        ['input', 'cvc'],
        ['input', 'expMonth'],
        ['input', 'expYear'],
        ['input', 'pan'],
      ]);
      expectNoEcho(result, BAD_LUHN_PAN, '12345');
    });

    it('rejects a malformed vaultId', async () => {
      const result = await withoutUpstream(() =>
        stack.execute(CreateCard, { input: VALID_CARD, vaultId: 'nope' }, token),
      );
      expect(paths(invalidInput(result.data?.createCard))).toEqual([['vaultId']]);
      expectNoEcho(result, VISA, CVC);
    });

    it('answers a variable of the wrong type with a GraphQL error that does not echo the value', async () => {
      const before = stack.sandbox!.requests().length;
      const response = await postGraphql(
        stack.url,
        { query: print(CreateCard), variables: { input: { pan: Number(VISA), expMonth: 11, expYear: 29 } } },
        token,
      );
      const text = JSON.stringify(response.body);
      expect(response.status).toBe(400);
      const { body } = response;
      expect(body.data).toBeUndefined();
      expect(body.errors).toHaveLength(1);
      expect(text).not.toContain(VISA);
      // The invalid value is not echoed at all, not even masked.
      expect(body.errors![0]!.message).toBe(
        'Variable "$input" got invalid value at "input.pan"; String cannot represent a non string value.',
      );
      expect(stack.sandbox!.requests().length).toBe(before);
    });
  });

  describe('account updater v1', () => {
    it.each<[string, Partial<EnrollAccountUpdaterCardInput>, string[][], string[]]>([
      ['a number failing the Luhn check', { number: BAD_LUHN_PAN }, [['input', 'number']], [BAD_LUHN_PAN]],
      ['a number that is neither a PAN nor an alias', { number: 'abcd' }, [['input', 'number']], ['abcd']],
      ['a number that is too short', { number: '1234' }, [['input', 'number']], []],
      [
        'a number outside the six card families',
        { number: NO_FAMILY_PAN },
        [['input', 'number']],
        [NO_FAMILY_PAN],
      ],
      ['expMonth 0', { expMonth: 0 }, [['input', 'expMonth']], []],
      ['expMonth 13', { expMonth: 13 }, [['input', 'expMonth']], []],
      ['an empty name', { name: '' }, [['input', 'name']], []],
      [
        'a merchant with an empty name',
        { merchant: { subMerchantName: '' } },
        [['input', 'merchant', 'subMerchantName']],
        [],
      ],
      [
        'a merchant mid that is not digits',
        { merchant: { subMerchantName: 'Corner Shop', subMerchantMid: 'abc' } },
        [['input', 'merchant', 'subMerchantMid']],
        [],
      ],
    ])('enrollAccountUpdaterCard rejects %s', async (_case, change, expectedPaths, secrets) => {
      const input = { ...VALID_ENROLMENT, ...change };
      const result = await withoutUpstream(() => stack.execute(EnrolCard, { input }, token));
      expect(result.errors).toBeUndefined();
      expect(paths(invalidInput(result.data?.enrollAccountUpdaterCard))).toEqual(expectedPaths);
      expectNoEcho(result, VISA, ...secrets);
    });

    it.each<[string, Partial<CheckAccountUpdaterCardInput>, string[][], string[]]>([
      ['cvv 12', { cvv: '12' }, [['input', 'cvv']], ['"12"']],
      ['cvv 12345', { cvv: '12345' }, [['input', 'cvv']], ['12345']],
      ['cvv abc', { cvv: 'abc' }, [['input', 'cvv']], ['abc']],
      ['a number failing the Luhn check', { number: BAD_LUHN_PAN }, [['input', 'number']], [BAD_LUHN_PAN]],
      ['a malformed number', { number: '4111-11' }, [['input', 'number']], ['4111-11']],
      ['expMonth 13', { expMonth: 13 }, [['input', 'expMonth']], []],
      // The documented card-check request (sandbox contract §8, issue 19).
      ['a four-digit expYear', { expYear: 2030 }, [['input', 'expYear']], []],
      ['expYear 100', { expYear: 100 }, [['input', 'expYear']], []],
      [
        'a tok_ alias as number (the card check takes none)',
        { number: 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA' },
        [['input', 'number']],
        ['tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA'],
      ],
      ['a number of 12 characters', { number: '411111Ab1111' }, [['input', 'number']], ['411111Ab1111']],
      ['a name of 256 characters', { name: 'N'.repeat(256) }, [['input', 'name']], []],
      [
        'every documented limit at once',
        { name: 'N'.repeat(256), number: 'tok_x', expYear: 2030, cvv: '1' },
        [
          ['input', 'name'],
          ['input', 'number'],
          ['input', 'expYear'],
          ['input', 'cvv'],
        ],
        [],
      ],
    ])('checkAccountUpdaterCard rejects %s', async (_case, change, expectedPaths, secrets) => {
      const input = { ...VALID_CHECK, ...change };
      const result = await withoutUpstream(() => stack.execute(Check, { input }, token));
      expect(result.errors).toBeUndefined();
      expect(paths(invalidInput(result.data?.checkAccountUpdaterCard))).toEqual(expectedPaths);
      expectNoEcho(result, VISA, CVC, ...secrets);
    });
  });

  it('checkAccountUpdaterCard sends a name of 255 characters and a two-digit year once', async () => {
    const before = stack.sandbox!.requests().length;
    const result = await stack.execute(
      Check,
      { input: { ...VALID_CHECK, name: 'N'.repeat(255), expYear: 99 } },
      token,
    );
    expect(result.data?.checkAccountUpdaterCard).toEqual({
      __typename: 'MutationCheckAccountUpdaterCardSuccess',
      data: { event: 'VALID' },
    });
    expect(
      stack
        .sandbox!.requests()
        .slice(before)
        .filter((r) => r.path !== '/oauth/token')
        .map((r) => `${r.method} ${r.path}`),
    ).toEqual(['POST /account-updater/card-check']);
  });

  describe('card ids', () => {
    it.each(['nope', 'CRD', 'CRD-0000000000000000000000', 'crd0000000000000000000000'])(
      'rejects cardId %j on every field that takes one',
      async (cardId) => {
        const mutations = await withoutUpstream(() => stack.execute(ByCardId, { cardId }, token));
        const queries = await withoutUpstream(() => stack.execute(ReadByCardId, { cardId }, token));
        expect(mutations.errors).toBeUndefined();
        expect(queries.errors).toBeUndefined();
        const results = [
          mutations.data?.subscribeCardUpdates,
          mutations.data?.unsubscribeCardUpdates,
          mutations.data?.checkCardUpdates,
          queries.data?.card,
          queries.data?.accountUpdaterCard,
        ];
        for (const result of results) {
          expect(invalidInput(result)).toEqual([{ path: ['cardId'], message: 'must be a card id (CRD…)' }]);
        }
      },
    );
  });
});
