import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALPHA3_COUNTRY_CODES } from '../../src/sandbox/card-attributes.ts';
import type { It4_Ca_AttributesFieldsFragment } from '../generated/graphql.ts';
import { graphql } from '../generated/index.ts';
import { CreateCard } from '../support/documents.ts';
import { member, US_PERSONAL_16_DIGITS, useStack } from '../support/fixtures.ts';

/**
 * Card attributes through the gateway's GraphQL API over HTTP against the embedded sandbox:
 * `cardAttributes(number)` for raw BINs, PANs (separators, 8-digit prefixes, partial PANs), `tok_`
 * aliases and unknown BINs, with the exact values of the sandbox's BIN table
 * (src/sandbox/bin-table.json); input validation, scope, and the cross-request BIN cache (spec "Card
 * attributes", "Card attributes result"; docs/gap-decisions.md "Card attributes").
 */

// Shared by the documents below; the codegen inlines it into each of them.
graphql(`
  fragment IT4_CA_AttributesFields on CardAttributes {
    bin
    brand
    issuingOrganization
    cardType
    cardCategory
    issuingCountryName
    issuingCountryCode
    maximumPanLength
    cardCommercialType
    regulationStatus
    prepaidType
    cobadgedBrands
    version
  }
`);

const Lookup = graphql(`
  query IT4_CA_Lookup($number: String!, $vaultId: String) {
    cardAttributes(number: $number, vaultId: $vaultId) {
      __typename
      ... on QueryCardAttributesSuccess { data { ...IT4_CA_AttributesFields } }
      ...ErrorFields
    }
  }
`);

/** The wire the stack's sandbox answers in (`SANDBOX_WIRE`, documented by default). */
const WIRE = process.env.SANDBOX_WIRE === 'specification' ? 'specification' : 'documented';

/**
 * The issuing country code the gateway passes through: the documented answer's alpha-3 (`USA`), the
 * specification's (and the table's) alpha-2.
 */
function countryCode(alpha2: string): string {
  return WIRE === 'documented' ? ALPHA3_COUNTRY_CODES[alpha2]! : alpha2;
}

/**
 * What `cardAttributes` answers for a PAN or alias the data set cannot place: null for the
 * specification's 404, `BinNotDiscernedError` for the documented 422 ("We could not discern a bin").
 * A raw 6-digit BIN the data set cannot place is null in both (cached like an answer).
 */
const UNKNOWN_BIN_ANSWER =
  WIRE === 'documented'
    ? {
        __typename: 'BinNotDiscernedError',
        code: 'bin-not-discerned',
        message: 'No BIN could be discerned from the number',
      }
    : null;

/** One row of src/sandbox/bin-table.json, in its wire names. */
interface BinRow {
  bin: string;
  brand: string;
  issuing_organization: string;
  card_type: string;
  card_category: string;
  issuing_country_name: string;
  issuing_country_code: string;
  maximum_pan_length: number;
  card_commercial_type: string;
  regulation_status: string;
  prepaid_type?: string;
  cobadged_brands?: string;
}

const BIN_TABLE = JSON.parse(
  readFileSync(new URL('../../src/sandbox/bin-table.json', import.meta.url), 'utf8'),
) as { version: number; entries: BinRow[] };

/** The GraphQL `CardAttributes` a row of the BIN table must come back as. */
function attributesOfRow(bin: string): It4_Ca_AttributesFieldsFragment {
  const row = BIN_TABLE.entries.find((entry) => entry.bin === bin);
  if (!row) throw new Error(`BIN ${bin} is not in the sandbox BIN table`);
  return {
    bin: row.bin,
    brand: row.brand,
    issuingOrganization: row.issuing_organization,
    cardType: row.card_type as It4_Ca_AttributesFieldsFragment['cardType'],
    cardCategory: row.card_category as It4_Ca_AttributesFieldsFragment['cardCategory'],
    issuingCountryName: row.issuing_country_name,
    issuingCountryCode: countryCode(row.issuing_country_code),
    maximumPanLength: row.maximum_pan_length,
    cardCommercialType: row.card_commercial_type as It4_Ca_AttributesFieldsFragment['cardCommercialType'],
    regulationStatus: row.regulation_status as It4_Ca_AttributesFieldsFragment['regulationStatus'],
    prepaidType: (row.prepaid_type ?? null) as It4_Ca_AttributesFieldsFragment['prepaidType'],
    cobadgedBrands: row.cobadged_brands ?? null,
    version: BIN_TABLE.version,
  };
}

const VAULT1 = 'tntsandbox1';
const VAULT2 = 'tntsandbox2';
const ATTRIBUTES_REQUEST = { method: 'POST', path: '/card-attributes/attributes/attributes', status: 200 };

/** Luhn-valid PANs on the 8-digit rows 45560012, 45560034, 55243390, 54737215 and on 455600 only. */
const PAN_45560012 = '4556001200000105';
const PAN_45560034 = '4556003400000208';
const PAN_455600 = '4556007000000302';
const PAN_55243390 = '5524339000000404';
const PAN_54737215 = '5473721500000508';
/** Luhn-valid but of no card family, so of no BIN in the table. */
const NO_FAMILY_PAN = '9999999999999995';
/** Fails the Luhn check (4111111111111111 is valid). */
const BAD_LUHN_PAN = '4111111111111112';

/** The members the reloadable prepaid debit rows of the BIN table share (their bin, brand and issuer differ). */
const RELOADABLE_PREPAID_DEBIT = {
  cardType: 'DEBIT',
  cardCategory: 'PREPAID',
  ...US_PERSONAL_16_DIGITS,
  issuingCountryCode: countryCode('US'),
  prepaidType: 'RELOADABLE',
  cobadgedBrands: null,
  version: 20261101,
};

describe('card attributes through GraphQL', () => {
  const t = useStack();

  const lookup = (number: string, token: string | null = t.vault1Token) =>
    t.stack.execute(Lookup, { number }, token);

  /** The attributes `number` answers, failing the test on anything but success. */
  async function attributesOf(number: string, token = t.vault1Token) {
    const result = await lookup(number, token);
    expect(result.errors).toBeUndefined();
    return member(result.data?.cardAttributes, 'QueryCardAttributesSuccess').data;
  }

  /** Runs `work` and returns it with the sandbox requests answered meanwhile. */
  async function withRequests<T>(work: () => Promise<T>) {
    const before = t.stack.sandbox!.requests().length;
    const result = await work();
    return { result, requests: t.stack.sandbox!.requests().slice(before) };
  }

  // First: the cache is app-wide and the lookups below fill it with every BIN of the table.
  describe('BIN cache (attributes are static per data set version)', () => {
    it('looks a raw BIN up once across requests, whoever asks', async () => {
      const first = await withRequests(() => attributesOf('492940'));
      // The first upstream call of the t.stack also fetches the gateway's access token.
      expect(first.requests.filter((r) => r.path !== '/oauth/token')).toEqual([
        { ...ATTRIBUTES_REQUEST, vault: VAULT1 },
      ]);
      const second = await withRequests(() => attributesOf('492940'));
      expect(second.requests).toEqual([]);
      const otherVault = await withRequests(() => attributesOf('492940', t.vault2Token));
      expect(otherVault.requests).toEqual([]);
      expect(second.result).toEqual(first.result);
      expect(otherVault.result).toEqual(attributesOfRow('492940'));
    });

    it('keeps the absence of a BIN too (404, or the documented 422): an unknown BIN is looked up once across requests', async () => {
      const first = await withRequests(() => lookup('999998'));
      expect(first.result.data?.cardAttributes).toBeNull();
      const status = WIRE === 'documented' ? 422 : 404;
      expect(first.requests).toEqual([{ ...ATTRIBUTES_REQUEST, status, vault: VAULT1 }]);
      const second = await withRequests(() => lookup('999998'));
      expect(second.result.data?.cardAttributes).toBeNull();
      expect(second.requests).toEqual([]);
    });
  });

  describe('raw 6-digit BINs', () => {
    it.each([
      [
        'a co-badged product',
        {
          bin: '453201',
          brand: 'VISA',
          issuingOrganization: 'Banque Alpine de Lyon',
          cardType: 'DEBIT',
          cardCategory: 'CLASSIC',
          issuingCountryName: 'France',
          issuingCountryCode: countryCode('FR'),
          maximumPanLength: 16,
          cardCommercialType: 'PERSONAL',
          regulationStatus: 'UNREGULATED',
          prepaidType: null,
          cobadgedBrands: 'CARTES BANCAIRES',
          version: 20261101,
        },
      ],
      [
        'a reloadable prepaid debit product',
        {
          bin: '510510',
          brand: 'MASTERCARD',
          issuingOrganization: 'Keystone Prepaid Services',
          ...RELOADABLE_PREPAID_DEBIT,
        },
      ],
    ])('answers %s with every field of the spec', async (_product, expected) => {
      expect(await attributesOf(expected.bin)).toEqual(expected);
    });

    it.each([
      ['479258', { cardCategory: 'PREPAID', prepaidType: 'NON_RELOADABLE', cardType: 'DEBIT' }],
      ['400005', { regulationStatus: 'REGULATED', cardType: 'DEBIT' }],
      ['343750', { cardType: 'CHARGE', cardCategory: 'CORPORATE', cardCommercialType: 'COMMERCIAL' }],
      ['462263', { cobadgedBrands: 'INTERAC', issuingCountryCode: countryCode('CA') }],
      ['356999', { brand: 'JCB', maximumPanLength: 19 }],
      ['424242', { cardCategory: 'SIGNATURE' }],
      ['426684', { cardCategory: 'INFINITE' }],
      ['555555', { cardCategory: 'WORLD' }],
      ['540044', { cardCategory: 'WORLD_ELITE' }],
    ])('answers BIN %s with %o', async (bin, expected) => {
      const attributes = await attributesOf(bin);
      expect(attributes).toEqual(attributesOfRow(bin));
      expect(attributes).toMatchObject(expected);
    });

    it('answers every 6-digit row of the BIN table exactly (every enumeration value is typed)', async () => {
      const sixDigitRows = BIN_TABLE.entries.filter((row) => row.bin.length === 6).map((row) => row.bin);
      expect(sixDigitRows.length).toBeGreaterThan(40);
      const answers = await Promise.all(sixDigitRows.map((bin) => attributesOf(bin)));
      expect(answers).toEqual(sixDigitRows.map(attributesOfRow));
      for (const answer of answers) {
        expect(Object.values(answer)).not.toContain('UNKNOWN');
      }
    });

    it('answers null for a BIN the data set does not know (its 404, or its documented 422)', async () => {
      for (const bin of ['999999', '411112', '100000']) {
        const result = await lookup(bin);
        expect(result.errors).toBeUndefined();
        expect(result.data?.cardAttributes).toBeNull();
      }
    });
  });

  describe('PANs', () => {
    it.each([
      ['spaces', '4111 1111 1111 1111', '411111'],
      ['hyphens', '5555-5555-5555-4444', '555555'],
      ['mixed separators on an 8-digit row', '4556 0012-0000 0105', '45560012'],
      ['no separators', '6011111111111117', '601111'],
      ['15 digits', '378282246310005', '378282'],
      ['14 digits', '36227206271667', '362272'],
    ])('answers a PAN with %s by its row', async (_case, number, bin) => {
      const result = await lookup(number);
      expect(member(result.data?.cardAttributes, 'QueryCardAttributesSuccess').data).toEqual(
        attributesOfRow(bin),
      );
      expect(JSON.stringify(result)).not.toContain(number.replace(/[ -]/g, ''));
    });

    it('prefers the 8-digit row over its 6-digit parent for a PAN', async () => {
      expect(await attributesOf(PAN_45560012)).toEqual({
        bin: '45560012',
        brand: 'VISA',
        issuingOrganization: 'Northbridge Bank',
        ...RELOADABLE_PREPAID_DEBIT,
      });
      expect(await attributesOf(PAN_45560034)).toEqual(attributesOfRow('45560034'));
      expect(await attributesOf(PAN_55243390)).toEqual(attributesOfRow('55243390'));
      expect(await attributesOf(PAN_54737215)).toEqual(attributesOfRow('54737215'));
      expect((await attributesOf(PAN_54737215)).cardCategory).toBe('PURCHASING');
      // A PAN of the parent outside its 8-digit rows, and the raw BIN, answer the parent.
      expect(await attributesOf(PAN_455600)).toEqual(attributesOfRow('455600'));
      expect(await attributesOf('455600')).toEqual({
        ...attributesOfRow('455600'),
        cardType: 'CREDIT',
        cardCategory: 'GOLD',
      });
    });

    it('looks up partial PANs of 7 to 11 digits without the Luhn check', async () => {
      expect(await attributesOf('45560012345')).toEqual(attributesOfRow('45560012'));
      expect(await attributesOf('45560012')).toEqual(attributesOfRow('45560012'));
      expect(await attributesOf('4556001')).toEqual(attributesOfRow('455600'));
    });

    it('answers null or BinNotDiscernedError for a Luhn-valid PAN of no BIN in the table', async () => {
      const result = await lookup(NO_FAMILY_PAN);
      expect(result.errors).toBeUndefined();
      expect(result.data?.cardAttributes).toEqual(UNKNOWN_BIN_ANSWER);
    });
  });

  describe('tok_ aliases', () => {
    it("answers the row of the alias's PAN (8-digit rows included), in the caller's vault only", async () => {
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan: PAN_45560034, cvc: '123', expMonth: 11, expYear: 29 } },
        t.vault1Token,
      );
      const { panAlias, cvcAlias } = member(created.data?.createCard, 'MutationCreateCardSuccess').data;
      expect(await attributesOf(panAlias)).toEqual({
        ...attributesOfRow('45560034'),
        bin: '45560034',
        cardCategory: 'BUSINESS',
        cardCommercialType: 'COMMERCIAL',
      });

      // Another vault's alias, a CVC alias and an alias nobody issued are unknown.
      for (const [alias, token] of [
        [panAlias, t.vault2Token],
        [cvcAlias!, t.vault1Token],
        ['tok_sandbox_0000000000000000000000', t.vault1Token],
      ] as const) {
        const result = await lookup(alias, token);
        expect(result.errors).toBeUndefined();
        expect(result.data?.cardAttributes).toEqual(UNKNOWN_BIN_ANSWER);
      }
    });
  });

  describe('input validation (nothing reaches the upstream)', () => {
    it('rejects a PAN failing the Luhn check without echoing it', async () => {
      for (const number of [BAD_LUHN_PAN, '4111 1111 1111 1112', '411111111112']) {
        const { result, requests } = await withRequests(() => lookup(number));
        expect(requests).toEqual([]);
        const error = member(result.data?.cardAttributes, 'InputValidationError');
        expect(error.code).toBe('invalid-input');
        expect(error.issues).toEqual([{ path: ['number'], message: 'must pass the Luhn check' }]);
        expect(JSON.stringify(result)).not.toContain(BAD_LUHN_PAN);
      }
    });

    it.each([
      '12345',
      '4'.repeat(20),
      '4111--1111-1111-1111',
      '4111  1111',
      ' 411111',
      '-411111',
      '4111-11x',
      '411111******1111',
      'tok_',
      'tok_has-hyphen',
      'TOK_sandbox',
      '',
    ])('rejects the malformed number %j', async (number) => {
      const { result, requests } = await withRequests(() => lookup(number));
      expect(requests).toEqual([]);
      const error = member(result.data?.cardAttributes, 'InputValidationError');
      expect(error.issues).toEqual([
        {
          path: ['number'],
          message:
            'must be a BIN, a card number of up to 19 digits (each optionally followed by a space or hyphen), or a tok_ alias',
        },
      ]);
    });

    it('takes what the documented pattern takes: a trailing separator, a tab between digits', async () => {
      for (const number of ['411111 ', '411111-', '4111\t1111 1111 1111']) {
        expect(await attributesOf(number)).toEqual(attributesOfRow('411111'));
      }
    });
  });

  describe('scope card-attributes:basic and vaults', () => {
    it('answers ForbiddenError without the scope and UnauthenticatedError without a token', async () => {
      const withoutScope = await t.stack.token({
        vaults: [VAULT1],
        scopes: ['cards:read', 'cards:write', 'network-tokens:read', 'organization-users:read'],
      });
      const { result, requests } = await withRequests(async () => [
        await lookup('411111', withoutScope),
        await lookup('411111', null),
      ]);
      expect(requests).toEqual([]);
      expect(member(result[0]!.data?.cardAttributes, 'ForbiddenError').code).toBe('forbidden');
      expect(member(result[1]!.data?.cardAttributes, 'UnauthenticatedError').code).toBe('unauthenticated');

      const onlyScope = await t.stack.token({ vaults: [VAULT1], scopes: ['card-attributes:basic'] });
      expect(await attributesOf('411111', onlyScope)).toEqual(attributesOfRow('411111'));
    });

    it('acts in the named vault of a two-vault token, and needs one named', async () => {
      const bothVaults = await t.stack.token({ vaults: [VAULT1, VAULT2] });
      const named = await t.stack.execute(Lookup, { number: '601120', vaultId: VAULT2 }, bothVaults);
      expect(member(named.data?.cardAttributes, 'QueryCardAttributesSuccess').data).toEqual(
        attributesOfRow('601120'),
      );
      const unnamed = await t.stack.execute(Lookup, { number: '601120' }, bothVaults);
      expect(member(unnamed.data?.cardAttributes, 'ForbiddenError').code).toBe('vault-required');
    });
  });
});
