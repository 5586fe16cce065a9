import { describe, expect, it, vi } from 'vitest';
import { replacementPan } from '../../src/sandbox/test-cards.ts';
import type { AccountUpdaterCard } from '../../src/upstream/account-updater/client.ts';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import { containsDigitRun, panWith, rejectionOf, useUpstream, WAIT } from '../support/fixtures.ts';
import { DOCUMENTED } from '../support/wire.ts';

/** Account updater v1 client against the embedded sandbox (spec "Account updater"; contract §5). */

const VAULT = 'tntsandbox1';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Format-preserving alias: BIN, 7 Base62 characters, last four (docs/gap-decisions.md "Identifiers"). */
const aliasOf = (pan: string) => new RegExp(`^${pan.slice(0, 6)}[A-Za-z0-9]{7}${pan.slice(-4)}$`);
/** A 16-digit PAN (or its format-preserving alias) masked to BIN and last four. */
const maskedOf = (pan: string) => `${pan.slice(0, 6)}******${pan.slice(-4)}`;

const BILLING_ADDRESS = {
  name: 'Grace Hopper',
  address1: '1 Navy Way',
  city: 'Arlington',
  postalCode: '22202',
  country: 'US',
};

const fixture = useUpstream();

/** Enrols `number` in {@link VAULT} for cardholder `name`, expiring 01/30. */
const enrol = (name: string, number: string) =>
  fixture.accountUpdater.enrollCard(VAULT, { name, number, expMonth: 1, expYear: 30 });

/** Checks `number` in {@link VAULT} for cardholder `name`, expiring 04/30. */
const check = (name: string, number: string) =>
  fixture.accountUpdater.checkCard(VAULT, { name, number, expMonth: 4, expYear: 30 });

/** Reads the card until it is in `state`, and returns it. */
function waitForState(cardId: string, state: string): Promise<AccountUpdaterCard> {
  return vi.waitFor(async () => {
    const card = await fixture.accountUpdater.getCard(VAULT, cardId);
    expect(card.state).toBe(state);
    return card;
  }, WAIT);
}

describe('AccountUpdaterClient', () => {
  it('enrols a normal card (enrolling), which then completes to enrolled', async () => {
    const pan = panWith('510026', '7777', 16);
    const enrolled = await fixture.accountUpdater.enrollCard(VAULT, {
      name: 'Grace Hopper',
      number: pan,
      expMonth: 7,
      expYear: 31,
      billingAddress: BILLING_ADDRESS,
      merchant: { subMerchantName: 'Corner Shop' },
    });
    expect(enrolled).toEqual({
      id: expect.stringMatching(/^CRD[A-Za-z0-9]{22}$/),
      name: 'Grace Hopper',
      numberAlias: expect.stringMatching(aliasOf(pan)),
      maskedNumber: maskedOf(pan),
      expMonth: 7,
      expYear: 31,
      billingAddress: BILLING_ADDRESS,
      merchant: {
        serviceMerchantId: 'SMsandbox1merchant00001',
        subMerchantName: 'Corner Shop',
        subMerchantMid: 100001,
      },
      capabilities: [],
      state: 'enrolling',
      event: 'au_card.enrolling',
      createdAt: expect.stringMatching(ISO_UTC),
      updatedAt: expect.stringMatching(ISO_UTC),
    });
    const done = await waitForState(enrolled.id, 'enrolled');
    expect(done).toMatchObject({
      id: enrolled.id,
      numberAlias: enrolled.numberAlias,
      state: 'enrolled',
      event: 'au_card.enrolled',
      capabilities: ['ACCOUNT_UPDATER'],
    });
    expect(JSON.stringify(done)).not.toContain(pan);

    const checked = await fixture.accountUpdater.checkCard(VAULT, {
      name: 'Grace Hopper',
      number: enrolled.numberAlias,
      expMonth: 7,
      expYear: 31,
      cvv: '123',
    });
    // Documented (sandbox contract §8): the answer's plain PAN reaches the domain masked only and its
    // CVV not at all; the specification's reading answers the alias.
    expect(checked).toEqual({
      name: 'Grace Hopper',
      ...(DOCUMENTED ? {} : { numberAlias: enrolled.numberAlias }),
      maskedNumber: maskedOf(pan),
      expMonth: 7,
      expYear: 31,
      event: 'au_card.valid',
    });
    expect(JSON.stringify(checked)).not.toContain(pan);
    expect(fixture.logLines.join('\n')).not.toContain(pan);
  });

  it('returns the immediate outcome of 1xxx test cards, whose ids then answer 404 card-not-found', async () => {
    const updated = await enrol('A', '5100260000391001');
    expect(updated).toMatchObject({
      state: 'enrolled',
      event: 'au_card.updated',
      capabilities: ['ACCOUNT_UPDATER'],
    });
    expect(updated.numberAlias).toMatch(aliasOf(replacementPan('5100260000391001')));

    const expiry = await enrol('B', '5100260000791002');
    expect(expiry).toMatchObject({ state: 'enrolled', event: 'au_card.updated', expYear: 33 });

    const error = await rejectionOf(fixture.accountUpdater.getCard(VAULT, updated.id));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      area: 'account-updater',
      status: 404,
      code: 'card-not-found',
      retryable: false,
    });
  });

  it('maps the 422 codes of enrolment', async () => {
    await expect(enrol('C', '5100260000991099')).rejects.toMatchObject({
      status: 422,
      code: 'account-updater-not-supported',
      retryable: false,
    });
    await expect(enrol('D', '30569309025904')).rejects.toMatchObject({
      status: 422,
      code: 'card-brand-not-supported',
      retryable: false,
    });
  });

  it('maps merchant errors: 400 with pointer, 404 merchant-not-found', async () => {
    const pan = panWith('400021', '7001', 16);
    const missing = (await rejectionOf(
      fixture.accountUpdater.enrollCard('tntsandbox2', {
        name: 'E',
        number: pan,
        expMonth: 1,
        expYear: 30,
        merchant: { subMerchantName: 'Shop' },
      }),
    )) as UpstreamError;
    expect(missing).toMatchObject({
      area: 'account-updater',
      status: 400,
      code: 'bad-request',
      pointer: DOCUMENTED ? '/merchant/vgs_merchant_id' : '/merchant/service_merchant_id',
      retryable: false,
    });
    await expect(
      fixture.accountUpdater.checkCard('tntsandbox2', {
        name: 'E',
        number: pan,
        expMonth: 1,
        expYear: 30,
        merchant: { serviceMerchantId: 'SMunknown', subMerchantName: 'Shop' },
      }),
    ).rejects.toMatchObject({ status: 404, code: 'merchant-not-found' });
    const checked = await fixture.accountUpdater.checkCard('tntsandbox2', {
      name: 'E',
      number: pan,
      expMonth: 1,
      expYear: 30,
      merchant: { serviceMerchantId: 'SMsandbox2merchant00002', subMerchantName: 'Shop' },
    });
    expect(checked.merchant).toEqual({
      serviceMerchantId: 'SMsandbox2merchant00002',
      subMerchantName: 'Shop',
      subMerchantMid: 200002,
    });
  });

  it('checks cards: 3001 new number as an alias, Amex not enrolled 422, JCB failure_code', async () => {
    const updated = await check('F', '4000210000593001');
    const replaced = replacementPan('4000210000593001');
    expect(updated).toEqual({
      name: 'F',
      ...(DOCUMENTED ? {} : { numberAlias: expect.stringMatching(aliasOf(replaced)) }),
      maskedNumber: maskedOf(replaced),
      expMonth: 4,
      expYear: 30,
      event: 'au_card.updated',
    });
    await expect(check('G', '378282000193001')).rejects.toMatchObject({
      status: 422,
      code: 'account-updater-not-supported',
    });
    expect(await check('H', '3530111333300000')).toMatchObject({
      event: 'au_card.non_participating',
      failureCode: 'account-updater-not-supported',
    });
  });

  it('checks a 19-digit PAN: its digits survive the JSON number of the documented answer until masked', async () => {
    const pan = panWith('400021', '7719', 19);
    expect(await check('K', pan)).toEqual({
      name: 'K',
      ...(DOCUMENTED
        ? { maskedNumber: '400021*********7719' }
        : { numberAlias: expect.stringMatching(aliasOf(pan)), maskedNumber: '400021******7719' }),
      expMonth: 4,
      expYear: 30,
      event: 'au_card.valid',
    });
    expect(fixture.logLines.join('\n')).not.toContain(pan);
  });

  it('keeps the number out of a 400 error and carries its pointer', async () => {
    const error = (await rejectionOf(check('I', '4000210000593002'))) as UpstreamError;
    expect(error).toMatchObject({ status: 400, code: 'bad-request', pointer: '/number' });
    expect(containsDigitRun(`${error.message} ${error.detail} ${error.stack}`)).toBe(false);
  });

  it('answers 404 for a card of another vault and refuses malformed ids without a request', async () => {
    const { id } = await enrol('J', panWith('510026', '8888', 16));
    await expect(fixture.accountUpdater.getCard('tntsandbox2', id)).rejects.toMatchObject({
      status: 404,
      code: 'card-not-found',
    });
    const before = fixture.sandbox.requests().length;
    for (const bad of ['CRD-1', 'abc', 'CRD?x=1']) {
      expect(await rejectionOf(fixture.accountUpdater.getCard(VAULT, bad))).toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    expect(fixture.sandbox.requests().length).toBe(before);
  });
});
