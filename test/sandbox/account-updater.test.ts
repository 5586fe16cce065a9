import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replacementPan, SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import {
  expectSandboxErrorAnswer,
  SANDBOX_BILLING_ADDRESS,
  startSandbox,
  type TestSandbox,
  WAIT,
} from '../support/fixtures.ts';
import { DOCUMENTED, MERCHANT_ID_MEMBER, V1_CHECK_STATUS, V1_ENROL_STATUS } from '../support/wire.ts';

const CARD_ID = /^CRD[0-9A-Za-z]{22}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Long enough that a read right after enrolment still sees it enrolling on a loaded machine. */
const DELAY_MS = 200;

/** Format-preserving alias of a PAN per gap decisions: BIN + 7 Base62 with a letter + last four. */
const fpeAliasOf = (pan: string) =>
  new RegExp(`^${pan.slice(0, 6)}(?=[0-9]*[A-Za-z])[0-9A-Za-z]{7}${pan.slice(-4)}$`);

let t: TestSandbox;
let token1: string;
let token2: string;

beforeAll(async () => {
  t = await startSandbox({ webhookDelayMs: DELAY_MS });
  token1 = await t.token('tntsandbox1');
  token2 = await t.token('tntsandbox2');
});
afterAll(() => t.stop());

/** A request merchant of vault 2 as the gateway writes it (documented `vgs_merchant_id`). */
const MERCHANT_2 = { vgs_merchant_id: 'SMsandbox2merchant00002', sub_merchant_name: 'Shop Two' };
/** The same merchant as the wire reading answers it. */
const MERCHANT_2_ANSWER = {
  [MERCHANT_ID_MEMBER]: 'SMsandbox2merchant00002',
  sub_merchant_name: 'Shop Two',
  sub_merchant_mid: 200002,
};

const enrol = (body: Record<string, unknown>, token = token1) =>
  t.call('POST', '/account-updater/cards', { token, body });
const enrolCard = (number: string, extra: Record<string, unknown> = {}, token = token1) =>
  enrol({ name: 'Ada Lovelace', number, exp_month: 11, exp_year: 29, ...extra }, token);
const getCard = (id: string, token = token1) => t.call('GET', `/account-updater/cards/${id}`, { token });
const cardCheck = (body: Record<string, unknown>, token = token1) =>
  t.call('POST', '/account-updater/card-check', { token, body });

describe('POST /account-updater/cards: normal cards', () => {
  it('answers enrolling, then enrolled after the delay; GET by its vault only', async () => {
    const billing_address = SANDBOX_BILLING_ADDRESS;
    const response = await enrolCard('4111111111111111', { billing_address });
    expect(response.status).toBe(V1_ENROL_STATUS);
    expect(response.headers.get('content-type')).toBe('application/json');
    const { data } = response.body;
    const { id, number, created_at, updated_at, ...rest } = data;
    expect(id).toMatch(CARD_ID);
    expect(number).toMatch(fpeAliasOf('4111111111111111'));
    expect(created_at).toMatch(ISO);
    expect(updated_at).toBe(created_at);
    expect(rest).toEqual({
      name: 'Ada Lovelace',
      exp_month: 11,
      exp_year: 29,
      billing_address,
      capabilities: [],
      state: 'enrolling',
      // Spec "Enroll request rules" 5: the synchronous answer reports the latest event type.
      event: 'au_card.enrolling',
    });
    expect(response.text).not.toContain('4111111111111111');

    const whileEnrolling = await getCard(id);
    expect(whileEnrolling.status).toBe(200);
    expect(whileEnrolling.body).toEqual(response.body);

    await expect.poll(async () => (await getCard(id)).body.data.state).toBe('enrolled');
    const enrolled = await getCard(id);
    expect(enrolled.status).toBe(200);
    expect(enrolled.body.data).toMatchObject({
      id,
      number,
      state: 'enrolled',
      event: 'au_card.enrolled',
      capabilities: ['ACCOUNT_UPDATER'],
      created_at,
    });
    expect(enrolled.body.data.updated_at).toMatch(ISO);

    const other = await getCard(id, token2);
    expect(other.status).toBe(404);
    expect(other.body).toEqual({
      errors: [{ status: '404', code: 'card-not-found', detail: 'no card with this id in the vault' }],
    });
  });

  it('keeps one format-preserving alias per PAN and vault, and accepts it and tok_ aliases as number', async () => {
    const first = await enrolCard('5555555555554444');
    const second = await enrolCard(first.body.data.number);
    expect(second.status).toBe(V1_ENROL_STATUS);
    expect(second.body.data.number).toBe(first.body.data.number);
    const otherVault = await enrolCard('5555555555554444', { merchant: MERCHANT_2 }, token2);
    expect(otherVault.body.data.number).not.toBe(first.body.data.number);

    const ci = await t.call('POST', '/card-interface/cards', {
      token: token1,
      contentType: 'application/vnd.api+json',
      body: { data: { type: 'cards', attributes: { pan: '5555555555554444', exp_month: 1, exp_year: 30 } } },
    });
    const viaTok = await enrolCard(ci.body.data.attributes.pan_alias);
    expect(viaTok.status).toBe(V1_ENROL_STATUS);
    expect(viaTok.body.data.number).toBe(first.body.data.number);

    const foreign = await enrolCard(first.body.data.number, { merchant: MERCHANT_2 }, token2);
    expectSandboxErrorAnswer(foreign, 400, 'bad-request', 'number: unknown alias', '/number');
  });
});

describe('POST /account-updater/cards: test cards of §5.1 and §5.2', () => {
  const IMMEDIATE = SANDBOX_TEST_CARDS.filter(
    (c) => c.table === 'enrolment-immediate' && c.scenario !== '1099',
  );
  it.each(IMMEDIATE.map((c) => [c.scenario, c.pan, c.outcome] as const))(
    'scenario %s (%s) answers enrolled with %s, is not saved',
    async (scenario, pan, event) => {
      const response = await enrolCard(pan);
      expect(response.status).toBe(V1_ENROL_STATUS);
      const { data } = response.body;
      expect(data.state).toBe('enrolled');
      expect(data.event).toBe(event);
      expect(data.capabilities).toEqual(['ACCOUNT_UPDATER']);
      expect(data.id).toMatch(CARD_ID);
      if (scenario === '1001') {
        expect(data.number).toMatch(new RegExp(`^${pan.slice(0, 6)}[0-9A-Za-z]{7}\\d{4}$`));
        expect(data.number).not.toMatch(fpeAliasOf(pan));
        expect(data.number.slice(-4)).not.toBe(pan.slice(-4));
      } else {
        expect(data.number).toMatch(fpeAliasOf(pan));
      }
      expect(data.exp_year).toBe(scenario === '1002' ? 32 : 29);
      expect(data.exp_month).toBe(11);
      expect(response.text).not.toContain(pan);
      const got = await getCard(data.id);
      expect(got.status).toBe(404);
      expect(got.body.errors[0].code).toBe('card-not-found');
    },
  );

  it('1099 answers 422 account-updater-not-supported', async () => {
    const response = await enrolCard('5100260000991099');
    expectSandboxErrorAnswer(
      response,
      422,
      'account-updater-not-supported',
      'account updater is not supported for this card (sandbox test card)',
    );
  });

  const WEBHOOK = SANDBOX_TEST_CARDS.filter((c) => c.table === 'enrolment-webhook');
  it.each(WEBHOOK.map((c) => [c.scenario, c.pan] as const))(
    'scenario %s (%s) answers enrolling and is never saved',
    async (_scenario, pan) => {
      const response = await enrolCard(pan);
      expect(response.status).toBe(V1_ENROL_STATUS);
      expect(response.body.data.state).toBe('enrolling');
      expect(response.body.data.capabilities).toEqual([]);
      expect(response.body.data.event).toBe('au_card.enrolling');
      expect((await getCard(response.body.data.id)).status).toBe(404);
      // Quiet window: enrolment would complete DELAY_MS after the request; past it the card must
      // still not exist, and nothing announces that it was not saved.
      await sleep(DELAY_MS + 50);
      expect((await getCard(response.body.data.id)).status).toBe(404);
    },
  );
});

describe('POST /account-updater/cards: merchants, brands, validation', () => {
  it('vault 1 (one merchant): merchant optional, resolved by sub_merchant_name alone', async () => {
    const without = await enrolCard('4111111111111111');
    expect(without.body.data.merchant).toBeUndefined();
    const withName = await enrolCard('4111111111111111', { merchant: { sub_merchant_name: 'Shop One' } });
    expect(withName.status).toBe(V1_ENROL_STATUS);
    expect(withName.body.data.merchant).toEqual({
      [MERCHANT_ID_MEMBER]: 'SMsandbox1merchant00001',
      sub_merchant_name: 'Shop One',
      sub_merchant_mid: 100001,
    });
    const noName = await enrolCard('4111111111111111', {
      merchant: { service_merchant_id: 'SMsandbox1merchant00001' },
    });
    expectSandboxErrorAnswer(
      noName,
      400,
      'bad-request',
      'merchant.sub_merchant_name is required when submitting on behalf of a merchant',
      '/merchant/sub_merchant_name',
    );
    const unknown = await enrolCard('4111111111111111', {
      merchant: { service_merchant_id: 'SMsandbox2merchant00001', sub_merchant_name: 'x' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].code).toBe('merchant-not-found');
  });

  it('vault 2 (two merchants): the merchant id required, each merchant echoed', async () => {
    const missing = await enrolCard('4111111111111111', {}, token2);
    expectSandboxErrorAnswer(
      missing,
      400,
      'bad-request',
      `merchant.${MERCHANT_ID_MEMBER} is required: several merchants are registered in this vault`,
      `/merchant/${MERCHANT_ID_MEMBER}`,
    );
    const nameOnly = await enrolCard('4111111111111111', { merchant: { sub_merchant_name: 'Shop' } }, token2);
    expect(nameOnly.status).toBe(400);
    expect(nameOnly.body.errors[0].source.pointer).toBe(`/merchant/${MERCHANT_ID_MEMBER}`);
    const empty = await enrolCard('4111111111111111', { merchant: {} }, token2);
    expect(empty.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual([
      `/merchant/${MERCHANT_ID_MEMBER}`,
      '/merchant/sub_merchant_name',
    ]);
    const unknown = await enrolCard(
      '4111111111111111',
      { merchant: { service_merchant_id: 'SMsandbox2merchant00003', sub_merchant_name: 'x' } },
      token2,
    );
    expectSandboxErrorAnswer(
      unknown,
      404,
      'merchant-not-found',
      'no merchant with this merchant id in the vault',
    );
    // The request's merchant id under either name (documented `vgs_merchant_id`, the
    // specification's `service_merchant_id`) is read as the same thing.
    for (const [id, mid, name] of [
      ['SMsandbox2merchant00001', 200001, 'vgs_merchant_id'],
      ['SMsandbox2merchant00002', 200002, 'service_merchant_id'],
    ] as const) {
      const ok = await enrolCard(
        '4111111111111111',
        { merchant: { [name]: id, sub_merchant_name: 'Shop' } },
        token2,
      );
      expect(ok.status).toBe(V1_ENROL_STATUS);
      expect(ok.body.data.merchant).toEqual({
        [MERCHANT_ID_MEMBER]: id,
        sub_merchant_name: 'Shop',
        sub_merchant_mid: mid,
      });
      await expect
        .poll(async () => (await getCard(ok.body.data.id, token2)).body.data.state, WAIT)
        .toBe('enrolled');
      const got = await getCard(ok.body.data.id, token2);
      expect(got.body.data.merchant).toEqual(ok.body.data.merchant);
    }
  });

  it.each(['36227206271667', '3530111333300000'])(
    'Diners Club / JCB %s: 422 card-brand-not-supported',
    async (pan) => {
      const response = await enrolCard(pan);
      expect(response.status).toBe(422);
      expect(response.body.errors[0].code).toBe('card-brand-not-supported');
      expect(response.text).not.toContain(pan);
    },
  );

  it.each([
    ['missing name', { number: '4111111111111111', exp_month: 1, exp_year: 29 }, '/name'],
    ['missing number', { name: 'A', exp_month: 1, exp_year: 29 }, '/number'],
    ['non-Luhn number', { name: 'A', number: '4111111111111112', exp_month: 1, exp_year: 29 }, '/number'],
    ['garbage number', { name: 'A', number: 'abc', exp_month: 1, exp_year: 29 }, '/number'],
    ['unknown alias', { name: 'A', number: '411111AbCdEfG1111', exp_month: 1, exp_year: 29 }, '/number'],
    ['unknown family', { name: 'A', number: '1234567812345670', exp_month: 1, exp_year: 29 }, '/number'],
    ['exp_month 0', { name: 'A', number: '4111111111111111', exp_month: 0, exp_year: 29 }, '/exp_month'],
    ['exp_year string', { name: 'A', number: '4111111111111111', exp_month: 1, exp_year: '29' }, '/exp_year'],
  ])('answers 400 for %s', async (_name, body, pointer) => {
    const response = await enrol(body);
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatchObject({
      status: '400',
      code: 'bad-request',
      source: { pointer },
    });
    expect(response.text).not.toMatch(/4111111111111112|1234567812345670/);
  });

  it('answers 400 for a body that is not an object', async () => {
    const response = await t.call('POST', '/account-updater/cards', { token: token1, body: '[1]' });
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatchObject({ code: 'bad-request', source: { pointer: '' } });
  });
});

describe('GET /account-updater/cards/{card_id}', () => {
  it('answers 400 for an id not matching ^CRD.*$ and 404 for an unknown id', async () => {
    const bad = await getCard('card123');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      { status: '400', code: 'bad-request', detail: 'card_id must match ^CRD.*$' },
    ]);
    const unknown = await getCard('CRDAAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].code).toBe('card-not-found');
  });
});

describe('POST /account-updater/card-check', () => {
  const VISA_MC = SANDBOX_TEST_CARDS.filter(
    (c) => c.table === 'card-check' && (c.brand === 'visa' || c.brand === 'mastercard'),
  ).map((c) => [c.scenario, c.pan, c.outcome] as const);

  it.each(VISA_MC)('scenario %s (%s) answers %s', async (scenario, pan, event) => {
    const response = await cardCheck({ name: 'Ada', number: pan, exp_month: 4, exp_year: 28, cvv: '123' });
    expect(response.status).toBe(V1_CHECK_STATUS);
    expect(response.headers.get('content-type')).toBe('application/json');
    const { data } = response.body;
    expect(data.event).toBe(event);
    expect(data.name).toBe('Ada');
    expect(data.exp_month).toBe(4);
    expect(data.exp_year).toBe(scenario === '3002' ? 31 : 28);
    const current = scenario === '3001' ? replacementPan(pan) : pan;
    if (DOCUMENTED) {
      // Sandbox contract §8: the documented answer carries the plain PAN and the CVV as JSON numbers.
      expect(Object.keys(data).sort()).toEqual(['cvv', 'event', 'exp_month', 'exp_year', 'name', 'number']);
      expect(response.text).toContain(`"number":${current},`);
      expect(data.cvv).toBe(123);
    } else {
      expect(Object.keys(data).sort()).toEqual(['event', 'exp_month', 'exp_year', 'name', 'number']);
      expect(data.number).toMatch(fpeAliasOf(current));
      expect(response.text).not.toContain(pan);
      expect(response.text).not.toContain('123');
    }
    if (scenario === '3001') expect(current.slice(-4)).not.toBe(pan.slice(-4));
  });

  it.each([
    ['378282000193001', 'au_card.updated'],
    ['6011000000493001', 'au_card.updated'],
    ['378282000093003', 'au_card.valid'],
    ['6011000000393003', 'au_card.valid'],
  ])('Amex/Discover %s: 422 until enrolled in the vault, then %s', async (pan, event) => {
    const body = { number: pan, exp_month: 4, exp_year: 28 };
    const refused = await cardCheck(body);
    expectSandboxErrorAnswer(
      refused,
      422,
      'account-updater-not-supported',
      'American Express and Discover cards can be checked only when enrolled in account updater',
    );
    const enrolled = await enrolCard(pan);
    expect(enrolled.body.data.state).toBe('enrolling');
    expect((await cardCheck(body)).status).toBe(422);
    await expect
      .poll(async () => (await getCard(enrolled.body.data.id)).body.data.state, WAIT)
      .toBe('enrolled');
    const response = await cardCheck(body);
    expect(response.status).toBe(V1_CHECK_STATUS);
    expect(response.body.data.event).toBe(event);
    // Enrolment is per vault.
    expect((await cardCheck({ ...body, merchant: MERCHANT_2 }, token2)).status).toBe(422);
  });

  it('Amex enrolled through a card interface subscription can be checked', async () => {
    const pan = '371449635398431';
    expect((await cardCheck({ number: pan, exp_month: 1, exp_year: 30 })).status).toBe(422);
    const ci = await t.call('POST', '/card-interface/cards', {
      token: token1,
      contentType: 'application/vnd.api+json',
      body: { data: { type: 'cards', attributes: { pan, exp_month: 1, exp_year: 30 } } },
    });
    await t.call('POST', `/card-interface/cards/${ci.body.data.id}/card-update-subscriptions`, {
      token: token1,
    });
    // The documented card check takes no tok_ alias (contract §8): the PAN itself there.
    const response = await cardCheck({
      number: DOCUMENTED ? pan : ci.body.data.attributes.pan_alias,
      exp_month: 1,
      exp_year: 30,
    });
    expect(response.status).toBe(V1_CHECK_STATUS);
    expect(response.body.data.event).toBe('au_card.valid');
  });

  it('answers valid for a normal card and non_participating with failure_code for Diners Club / JCB', async () => {
    const normal = await cardCheck({ number: '4111111111111111', exp_month: 4, exp_year: 28 });
    expect(normal.body.data).toEqual({
      number: DOCUMENTED ? 4111111111111111 : expect.stringMatching(fpeAliasOf('4111111111111111')),
      exp_month: 4,
      exp_year: 28,
      event: 'au_card.valid',
    });
    for (const pan of ['36227206271667', '3530111333300000']) {
      const response = await cardCheck({ number: pan, exp_month: 4, exp_year: 28 });
      expect(response.status).toBe(V1_CHECK_STATUS);
      expect(response.body.data.event).toBe('au_card.non_participating');
      expect(response.body.data.failure_code).toBe('account-updater-not-supported');
    }
  });

  it('applies the merchant rules and echoes the merchant', async () => {
    const missing = await cardCheck({ number: '4111111111111111', exp_month: 4, exp_year: 28 }, token2);
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].source.pointer).toBe(`/merchant/${MERCHANT_ID_MEMBER}`);
    const ok = await cardCheck(
      { number: '4111111111111111', exp_month: 4, exp_year: 28, merchant: MERCHANT_2 },
      token2,
    );
    expect(ok.status).toBe(V1_CHECK_STATUS);
    expect(ok.body.data.merchant).toEqual(MERCHANT_2_ANSWER);
  });

  it('documented: holds the request to the documented limits (name, number, exp_year); specification: takes them', async () => {
    const ci = await t.call('POST', '/card-interface/cards', {
      token: token1,
      contentType: 'application/vnd.api+json',
      body: { data: { type: 'cards', attributes: { pan: '4111111111111111', exp_month: 1, exp_year: 30 } } },
    });
    const body = {
      name: 'N'.repeat(256),
      number: ci.body.data.attributes.pan_alias,
      exp_month: 4,
      exp_year: 2030,
    };
    const response = await cardCheck(body);
    if (DOCUMENTED) {
      expect(response.status).toBe(400);
      expect(response.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual([
        '/name',
        '/number',
        '/exp_year',
      ]);
    } else {
      expect(response.status).toBe(V1_CHECK_STATUS);
      expect(response.body.data.event).toBe('au_card.valid');
    }
  });

  it.each([
    ['cvv of 2 digits', { number: '4111111111111111', exp_month: 1, exp_year: 28, cvv: '12' }, '/cvv'],
    ['cvv as a number', { number: '4111111111111111', exp_month: 1, exp_year: 28, cvv: 123 }, '/cvv'],
    ['exp_month 13', { number: '4111111111111111', exp_month: 13, exp_year: 28 }, '/exp_month'],
    ['missing exp_year', { number: '4111111111111111', exp_month: 1 }, '/exp_year'],
    ['non-Luhn number', { number: '4111111111111112', exp_month: 1, exp_year: 28 }, '/number'],
  ])('answers 400 for %s', async (_name, body, pointer) => {
    const response = await cardCheck(body);
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatchObject({ code: 'bad-request', source: { pointer } });
  });
});
