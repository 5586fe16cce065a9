import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildNetworkTokenNotification,
  DOCUMENTED_NETWORK_TOKEN_DESCRIPTION,
  NETWORK_TOKEN_NOTIFICATION_DESCRIPTION,
} from '../../src/sandbox/network-tokens.ts';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import {
  detailsOf,
  expectMediaTypeRefused,
  expectSandboxError,
  type NotifyingSandbox,
  type ReceivedRequest,
  type Receiver,
  SANDBOX_BILLING_ADDRESS,
  SANDBOX_WIRE_UNDER_TEST,
  sandboxError,
  startNotifyingSandbox,
  verifiedBody,
  WAIT,
} from '../support/fixtures.ts';
import { DOCUMENTED, NT_PROVISION_STATUS, tokenOf, V1_ENROL_STATUS } from '../support/wire.ts';

/** Long enough that a read right after provisioning still sees it pending on a loaded machine. */
const DELAY_MS = 250;
const SECRET = 'whsec_network_tokens_0123456789';
const OTHER_SECRET = 'whsec_network_tokens_vault_2_0123';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TOK = /^tok_sandbox_[0-9A-Za-z]{22}$/;
const PATH = '/account-updater/network-tokens';
const HOLDER_INFO = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  number: '+44 20 7946 0000',
  billing_address: SANDBOX_BILLING_ADDRESS,
};

let t: NotifyingSandbox;
let receiver: Receiver;
let otherVaultReceiver: Receiver;
let token1: string;
let token2: string;

beforeAll(async () => {
  t = await startNotifyingSandbox(
    { webhookDelayMs: DELAY_MS, retryScheduleMs: [0, 50, 100] },
    { tntsandbox1: SECRET, tntsandbox2: OTHER_SECRET },
  );
  ({ tntsandbox1: receiver, tntsandbox2: otherVaultReceiver } = t.receivers);
  token1 = await t.token('tntsandbox1');
  token2 = await t.token('tntsandbox2');
});
afterAll(() => t.stop());

/** Vaults a PAN through the card interface and returns its `tok_sandbox_…` alias. */
async function aliasOf(pan: string, token = token1): Promise<string> {
  const response = await t.call('POST', '/card-interface/cards', {
    token,
    contentType: 'application/vnd.api+json',
    body: { data: { type: 'cards', attributes: { pan, exp_month: 12, exp_year: 30 } } },
  });
  expect(response.status).toBe(201);
  const alias = response.body.data.attributes.pan_alias as string;
  expect(alias).toMatch(TOK);
  return alias;
}

/** The format-preserving alias v1 issues for a PAN (through an enrolment, whose card names it). */
async function formatPreservingAliasOf(pan: string, token = token1): Promise<string> {
  const response = await t.call('POST', '/account-updater/cards', {
    token,
    body: { name: 'Ada', number: pan, exp_month: 12, exp_year: 30 },
  });
  expect(response.status).toBe(V1_ENROL_STATUS);
  return response.body.data.number as string;
}

const provision = (body: unknown, token = token1) => t.call('POST', PATH, { token, body });
/** Provisions `alias` expiring `exp_month`/`exp_year`, with `holder_info` when given. */
const provisionAlias = (alias: string, exp_month: number, exp_year: number, holder_info?: unknown) =>
  provision({ pan_alias: alias, exp_month, exp_year, ...(holder_info === undefined ? {} : { holder_info }) });
const getToken = (alias: string, token = token1) =>
  t.call('GET', `${PATH}/${encodeURIComponent(alias)}`, { token });
const deleteToken = (alias: string, token = token1) =>
  t.call('DELETE', `${PATH}/${encodeURIComponent(alias)}`, { token });

const verified = (request: ReceivedRequest, secret = SECRET) => verifiedBody(request, secret);

const notificationsFor = (alias: string, from = receiver) =>
  from.matching((details) => details.pan_alias === alias);
const notificationFor = (alias: string, from = receiver) =>
  from.arrival((details) => details.pan_alias === alias);
/**
 * Quiet window for "notifies nothing": the notification would be sent DELAY_MS after the request, and
 * nothing can announce that it did not come, so the test waits past that moment before looking.
 */
const pastTheNotificationDelay = () => sleep(DELAY_MS + 100);

describe('POST /network-tokens: a normal card', () => {
  it('answers the token (documented: 200, bare, already ACTIVE; specification: 202 in data, no state yet), then notifies', async () => {
    const pan = '4111111111111111';
    const alias = await aliasOf(pan);
    const response = await provisionAlias(alias, 11, 2029, HOLDER_INFO);
    expect(response.status).toBe(NT_PROVISION_STATUS);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(Object.hasOwn(response.body, 'data')).toBe(!DOCUMENTED);
    const { created_at, updated_at, network_token_last4, ...rest } = tokenOf(response.body);
    expect(created_at).toMatch(ISO);
    expect(updated_at).toBe(created_at);
    const card = { last4: '1111', bin: '411111', expires_at: '2029-11', holder_info: HOLDER_INFO };
    if (DOCUMENTED) {
      // Sandbox contract §8: provisioning may already carry its final state.
      expect(network_token_last4).toMatch(/^\d{4}$/);
      expect(rest).toEqual({ pan_alias: alias, state: 'ACTIVE', expires_at: '2029-11', card });
    } else {
      expect(network_token_last4).toBeUndefined();
      expect(rest).toEqual({ pan_alias: alias, card });
    }
    expect(response.text).not.toContain(pan);

    const beforeNotification = await getToken(alias);
    expect(beforeNotification.status).toBe(200);
    expect(beforeNotification.body).toEqual(response.body);

    const request = await notificationFor(alias);
    expect(request.headers['content-type']).toBe('application/json');
    const envelope = verified(request);
    const documented = SANDBOX_WIRE_UNDER_TEST === 'documented';
    expect(envelope.event).toBe(documented ? 'network_token.updated' : 'network_token.active');
    expect(envelope.tenant).toBe('tntsandbox1');
    expect(envelope.description).toBe(
      documented ? DOCUMENTED_NETWORK_TOKEN_DESCRIPTION : NETWORK_TOKEN_NOTIFICATION_DESCRIPTION,
    );
    expect(envelope.producer).toEqual({ application_name: 'network-tokens', application_protocol: 'https' });
    expect(request.body.toString()).not.toContain(pan);

    const active = await getToken(alias);
    expect(active.status).toBe(200);
    const token = tokenOf(active.body);
    expect(token).toMatchObject({
      pan_alias: alias,
      state: 'ACTIVE',
      expires_at: '2029-11',
      created_at,
      card: { last4: '1111', bin: '411111', expires_at: '2029-11', holder_info: HOLDER_INFO },
    });
    expect(token.network_token_last4).toMatch(/^\d{4}$/);
    expect(token.network_token_last4).not.toBe('1111');
    expect(token.updated_at).toMatch(ISO);
    expect(Date.parse(token.updated_at)).toBeGreaterThanOrEqual(Date.parse(created_at));
    expect(Object.keys(token).sort()).toEqual(
      ['card', 'created_at', 'expires_at', 'network_token_last4', 'pan_alias', 'state', 'updated_at'].sort(),
    );

    if (documented) {
      // The provider's example (sandbox contract §8): details an object, zone-less times.
      expect(envelope.details).toEqual({
        card_bin: '411111',
        card_exp_month: '11',
        card_exp_year: '2029',
        card_last4: '1111',
        created_at: `${created_at.slice(0, 23)}000`,
        exp_month: '11',
        exp_year: '2029',
        network_token: '',
        network_token_id: expect.stringMatching(
          /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/,
        ),
        network_token_last4: token.network_token_last4,
        pan_alias: alias,
        payment_account_reference: '',
        state: 'ACTIVE',
        tenant_id: 'tntsandbox1',
        updated_at: `${token.updated_at.slice(0, 23)}000`,
      });
    } else {
      expect(JSON.parse(envelope.details)).toEqual({
        pan_alias: alias,
        state: 'ACTIVE',
        network_token_last4: token.network_token_last4,
        expires_at: '2029-11',
        occurred_at: token.updated_at,
        created_at: `${created_at.slice(0, 19)}Z`,
      });
    }
    expect(envelope.timestamp).toBe(token.updated_at);
  });

  it('takes a two-digit exp_year, no holder_info, and a format-preserving alias', async () => {
    const alias = await formatPreservingAliasOf('5555555555554444');
    expect(alias).not.toMatch(TOK);
    const response = await provision({ pan_alias: alias, exp_month: 3, exp_year: 31 });
    expect(response.status).toBe(NT_PROVISION_STATUS);
    expect(tokenOf(response.body).card).toEqual({
      last4: '4444',
      bin: '555555',
      expires_at: '2031-03',
      holder_info: {},
    });
    await notificationFor(alias);
    expect(tokenOf((await getToken(alias)).body).state).toBe('ACTIVE');
  });

  it('keeps one token per card: a repeated request answers 200 with it and notifies nothing new', async () => {
    const alias = await aliasOf('4242424242424242');
    const first = await provision({ pan_alias: alias, exp_month: 1, exp_year: 30 });
    expect(first.status).toBe(NT_PROVISION_STATUS);
    await notificationFor(alias);
    const again = await provision({ pan_alias: alias, exp_month: 1, exp_year: 30 });
    expect(again.status).toBe(200);
    expect(tokenOf(again.body).state).toBe('ACTIVE');
    expect(tokenOf(again.body).created_at).toBe(tokenOf(first.body).created_at);
    await pastTheNotificationDelay();
    expect(notificationsFor(alias)).toHaveLength(1);
  });

  it('names the token by either alias of the same card', async () => {
    const pan = '4000056655665556';
    const tokAlias = await aliasOf(pan);
    const fpeAlias = await formatPreservingAliasOf(pan);
    expect((await provision({ pan_alias: tokAlias, exp_month: 5, exp_year: 30 })).status).toBe(
      NT_PROVISION_STATUS,
    );
    const viaOther = await getToken(fpeAlias);
    expect(viaOther.status).toBe(200);
    expect(tokenOf(viaOther.body).pan_alias).toBe(fpeAlias);
    expect(tokenOf(viaOther.body).card.last4).toBe('5556');
    expect((await provision({ pan_alias: fpeAlias, exp_month: 5, exp_year: 30 })).status).toBe(200);
  });

  it('notifies only the endpoints of the vault that provisioned', async () => {
    const alias = await aliasOf('4111111111111111', token2);
    expect((await provision({ pan_alias: alias, exp_month: 8, exp_year: 30 }, token2)).status).toBe(
      NT_PROVISION_STATUS,
    );
    const request = await notificationFor(alias, otherVaultReceiver);
    expect(verified(request, OTHER_SECRET).tenant).toBe('tntsandbox2');
    expect(notificationsFor(alias)).toHaveLength(0);
  });
});

describe('POST /network-tokens: test cards of contract §5.5', () => {
  const cards = SANDBOX_TEST_CARDS.filter((card) => card.table === 'network-token');

  it('lists ten cards, two per scenario', () => {
    expect(cards.map((card) => card.scenario).sort()).toEqual([
      '5001',
      '5001',
      '5002',
      '5002',
      '5404',
      '5404',
      '5422',
      '5422',
      '5423',
      '5423',
    ]);
  });

  const finals = cards.filter((card) => card.scenario === '5001' || card.scenario === '5002');
  it.each(finals.map((card) => [card.scenario, card.pan, card.outcome] as const))(
    '%s (%s) ends %s (documented: at once; specification: after the delay), with a signed notification',
    async (_scenario, pan, state) => {
      const alias = await aliasOf(pan);
      const response = await provision({ pan_alias: alias, exp_month: 6, exp_year: 30 });
      expect(response.status).toBe(NT_PROVISION_STATUS);
      const answered = tokenOf(response.body);
      expect(answered.state).toBe(DOCUMENTED ? state : undefined);
      expect(answered.network_token_last4).toEqual(DOCUMENTED ? expect.stringMatching(/^\d{4}$/) : undefined);
      expect(answered.expires_at).toBe(DOCUMENTED ? '2030-06' : undefined);

      const request = await notificationFor(alias);
      const envelope = verified(request);
      expect(envelope.event).toBe(
        SANDBOX_WIRE_UNDER_TEST === 'documented'
          ? 'network_token.updated'
          : `network_token.${state.toLowerCase()}`,
      );
      const details = detailsOf(request);
      expect(details.state).toBe(state);
      expect(details.pan_alias).toBe(alias);

      const fetched = await getToken(alias);
      expect(fetched.status).toBe(200);
      expect(tokenOf(fetched.body).state).toBe(state);
      expect(tokenOf(fetched.body).network_token_last4).toBe(details.network_token_last4);
      expect(tokenOf(fetched.body).expires_at).toBe('2030-06');
    },
  );

  const errors = cards.filter((card) => !['5001', '5002'].includes(card.scenario));
  it.each(errors.map((card) => [card.scenario, card.pan, card.outcome] as const))(
    '%s (%s) answers %s at once, stores nothing and notifies nothing',
    async (scenario, pan, code) => {
      const alias = await aliasOf(pan);
      const response = await provision({ pan_alias: alias, exp_month: 6, exp_year: 30 });
      expectSandboxError(response, scenario === '5404' ? 404 : 422, code);
      expect(response.text).not.toContain(pan);
      expectSandboxError(await getToken(alias), 404, 'not-found');
      await pastTheNotificationDelay();
      expect(notificationsFor(alias)).toHaveLength(0);
    },
  );
});

describe('POST /network-tokens: errors', () => {
  it('400 bad-request for malformed JSON, a non-object body and wrong JSON types', async () => {
    expectSandboxError(await provision('{"pan_alias":'), 400, 'bad-request', '');
    expectSandboxError(await provision([1, 2]), 400, 'bad-request', '');
    const alias = await aliasOf('4111111111111111');
    expectSandboxError(
      await provision({ pan_alias: alias, exp_month: '12', exp_year: 30 }),
      400,
      'bad-request',
      '/exp_month',
    );
    expectSandboxError(
      await provision({ pan_alias: alias, exp_month: 12.5, exp_year: 30 }),
      400,
      'bad-request',
      '/exp_month',
    );
    expectSandboxError(
      await provision({ pan_alias: 42, exp_month: 12, exp_year: 30 }),
      400,
      'bad-request',
      '/pan_alias',
    );
    expectSandboxError(
      await provision({ pan_alias: alias, exp_month: 12, exp_year: 30, holder_info: 'Ada' }),
      400,
      'bad-request',
      '/holder_info',
    );
    expectSandboxError(
      await provisionAlias(alias, 12, 30, { billing_address: { city: 5 } }),
      400,
      'bad-request',
      '/holder_info/billing_address/city',
    );
  });

  it('415 for another media type', () =>
    expectMediaTypeRefused(t, PATH, token1, '{"pan_alias":"x","exp_month":1,"exp_year":30}', 'text/plain'));

  it('422 required-fields-missing, one error per absent or null member', async () => {
    const response = await provision({});
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.body.errors).toEqual([
      sandboxError(422, 'required-fields-missing', 'pan_alias: is required', '/pan_alias'),
      sandboxError(422, 'required-fields-missing', 'exp_month: is required', '/exp_month'),
      sandboxError(422, 'required-fields-missing', 'exp_year: is required', '/exp_year'),
    ]);
    const alias = await aliasOf('4111111111111111');
    expectSandboxError(
      await provision({ pan_alias: alias, exp_month: 4, exp_year: null }),
      422,
      'required-fields-missing',
      '/exp_year',
    );
  });

  it('422 invalid-format for out-of-range expiry, malformed alias and holder details', async () => {
    const alias = await aliasOf('4111111111111111');
    const invalid: [string, number, number, string][] = [
      [alias, 13, 30, '/exp_month'],
      [alias, 0, 30, '/exp_month'],
      [alias, 1, 100, '/exp_year'],
      [alias, 1, 2100, '/exp_year'],
      ['not an alias', 1, 30, '/pan_alias'],
      ['', 1, 30, '/pan_alias'],
    ];
    for (const [panAlias, expMonth, expYear, pointer] of invalid) {
      expectSandboxError(await provisionAlias(panAlias, expMonth, expYear), 422, 'invalid-format', pointer);
    }
    const plainPan = await provision({ pan_alias: '4111111111111111', exp_month: 1, exp_year: 30 });
    expectSandboxError(plainPan, 422, 'invalid-format', '/pan_alias');
    expect(plainPan.text).not.toContain('4111111111111111');
    expectSandboxError(
      await provisionAlias(alias, 1, 30, { email: 'ada.example.com' }),
      422,
      'invalid-format',
      '/holder_info/email',
    );
    const cardAsPhone = await provisionAlias(alias, 1, 30, { number: '4111111111111111' });
    expectSandboxError(cardAsPhone, 422, 'invalid-format', '/holder_info/number');
    expect(cardAsPhone.text).not.toContain('4111111111111111');

    const several = await provision({ pan_alias: 'nope', exp_month: 13, exp_year: 30 });
    expect(several.status).toBe(422);
    expect(several.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual([
      '/pan_alias',
      '/exp_month',
    ]);
  });

  it("404 not-found for an alias the vault does not hold, another vault's alias included", async () => {
    expectSandboxError(
      await provision({ pan_alias: 'tok_sandbox_0000000000000000000000', exp_month: 1, exp_year: 30 }),
      404,
      'not-found',
    );
    const otherVaultAlias = await aliasOf('4111111111111111', token2);
    expectSandboxError(
      await provision({ pan_alias: otherVaultAlias, exp_month: 1, exp_year: 30 }),
      404,
      'not-found',
    );
  });

  it('422 card-brand-not-supported for Diners Club and JCB', async () => {
    for (const pan of ['30569309025904', '3530111333300000']) {
      const alias = await aliasOf(pan);
      const response = await provision({ pan_alias: alias, exp_month: 1, exp_year: 30 });
      expectSandboxError(response, 422, 'card-brand-not-supported');
      expect(response.text).not.toContain(pan);
    }
  });

  it('accepts American Express and Discover', async () => {
    for (const pan of ['371449635398431', '6011111111111117']) {
      const alias = await aliasOf(pan);
      expect((await provision({ pan_alias: alias, exp_month: 1, exp_year: 30 })).status).toBe(
        NT_PROVISION_STATUS,
      );
    }
  });

  it('422 card-not-allowed for an expired card; the current month is still valid', async () => {
    const alias = await aliasOf('5105105105105100');
    expectSandboxError(
      await provision({ pan_alias: alias, exp_month: 12, exp_year: 20 }),
      422,
      'card-not-allowed',
    );
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    expectSandboxError(
      await provisionAlias(alias, lastMonth.getUTCMonth() + 1, lastMonth.getUTCFullYear()),
      422,
      'card-not-allowed',
    );
    const thisMonth = await provisionAlias(alias, now.getUTCMonth() + 1, now.getUTCFullYear() % 100);
    expect(thisMonth.status).toBe(NT_PROVISION_STATUS);
  });
});

describe('GET and DELETE /network-tokens/{pan_alias}', () => {
  it('404 not-found for unknown, malformed, token-less and other-vault aliases', async () => {
    const tokenless = await aliasOf('4012888888881881');
    for (const alias of ['tok_sandbox_0000000000000000000000', 'garbage', tokenless]) {
      expectSandboxError(await getToken(alias), 404, 'not-found');
      expectSandboxError(await deleteToken(alias), 404, 'not-found');
    }
    const alias = await aliasOf('5200828282828210');
    expect((await provision({ pan_alias: alias, exp_month: 2, exp_year: 30 })).status).toBe(
      NT_PROVISION_STATUS,
    );
    expectSandboxError(await getToken(alias, token2), 404, 'not-found');
    expectSandboxError(await deleteToken(alias, token2), 404, 'not-found');
    expect((await getToken(alias)).status).toBe(200);
  });

  it('deletes an ACTIVE token: DELETED with card last4, bin and expires_at only; idempotent; re-provisionable', async () => {
    const alias = await aliasOf('2223003122003222');
    const provisioned = await provisionAlias(alias, 9, 30, HOLDER_INFO);
    expect(provisioned.status).toBe(NT_PROVISION_STATUS);
    await notificationFor(alias);
    const active = tokenOf((await getToken(alias)).body);
    expect(active.state).toBe('ACTIVE');

    const deleted = await deleteToken(alias);
    expect(deleted.status).toBe(200);
    expect(deleted.headers.get('content-type')).toBe('application/json');
    expect(tokenOf(deleted.body)).toEqual({
      pan_alias: alias,
      network_token_last4: active.network_token_last4,
      expires_at: '2030-09',
      state: 'DELETED',
      created_at: active.created_at,
      updated_at: tokenOf(deleted.body).updated_at,
      card: { last4: '3222', bin: '222300', expires_at: '2030-09' },
    });
    expect(tokenOf(deleted.body).updated_at).toMatch(ISO);

    const fetched = await getToken(alias);
    expect(fetched.status).toBe(200);
    expect(tokenOf(fetched.body).state).toBe('DELETED');
    expect(tokenOf(fetched.body).card.holder_info).toEqual(HOLDER_INFO);

    const again = await deleteToken(alias);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(deleted.body);

    const reprovisioned = await provision({ pan_alias: alias, exp_month: 9, exp_year: 31 });
    expect(reprovisioned.status).toBe(NT_PROVISION_STATUS);
    expect(tokenOf(reprovisioned.body).state).toBe(DOCUMENTED ? 'ACTIVE' : undefined);
    expect(tokenOf(reprovisioned.body).card.expires_at).toBe('2031-09');
    await expect.poll(() => notificationsFor(alias), WAIT).toHaveLength(2);
    expect(tokenOf((await getToken(alias)).body).state).toBe('ACTIVE');
  });

  // The §5.5 cards were provisioned in vault 1 above; vault 2 keeps its own tokens.
  it('deletes a SUSPENDED token', async () => {
    const alias = await aliasOf('4000210000795002', token2);
    expect((await provision({ pan_alias: alias, exp_month: 6, exp_year: 30 }, token2)).status).toBe(
      NT_PROVISION_STATUS,
    );
    await notificationFor(alias, otherVaultReceiver);
    expect(tokenOf((await getToken(alias, token2)).body).state).toBe('SUSPENDED');
    const deleted = await deleteToken(alias, token2);
    expect(deleted.status).toBe(200);
    expect(tokenOf(deleted.body).state).toBe('DELETED');
  });

  it('deleting a token before its notification: no notification (specification: provisioning abandoned, no final state)', async () => {
    const alias = await aliasOf('4000210000395001', token2);
    expect((await provision({ pan_alias: alias, exp_month: 6, exp_year: 30 }, token2)).status).toBe(
      NT_PROVISION_STATUS,
    );
    const deleted = await deleteToken(alias, token2);
    expect(deleted.status).toBe(200);
    const token = tokenOf(deleted.body);
    expect(token.state).toBe('DELETED');
    expect(token.network_token_last4).toEqual(DOCUMENTED ? expect.stringMatching(/^\d{4}$/) : undefined);
    expect(token.expires_at).toBe(DOCUMENTED ? '2030-06' : undefined);
    await pastTheNotificationDelay();
    expect(notificationsFor(alias, otherVaultReceiver)).toHaveLength(0);
    expect(tokenOf((await getToken(alias, token2)).body).state).toBe('DELETED');
  });
});

describe('scopes', () => {
  it('401 without a valid token, 403 without the scope of the method', async () => {
    const alias = await aliasOf('5454545454545454');
    const body = { pan_alias: alias, exp_month: 1, exp_year: 30 };
    const anonymous = await t.call('POST', PATH, { body });
    expectSandboxError(anonymous, 401, 'unauthorized');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expectSandboxError(await getToken(alias, 'not-a-token'), 401, 'unauthorized');

    const readOnly = await t.token('tntsandbox1', 'network-tokens:read');
    expectSandboxError(await provision(body, readOnly), 403, 'forbidden');
    expectSandboxError(await deleteToken(alias, readOnly), 403, 'forbidden');
    expectSandboxError(await getToken(alias, readOnly), 404, 'not-found');

    const writeOnly = await t.token('tntsandbox1', 'network-tokens:write');
    expectSandboxError(await getToken(alias, writeOnly), 403, 'forbidden');
    expect((await provision(body, writeOnly)).status).toBe(NT_PROVISION_STATUS);
    expect((await getToken(alias, readOnly)).status).toBe(200);
    expect((await deleteToken(alias, writeOnly)).status).toBe(200);

    const cardsOnly = await t.token('tntsandbox1', 'cards:read cards:write');
    expectSandboxError(await provision(body, cardsOnly), 403, 'forbidden');
  });
});

describe('buildNetworkTokenNotification', () => {
  it('sends the documented network_token.updated by default: details an object, as in the example', () => {
    const { envelope, body } = buildNetworkTokenNotification({
      vault: 'tntsandbox1',
      panAlias: '5114103XX3542293',
      state: 'SUSPENDED',
      networkTokenLast4: '5022',
      expiresAt: '2027-10',
      card: { bin: '511410', last4: '2293', expiresAt: '2025-12' },
      createdAtMs: Date.UTC(2024, 11, 12, 9, 59, 44, 667),
      occurredAtMs: Date.UTC(2024, 11, 16, 18, 30, 25, 383),
    });
    const parsed = JSON.parse(body);
    expect(parsed).toEqual(envelope);
    expect(parsed).toMatchObject({
      event: 'network_token.updated',
      description: 'Network Token updated',
      summary: 'A Network Token for 5114103XX3542293 pan alias has been updated in vault tntsandbox1',
      scope: 'vault',
      tenant: 'tntsandbox1',
      timestamp: '2024-12-16T18:30:25.383Z',
    });
    expect(parsed.details).toEqual({
      card_bin: '511410',
      card_exp_month: '12',
      card_exp_year: '2025',
      card_last4: '2293',
      created_at: '2024-12-12T09:59:44.667000',
      exp_month: '10',
      exp_year: '2027',
      network_token: '',
      network_token_id: parsed.details.network_token_id,
      network_token_last4: '5022',
      pan_alias: '5114103XX3542293',
      payment_account_reference: '',
      state: 'SUSPENDED',
      tenant_id: 'tntsandbox1',
      updated_at: '2024-12-16T18:30:25.383000',
    });
    expect(parsed.fingerprint).toBe(
      createHash('sha256')
        .update(`${parsed.event}${JSON.stringify(parsed.details)}${parsed.tenant}`)
        .digest('hex'),
    );
  });

  it('fills the envelope of contract §4 at the lengths of the specification on the specification wire', () => {
    for (const state of ['ACTIVE', 'SUSPENDED'] as const) {
      const { envelope, body } = buildNetworkTokenNotification(
        {
          vault: 'tntsandbox1',
          panAlias: 'tok_sandbox_abcdefghijklmnopqrstuv',
          state,
          networkTokenLast4: '0042',
          expiresAt: '2030-06',
          createdAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
          occurredAtMs: Date.UTC(2026, 0, 2, 3, 4, 6, 789),
        },
        'specification',
      );
      const parsed = JSON.parse(body);
      expect(parsed).toEqual(envelope);
      expect(parsed.event).toBe(state === 'ACTIVE' ? 'network_token.active' : 'network_token.suspended');
      expect(parsed.event.length).toBeGreaterThanOrEqual(14);
      expect(parsed.event.length).toBeLessThanOrEqual(33);
      expect(parsed.description).toHaveLength(31);
      expect(parsed.summary).toBe(`Network token tok_sandbox_abcdefghijklmnopqrstuv ${parsed.event}`);
      expect(parsed.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parsed.timestamp).toBe('2026-01-02T03:04:06.789Z');
      expect(parsed.grouping).toBe('every_single');
      expect(parsed.occurrence).toBe(1);
      expect(parsed.integration_id).toMatch(/^[0-9A-Za-z]{24}$/);
      expect(parsed.org_id).toBe('ACsandbox000000000000001');
      expect(parsed.scope).toBe('cards');
      expect(parsed.tenant).toBe('tntsandbox1');
      expect(parsed.producer).toEqual({ application_name: 'network-tokens', application_protocol: 'https' });
      expect(JSON.parse(parsed.details)).toEqual({
        pan_alias: 'tok_sandbox_abcdefghijklmnopqrstuv',
        state,
        network_token_last4: '0042',
        expires_at: '2030-06',
        occurred_at: '2026-01-02T03:04:06.789Z',
        created_at: '2026-01-02T03:04:05Z',
      });
      expect(parsed.fingerprint).toBe(
        createHash('sha256').update(`${parsed.event}${parsed.details}${parsed.tenant}`).digest('hex'),
      );
    }
  });
});
