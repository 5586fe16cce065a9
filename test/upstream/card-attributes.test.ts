import { beforeAll, describe, expect, it } from 'vitest';
import { CardAttributesClient } from '../../src/upstream/card-attributes/client.ts';
import { cardAttributesSchema } from '../../src/upstream/card-attributes/schemas.ts';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import {
  areaLogEntries,
  containsDigitRun,
  panWith,
  rejectionOf,
  US_PERSONAL_16_DIGITS,
  useUpstream,
} from '../support/fixtures.ts';

/** Card attributes client against the embedded sandbox (spec "Card attributes"; BIN table of the sandbox). */

const VAULT = 'tntsandbox1';
const LOOKUP_PATH = '/card-attributes/attributes/attributes';
const VERSION = 20261101;
const PANS_USED: string[] = [];

/** Records the PAN so the final test can check it never reached a log line. */
function pan(value: string): string {
  PANS_USED.push(value);
  return value;
}

// The specification's reading (upper-case brands, alpha-2 countries, 404 for unknown BINs); the
// documented one is in documented-answers.test.ts.
const fixture = useUpstream({ wire: 'specification' });
let cardAttributes: CardAttributesClient;
beforeAll(() => {
  cardAttributes = new CardAttributesClient(fixture.clientOptions('/card-attributes'));
});

const MASTERCARD_510026 = {
  bin: 510026,
  brand: 'MASTERCARD',
  issuingOrganization: expect.any(String),
  cardType: 'CREDIT',
  cardCategory: 'STANDARD',
  ...US_PERSONAL_16_DIGITS,
  version: VERSION,
};

describe('CardAttributesClient', () => {
  it('looks up a raw six-digit BIN', async () => {
    const attributes = await cardAttributes.lookup(VAULT, '510026');
    expect(attributes).toEqual(MASTERCARD_510026);
    expect(attributes.prepaidType).toBeUndefined();
    expect(attributes.cobadgedBrands).toBeUndefined();
  });

  it('looks up a PAN, plain and with single spaces or hyphens, preferring the eight-digit prefix', async () => {
    const prepaid = pan(panWith('45560012', '7788', 16));
    const spaced = prepaid.replace(/(\d{4})(?=\d)/g, '$1 ');
    const hyphenated = prepaid.replace(/(\d{4})(?=\d)/g, '$1-');
    expect(spaced).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
    const expected = {
      bin: 45560012,
      brand: 'VISA',
      issuingOrganization: expect.any(String),
      cardType: 'DEBIT',
      cardCategory: 'PREPAID',
      ...US_PERSONAL_16_DIGITS,
      version: VERSION,
      prepaidType: 'RELOADABLE',
    };
    for (const number of [prepaid, spaced, hyphenated]) {
      expect(await cardAttributes.lookup(VAULT, number)).toEqual(expected);
    }
    // Another PAN of the six-digit parent gets the parent's attributes.
    expect(await cardAttributes.lookup(VAULT, pan(panWith('45560099', '1234', 16)))).toMatchObject({
      bin: 455600,
      cardCategory: 'GOLD',
    });
  });

  it('looks up a partial PAN of 7 to 11 digits without the Luhn check', async () => {
    expect(await cardAttributes.lookup(VAULT, '5100261')).toEqual(MASTERCARD_510026);
    expect(await cardAttributes.lookup(VAULT, '5100-2600-001')).toEqual(MASTERCARD_510026);
  });

  it('passes co-badged brands through', async () => {
    expect(await cardAttributes.lookup(VAULT, '453201')).toMatchObject({
      bin: 453201,
      brand: 'VISA',
      cobadgedBrands: 'CARTES BANCAIRES',
      issuingCountryCode: 'FR',
    });
  });

  it('looks up a tok_ alias of the vault; another vault gets 404 not-found', async () => {
    const { panAlias } = await fixture.cardInterface.createCard(VAULT, {
      pan: pan('5100260000093003'),
      expMonth: 12,
      expYear: 30,
    });
    expect(panAlias).toMatch(/^tok_sandbox_[A-Za-z0-9]{22}$/);
    expect(await cardAttributes.lookup(VAULT, panAlias)).toEqual(MASTERCARD_510026);
    await expect(cardAttributes.lookup('tntsandbox2', panAlias)).rejects.toMatchObject({
      area: 'card-attributes',
      status: 404,
      code: 'not-found',
      retryable: false,
    });
  });

  it('maps a PAN failing Luhn to 400 bad-request with pointer /number, the PAN nowhere in the error', async () => {
    for (const number of [pan('4000210000993004'), pan('4000 2100 0099 3004')]) {
      const error = (await rejectionOf(cardAttributes.lookup(VAULT, number))) as UpstreamError;
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({
        area: 'card-attributes',
        status: 400,
        code: 'bad-request',
        pointer: '/number',
        retryable: false,
      });
      const text = `${error.message} ${error.detail} ${error.stack}`;
      expect(text).not.toContain('4000210000993004');
      expect(text).not.toContain('4000 2100 0099 3004');
      expect(containsDigitRun(text)).toBe(false);
    }
  });

  it('maps an unknown BIN and an unknown alias to 404 not-found', async () => {
    await expect(cardAttributes.lookup(VAULT, '999999')).rejects.toMatchObject({
      area: 'card-attributes',
      status: 404,
      code: 'not-found',
    });
    await expect(cardAttributes.lookup(VAULT, 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA')).rejects.toMatchObject({
      status: 404,
      code: 'not-found',
    });
  });

  it('refuses a number of the wrong shape with InvalidArgumentError before any request', async () => {
    const before = fixture.requestsTo('POST', LOOKUP_PATH);
    for (const bad of [
      '',
      '12345',
      '51002600000930031234',
      '5100  2600 0009 3003',
      '5100-2600-0009-3003--',
      ' 510026',
      'abc123',
      'tok_',
      'tok_sandbox_x/y',
    ]) {
      const error = (await rejectionOf(cardAttributes.lookup(VAULT, bad))) as InvalidArgumentError;
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.argument).toBe('number');
      expect(containsDigitRun(error.message)).toBe(false);
    }
    expect(fixture.requestsTo('POST', LOOKUP_PATH)).toBe(before);
  });

  it('sends each lookup as one POST and logs it without the number', () => {
    const calls = areaLogEntries(fixture.logLines, 'card-attributes');
    expect(calls).toContainEqual(
      expect.objectContaining({
        level: 20,
        method: 'POST',
        path: LOOKUP_PATH,
        status: 200,
        msg: 'upstream call',
      }),
    );
    const all = fixture.logLines.join('\n');
    for (const used of PANS_USED) expect(all).not.toContain(used);
    expect(all).not.toContain('tok_sandbox_');
    const withoutTime = fixture.logLines.map((line) => JSON.stringify({ ...JSON.parse(line), time: 0 }));
    expect(containsDigitRun(withoutTime.join('\n'))).toBe(false);
  });
});

describe('cardAttributesSchema', () => {
  const wire = {
    bin: 510026,
    brand: 'MASTERCARD',
    card_type: 'CREDIT',
    card_category: 'STANDARD',
    version: VERSION,
  };

  it('keeps enumeration values it does not know as strings', () => {
    expect(
      cardAttributesSchema.parse({
        ...wire,
        brand: 'UNIONPAY',
        card_type: 'DEFERRED_DEBIT',
        card_category: 'TITANIUM',
        prepaid_type: 'GIFT',
      }),
    ).toEqual({
      bin: 510026,
      brand: 'UNIONPAY',
      cardType: 'DEFERRED_DEBIT',
      cardCategory: 'TITANIUM',
      prepaidType: 'GIFT',
      version: VERSION,
    });
  });

  it('refuses drift in types: bin or version as strings, an empty enumeration value, a missing version', () => {
    expect(cardAttributesSchema.safeParse({ ...wire, bin: '510026' }).success).toBe(false);
    expect(cardAttributesSchema.safeParse({ ...wire, version: '20261101' }).success).toBe(false);
    expect(cardAttributesSchema.safeParse({ ...wire, card_type: '' }).success).toBe(false);
    expect(cardAttributesSchema.safeParse({ ...wire, version: undefined }).success).toBe(false);
  });
});
