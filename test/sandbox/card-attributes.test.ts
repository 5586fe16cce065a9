import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBrandOf, isLuhnValid, luhnCheckDigit } from '../../src/lib/pan.ts';
import {
  type BinEntry,
  BRAND_NAMES,
  loadShippedBinTable,
  parseBinTable,
} from '../../src/sandbox/card-attributes.ts';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import {
  expectMediaTypeRefused,
  expectSandboxError,
  startSandbox,
  type TestSandbox,
} from '../support/fixtures.ts';

const PATH = '/card-attributes/attributes/attributes';
const RESULT_KEYS = [
  'bin',
  'brand',
  'issuing_organization',
  'card_type',
  'card_category',
  'issuing_country_name',
  'issuing_country_code',
  'maximum_pan_length',
  'card_commercial_type',
  'regulation_status',
  'version',
];

let t: TestSandbox;
let token1: string;
let token2: string;

beforeAll(async () => {
  // The specification's reading; the documented one is in card-attributes-documented.test.ts.
  t = await startSandbox({ wire: 'specification' });
  token1 = await t.token('tntsandbox1');
  token2 = await t.token('tntsandbox2');
});
afterAll(() => t.stop());

const lookup = (body: unknown, token = token1) => t.call('POST', PATH, { token, body });

/** A Luhn-valid PAN of `length` digits starting with `prefix`. */
function panWith(prefix: string, length = 16): string {
  const body = prefix.padEnd(length - 1, '7');
  return `${body}${luhnCheckDigit(body)}`;
}

describe('the shipped BIN table', () => {
  const table = loadShippedBinTable();
  const entries = [...table.entries.values()];

  it('has a YYYYMMDD version and every BIN of the sandbox test cards plus at least 40 more', () => {
    expect(table.version).toBe(20261101);
    const testBins = new Set(SANDBOX_TEST_CARDS.map((card) => card.pan.slice(0, 6)));
    for (const bin of testBins) expect(table.entries.has(bin)).toBe(true);
    expect(entries.length).toBeGreaterThanOrEqual(testBins.size + 40);
  });

  it('covers the six brands and every value the specification observes', () => {
    expect(new Set(entries.map((e) => e.brand))).toEqual(new Set(Object.values(BRAND_NAMES)));
    const values = (key: keyof BinEntry) => new Set(entries.map((e) => e[key]));
    expect(values('card_type').has('DEBIT')).toBe(true);
    expect(values('card_category').has('PREPAID')).toBe(true);
    expect(values('card_commercial_type').has('PERSONAL')).toBe(true);
    expect(values('regulation_status').has('UNREGULATED')).toBe(true);
    expect(values('prepaid_type').has('RELOADABLE')).toBe(true);
    expect(entries.some((e) => e.cobadged_brands !== undefined)).toBe(true);
    expect(entries.filter((e) => e.bin.length === 8).length).toBeGreaterThanOrEqual(3);
  });

  it('refuses inconsistent tables', () => {
    const row = {
      bin: '411111',
      brand: 'VISA',
      issuing_organization: 'Bank',
      card_type: 'CREDIT',
      card_category: 'CLASSIC',
      issuing_country_name: 'United States',
      issuing_country_code: 'US',
      maximum_pan_length: 16,
      card_commercial_type: 'PERSONAL',
      regulation_status: 'UNREGULATED',
    };
    expect(parseBinTable({ version: 20260101, entries: [row] }).entries.size).toBe(1);
    expect(() => parseBinTable({ version: 20261341, entries: [row] })).toThrow(/version/);
    expect(() => parseBinTable({ version: 20260101, entries: [row, row] })).toThrow(/twice/);
    expect(() => parseBinTable({ version: 20260101, entries: [{ ...row, brand: 'JCB' }] })).toThrow(/range/);
    expect(() => parseBinTable({ version: 20260101, entries: [{ ...row, bin: '41111122' }] })).toThrow(
      /parent/,
    );
    expect(() =>
      parseBinTable({ version: 20260101, entries: [{ ...row, card_category: 'PREPAID' }] }),
    ).toThrow(/prepaid_type/);
    expect(() => parseBinTable({ version: 20260101, entries: [{ ...row, bin: '4111' }] })).toThrow(
      /entries\/0\/bin/,
    );
  });
});

describe('POST /card-attributes/attributes/attributes', () => {
  it('answers a raw six-digit BIN with the result fields', async () => {
    const response = await lookup({ number: '510026' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.body).toEqual({
      bin: 510026,
      brand: 'MASTERCARD',
      issuing_organization: 'Cardgraph Sandbox Bank',
      card_type: 'CREDIT',
      card_category: 'STANDARD',
      issuing_country_name: 'United States',
      issuing_country_code: 'US',
      maximum_pan_length: 16,
      card_commercial_type: 'PERSONAL',
      regulation_status: 'UNREGULATED',
      version: 20261101,
    });
  });

  it('answers every sandbox test card by its PAN, with the brand of its family', async () => {
    for (const card of SANDBOX_TEST_CARDS) {
      const response = await lookup({ number: card.pan });
      expect(response.status).toBe(200);
      expect(response.body.bin).toBe(Number(card.pan.slice(0, 6)));
      expect(response.body.brand).toBe(BRAND_NAMES[card.brand]);
      expect(response.text).not.toContain(card.pan);
    }
  });

  it('carries prepaid_type and cobadged_brands only where they apply', async () => {
    const prepaid = await lookup({ number: panWith('510510') });
    expect(prepaid.status).toBe(200);
    expect(Object.keys(prepaid.body).sort()).toEqual([...RESULT_KEYS, 'prepaid_type'].sort());
    expect(prepaid.body).toMatchObject({
      card_type: 'DEBIT',
      card_category: 'PREPAID',
      card_commercial_type: 'PERSONAL',
      regulation_status: 'UNREGULATED',
      prepaid_type: 'RELOADABLE',
    });

    const cobadged = await lookup({ number: '453201' });
    expect(Object.keys(cobadged.body).sort()).toEqual([...RESULT_KEYS, 'cobadged_brands'].sort());
    expect(cobadged.body).toMatchObject({
      brand: 'VISA',
      issuing_country_code: 'FR',
      cobadged_brands: 'CARTES BANCAIRES',
    });

    const plain = await lookup({ number: '411111' });
    expect(Object.keys(plain.body).sort()).toEqual([...RESULT_KEYS].sort());
  });

  it('answers all six brands', async () => {
    const expected: [string, string, number][] = [
      ['4111111111111111', 'VISA', 16],
      ['5555555555554444', 'MASTERCARD', 16],
      ['371449635398431', 'AMERICAN EXPRESS', 15],
      ['6011111111111117', 'DISCOVER', 16],
      ['30569309025904', 'DINERS CLUB', 14],
      ['3530111333300000', 'JCB', 16],
    ];
    for (const [number, brand, maximumPanLength] of expected) {
      const response = await lookup({ number });
      expect(response.status).toBe(200);
      expect(response.body.brand).toBe(brand);
      expect(response.body.maximum_pan_length).toBe(maximumPanLength);
    }
  });

  it('prefers the eight-digit prefix over the six-digit one', async () => {
    const eight = await lookup({ number: panWith('45560012') });
    expect(eight.status).toBe(200);
    expect(eight.body).toMatchObject({ bin: 45560012, card_category: 'PREPAID', prepaid_type: 'RELOADABLE' });

    const otherEight = await lookup({ number: panWith('45560034') });
    expect(otherEight.body).toMatchObject({
      bin: 45560034,
      card_category: 'BUSINESS',
      card_commercial_type: 'COMMERCIAL',
    });

    const sixOnly = await lookup({ number: panWith('45560099') });
    expect(sixOnly.body).toMatchObject({ bin: 455600, card_type: 'CREDIT', card_category: 'GOLD' });
    expect(sixOnly.body.prepaid_type).toBeUndefined();

    expect((await lookup({ number: '455600' })).body.bin).toBe(455600);
    expect((await lookup({ number: '4556001' })).body.bin).toBe(455600);
    expect((await lookup({ number: '45560012' })).body.bin).toBe(45560012);
    expect((await lookup({ number: '4556 0012' })).body.bin).toBe(45560012);
  });

  it('accepts single spaces or hyphens between digits', async () => {
    const pan = panWith('45560012');
    const grouped = `${pan.slice(0, 4)} ${pan.slice(4, 8)} ${pan.slice(8, 12)} ${pan.slice(12)}`;
    const hyphenated = grouped.replaceAll(' ', '-');
    const mixed = `${pan.slice(0, 4)}-${pan.slice(4, 8)} ${pan.slice(8)}`;
    for (const number of [grouped, hyphenated, mixed, '4-5-5-6-0-0']) {
      const response = await lookup({ number });
      expect(response.status).toBe(200);
      expect([455600, 45560012]).toContain(response.body.bin);
    }
    for (const number of ['4556  0012', '4556--0012', ' 455600', '455600-', '4556 -0012', '4556_0012']) {
      expectSandboxError(await lookup({ number }), 400, 'bad-request', '/number');
    }
  });

  it('checks Luhn for a PAN of more than 11 digits only; the detail never carries the number', async () => {
    const valid = panWith('411111');
    const invalid = `${valid.slice(0, -1)}${(Number(valid.slice(-1)) + 1) % 10}`;
    expect(isLuhnValid(invalid)).toBe(false);
    const refused = await lookup({ number: invalid });
    expectSandboxError(refused, 400, 'bad-request', '/number');
    expect(refused.text).not.toContain(invalid);
    expect(refused.text).not.toContain(invalid.slice(6));

    const twelve = '411111000001';
    expect(isLuhnValid(twelve)).toBe(false);
    expectSandboxError(await lookup({ number: twelve }), 400, 'bad-request', '/number');
    expectSandboxError(await lookup({ number: '4111-1100-0001' }), 400, 'bad-request', '/number');

    const eleven = '41111100001';
    expect(isLuhnValid(eleven)).toBe(false);
    const partial = await lookup({ number: eleven });
    expect(partial.status).toBe(200);
    expect(partial.body.bin).toBe(411111);
  });

  it('400 bad-request for an absent, mistyped or malformed number', async () => {
    expectSandboxError(await lookup({}), 400, 'bad-request', '/number');
    expectSandboxError(await lookup({ number: null }), 400, 'bad-request', '/number');
    expectSandboxError(await lookup({ number: 510026 }), 400, 'bad-request', '/number');
    for (const number of ['', '51002', '5'.repeat(20), '51002a', 'abcdef', '510026******1001']) {
      expectSandboxError(await lookup({ number }), 400, 'bad-request', '/number');
    }
    expectSandboxError(await lookup([{ number: '510026' }]), 400, 'bad-request', '');
    expectSandboxError(await lookup('{"number":'), 400, 'bad-request', '');
    const nineteen = panWith('650031', 19);
    expect((await lookup({ number: nineteen })).status).toBe(200);
  });

  it('415 for another media type', () =>
    expectMediaTypeRefused(t, PATH, token1, '{"number":"510026"}', 'application/vnd.api+json'));

  it("resolves a tok_ alias through the caller's vault only", async () => {
    const pan = panWith('45560012');
    const created = await t.call('POST', '/card-interface/cards', {
      token: token1,
      contentType: 'application/vnd.api+json',
      body: { data: { type: 'cards', attributes: { pan, exp_month: 1, exp_year: 30, cvc: '123' } } },
    });
    expect(created.status).toBe(201);
    const { pan_alias, cvc_alias } = created.body.data.attributes;

    const found = await lookup({ number: pan_alias });
    expect(found.status).toBe(200);
    expect(found.body.bin).toBe(45560012);
    expect(found.text).not.toContain(pan);

    expectSandboxError(await lookup({ number: pan_alias }, token2), 404, 'not-found');
    expectSandboxError(await lookup({ number: 'tok_sandbox_0000000000000000000000' }), 404, 'not-found');
    expectSandboxError(await lookup({ number: cvc_alias }), 404, 'not-found');
  });

  it('404 not-found for a BIN the table does not know, whatever its family', async () => {
    expect(cardBrandOf(panWith('401288'))).toBe('visa');
    for (const number of ['999999', panWith('999999'), panWith('401288'), panWith('520000')]) {
      const response = await lookup({ number });
      expectSandboxError(response, 404, 'not-found');
      expect(response.text).not.toContain(number);
    }
  });

  it('401 without a valid token, 403 without card-attributes:basic', async () => {
    const anonymous = await t.call('POST', PATH, { body: { number: '510026' } });
    expectSandboxError(anonymous, 401, 'unauthorized');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const noScope = await t.token('tntsandbox1', 'cards:read network-tokens:read');
    expectSandboxError(await lookup({ number: '510026' }, noScope), 403, 'forbidden');
    const onlyScope = await t.token('tntsandbox1', 'card-attributes:basic');
    expect((await lookup({ number: '510026' }, onlyScope)).status).toBe(200);
  });
});
