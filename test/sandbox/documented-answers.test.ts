import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSandboxErrorAnswer, leftover, startSandbox, type TestSandbox } from '../support/fixtures.ts';

/**
 * The sandbox's documented wire (`SANDBOX_WIRE=documented`, the default; sandbox contract §8) for the
 * card interface, card attributes and organization members: the members, statuses and envelopes of
 * the provider's examples (`../shared/provider-docs/examples.json`). The specification's readings are
 * tested in card-interface.test.ts, card-attributes.test.ts and organization-members.test.ts.
 */

const JSON_API = 'application/vnd.api+json';
/** The card interface test table's ids: `CRD` + 49, 52 characters (examples.json). */
const LONG_CARD_ID = /^CRD[0-9A-Za-z]{49}$/;
const TOK = /^tok_sandbox_[0-9A-Za-z]{22}$/;

let t: TestSandbox;
let token1: string;
let token2: string;

beforeAll(async () => {
  t = await startSandbox({ wire: 'documented', duplicateCardCheckVaults: ['tntsandbox2'] });
  [token1, token2] = await Promise.all([t.token('tntsandbox1'), t.token('tntsandbox2')]);
});
afterAll(() => t.stop());

const createCard = (token: string, attributes: Record<string, unknown>, sandbox: TestSandbox = t) =>
  sandbox.call('POST', '/card-interface/cards', {
    token,
    contentType: JSON_API,
    body: { data: { type: 'cards', attributes } },
  });

describe('card interface POST /cards, documented', () => {
  it('answers 201 with the documented members: pan, cvc, bin, first8, last4, no brand nor timestamps', async () => {
    const response = await createCard(token1, {
      pan: '4111111111111111',
      cvc: '123',
      cvc_status: 'active',
      exp_month: 4,
      exp_year: 28,
    });
    expect(response.status).toBe(201);
    const { data } = response.body;
    expect(data.id).toMatch(LONG_CARD_ID);
    expect(data.type).toBe('cards');
    expect(data).not.toHaveProperty('meta');
    expect(data.attributes).toEqual({
      pan: '4111111111111111',
      cvc_status: 'active',
      pan_alias: expect.stringMatching(TOK),
      cvc: '123',
      cvc_alias: expect.stringMatching(TOK),
      bin: '411111',
      first8: '41111111',
      last4: '1111',
      exp_month: 4,
      exp_year: 28,
    });
    // The documented example's attribute names, in its order, come first.
    expect(Object.keys(data.attributes).slice(0, 8)).toEqual([
      'pan',
      'cvc_status',
      'pan_alias',
      'cvc',
      'cvc_alias',
      'bin',
      'first8',
      'last4',
    ]);

    const read = await t.call('GET', `/card-interface/cards/${data.id}`, { token: token1 });
    expect(read.status).toBe(200);
    expect(read.body.data.attributes).toMatchObject({ brand: 'visa', bin: '411111', last4: '1111' });
    expect(read.body.data.attributes.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/);
    expect(read.text).not.toMatch(/4111111111111111|"cvc"/);
  });

  it('echoes the CVC behind a cvc_alias, and meta when sent', async () => {
    const first = await createCard(token1, {
      pan: '5555555555554444',
      cvc: '737',
      exp_month: 5,
      exp_year: 32,
    });
    const response = await t.call('POST', '/card-interface/cards', {
      token: token1,
      contentType: JSON_API,
      body: {
        data: {
          attributes: {
            pan_alias: first.body.data.attributes.pan_alias,
            cvc_alias: first.body.data.attributes.cvc_alias,
            exp_month: 5,
            exp_year: 32,
          },
          meta: { customer_id: 7 },
        },
      },
    });
    expect(response.status).toBe(201);
    expect(response.body.data.attributes).toMatchObject({
      pan: '5555555555554444',
      cvc: '737',
      last4: '4444',
    });
    expect(response.body.data.meta).toEqual({ customer_id: 7 });
  });

  it('creates a new card for a PAN already on file in a vault without Duplicate Card Check', async () => {
    const first = await createCard(token1, { pan: '4000056655665556', exp_month: 3, exp_year: 30 });
    const second = await createCard(token1, { pan: '4000056655665556', exp_month: 3, exp_year: 30 });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
  });

  it('answers 303 with the existing card for a PAN already on file in a vault with Duplicate Card Check on', async () => {
    const first = await createCard(token2, { pan: '378282246310005', exp_month: 1, exp_year: 31 });
    expect(first.status).toBe(201);
    const id = first.body.data.id as string;
    const again = await createCard(token2, {
      pan: '378282246310005',
      cvc: '1234',
      exp_month: 2,
      exp_year: 33,
    });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(`/card-interface/cards/${id}`);
    expect(again.headers.get('content-type')).toBe(JSON_API);
    expect(again.body).toEqual({ data: { type: 'cards', id } });
    // Through its alias too, and the existing card is unchanged.
    const byAlias = await createCard(token2, {
      pan_alias: first.body.data.attributes.pan_alias,
      exp_month: 1,
      exp_year: 31,
    });
    expect(byAlias.status).toBe(303);
    const read = await t.call('GET', `/card-interface/cards/${id}`, { token: token2 });
    expect(read.body.data.attributes).toMatchObject({ exp_month: 1, exp_year: 31 });
    expect(read.body.data.attributes).not.toHaveProperty('cvc_alias');
    // Another vault's card with the same PAN is no duplicate.
    expect((await createCard(token1, { pan: '378282246310005', exp_month: 1, exp_year: 31 })).status).toBe(
      201,
    );
  });

  it('has Duplicate Card Check off unless turned on, and never in the specification wire', async () => {
    const card = { pan: '6011111111111117', exp_month: 2, exp_year: 28 };
    for (const options of [
      { wire: 'documented' as const },
      { wire: 'specification' as const, duplicateCardCheckVaults: ['tntsandbox1'] },
    ]) {
      const sandbox = leftover(await startSandbox(options), (s) => s.stop());
      const token = await sandbox.token('tntsandbox1');
      expect((await createCard(token, card, sandbox)).status).toBe(201);
      expect((await createCard(token, card, sandbox)).status).toBe(201);
    }
  });

  it('turns Duplicate Card Check per vault with the duplicateCardCheckVaults option', async () => {
    const sandbox = leftover(
      await startSandbox({ wire: 'documented', duplicateCardCheckVaults: ['tntsandbox1'] }),
      (s) => s.stop(),
    );
    const [one, two] = await Promise.all([sandbox.token('tntsandbox1'), sandbox.token('tntsandbox2')]);
    const card = { pan: '6011111111111117', exp_month: 2, exp_year: 28 };
    expect((await createCard(one, card, sandbox)).status).toBe(201);
    expect((await createCard(one, card, sandbox)).status).toBe(303);
    expect((await createCard(two, card, sandbox)).status).toBe(201);
    expect((await createCard(two, card, sandbox)).status).toBe(201);
  });

  it('answers 404 card-not-found for an unknown 52-character card id (a valid path segment)', async () => {
    const response = await t.call(
      'GET',
      '/card-interface/cards/CRDnKQt89XXFRQVBEzcRvkhvmhs5rpBvxkv3PbeAFPB52zFFqjCR',
      {
        token: token1,
      },
    );
    expectSandboxErrorAnswer(response, 404, 'card-not-found', 'no card with this id in the vault');
  });
});

describe('card attributes, documented', () => {
  const lookup = (number: unknown, token = token1) =>
    t.call('POST', '/card-attributes/attributes/attributes', { token, body: { number } });

  it('answers the documented request "4111-1111-1111-1111" with a mixed-case brand and an alpha-3 country', async () => {
    const response = await lookup('4111-1111-1111-1111');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ bin: 411111, brand: 'Visa', issuing_country_code: 'USA' });
    expect(typeof response.body.bin).toBe('number');
    expect(typeof response.body.version).toBe('number');
    expect((await lookup('510026')).body).toMatchObject({ brand: 'Mastercard' });
    expect((await lookup('378282')).body).toMatchObject({ brand: 'American Express' });
  });

  it('takes the documented pattern: a trailing separator, whitespace between digits', async () => {
    expect((await lookup('411111-')).status).toBe(200);
    expect((await lookup('4111\t1111 1111 1111')).status).toBe(200);
    expectSandboxErrorAnswer(
      await lookup('4111--1111'),
      400,
      'bad-request',
      'number: must be 6 to 19 digits (each optionally followed by a space or hyphen) or a tok_ alias',
      '/number',
    );
  });

  it('answers 422 "We could not discern a bin" for an unknown BIN and an unknown alias', async () => {
    for (const number of ['999999', 'tok_sandbox_unknownAliasAbcdefghijk']) {
      expectSandboxErrorAnswer(
        await lookup(number),
        422,
        'bin-not-discerned',
        'We could not discern a bin from the input provided',
      );
    }
  });
});

describe('organization members, documented', () => {
  const ORGANIZATION = 'ACsandbox000000000000001';

  it('answers {"data":[…]}: every member at once, no links nor meta, page parameters not read', async () => {
    for (const query of ['', '?page%5Bsize%5D=2', '?page%5Bsize%5D=0']) {
      const response = await t.call('GET', `/accounts/organizations/${ORGANIZATION}/members${query}`, {
        token: token1,
      });
      expect(response.status).toBe(200);
      expect(Object.keys(response.body)).toEqual(['data']);
      expect(response.body.data).toHaveLength(8);
      expect(response.body.data[0]).toMatchObject({
        type: 'users',
        attributes: { permissions: expect.any(Array), sso_id: expect.any(String) },
      });
      expect(response.body.data[0].attributes.vaults[0]).toHaveProperty('env_identifier');
    }
    const invites = await t.call('GET', `/accounts/organizations/${ORGANIZATION}/invites`, { token: token2 });
    expect(Object.keys(invites.body)).toEqual(['data']);
    expect(invites.body.data).toHaveLength(3);
  });
});
