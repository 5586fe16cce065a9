import { beforeAll, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import type { NetworkToken, ProvisionNetworkTokenInput } from '../../src/upstream/network-tokens/client.ts';
import { NetworkTokensClient } from '../../src/upstream/network-tokens/client.ts';
import { networkTokenEnvelopeSchema } from '../../src/upstream/network-tokens/schemas.ts';
import {
  areaLogEntries,
  containsDigitRun,
  panWith,
  rejectionOf,
  useUpstream,
  WAIT,
} from '../support/fixtures.ts';
import { DOCUMENTED, NT_PROVISION_STATUS } from '../support/wire.ts';

/** Network tokens client against the embedded sandbox (spec "Network token"; contract §5, §6). */

const VAULT = 'tntsandbox1';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TOK_ALIAS = /^tok_sandbox_[A-Za-z0-9]{22}$/;
const PANS_USED: string[] = [];

const fixture = useUpstream();
let networkTokens: NetworkTokensClient;
beforeAll(() => {
  networkTokens = new NetworkTokensClient(fixture.clientOptions('/account-updater'));
});

/** Vaults `pan` through the card interface and returns its `tok_sandbox_…` alias. */
async function aliasOf(pan: string, vault = VAULT): Promise<string> {
  PANS_USED.push(pan);
  const card = await fixture.cardInterface.createCard(vault, { pan, expMonth: 12, expYear: 30 });
  return card.panAlias;
}

/** Reads the token until it has left provisioning (a final state), and returns it. */
function waitForState(panAlias: string): Promise<NetworkToken> {
  return vi.waitFor(async () => {
    const token = await networkTokens.get(VAULT, panAlias);
    expect(token.state, 'the final state of the network token').toBeDefined();
    return token;
  }, WAIT);
}

describe('NetworkTokensClient', () => {
  it('provisions (documented: ACTIVE at once; specification: no state yet, then ACTIVE), answers a repeat with the token, and deletes', async () => {
    const panAlias = await aliasOf('5100260000895001');
    const holderInfo = {
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      phoneNumber: '+44 20 7946 0958',
      billingAddress: { name: 'Ada Lovelace', address1: '1 Main St', city: 'London', postalCode: 'N1 9GU' },
    };
    const provisioned = await networkTokens.provision(VAULT, {
      panAlias,
      expMonth: 12,
      expYear: 30,
      holderInfo,
    });
    expect(provisioned).toEqual({
      panAlias,
      ...(DOCUMENTED
        ? { state: 'ACTIVE', networkTokenLast4: expect.stringMatching(/^\d{4}$/), expiresAt: '2030-12' }
        : {}),
      createdAt: expect.stringMatching(ISO_UTC),
      updatedAt: expect.stringMatching(ISO_UTC),
      card: { last4: '5001', bin: '510026', expiresAt: '2030-12', holderInfo },
    });

    const active = await waitForState(panAlias);
    expect(active).toEqual({
      panAlias,
      networkTokenLast4: expect.stringMatching(/^\d{4}$/),
      expiresAt: '2030-12',
      state: 'ACTIVE',
      createdAt: provisioned.createdAt,
      updatedAt: expect.stringMatching(ISO_UTC),
      card: { last4: '5001', bin: '510026', expiresAt: '2030-12', holderInfo },
    });
    expect(active.networkTokenLast4).not.toBe('5001');

    expect(await networkTokens.provision(VAULT, { panAlias, expMonth: 12, expYear: 30 })).toEqual(active);

    const deleted = await networkTokens.delete(VAULT, panAlias);
    expect(deleted).toEqual({
      panAlias,
      networkTokenLast4: active.networkTokenLast4,
      expiresAt: '2030-12',
      state: 'DELETED',
      createdAt: provisioned.createdAt,
      updatedAt: expect.stringMatching(ISO_UTC),
      card: { last4: '5001', bin: '510026', expiresAt: '2030-12' },
    });
    expect(await networkTokens.get(VAULT, panAlias)).toMatchObject({ state: 'DELETED' });
    expect(await networkTokens.delete(VAULT, panAlias)).toMatchObject({ state: 'DELETED' });
  });

  it('reaches SUSPENDED for cards ending 5002 and leaves out an empty holder_info', async () => {
    const panAlias = await aliasOf('4000210000795002');
    expect(panAlias).toMatch(TOK_ALIAS);
    const provisioned = await networkTokens.provision(VAULT, { panAlias, expMonth: 1, expYear: 2031 });
    expect(provisioned.card).toEqual({ last4: '5002', bin: '400021', expiresAt: '2031-01' });
    expect(provisioned.state).toBe(DOCUMENTED ? 'SUSPENDED' : undefined);
    const suspended = await waitForState(panAlias);
    expect(suspended).toMatchObject({ state: 'SUSPENDED', expiresAt: '2031-01' });
    expect(suspended.card.holderInfo).toBeUndefined();
  });

  it('takes a format-preserving alias issued by account updater v1', async () => {
    const pan = '4000210000395001';
    PANS_USED.push(pan);
    const { numberAlias } = await fixture.accountUpdater.enrollCard(VAULT, {
      name: 'Grace Hopper',
      number: pan,
      expMonth: 6,
      expYear: 32,
    });
    expect(numberAlias).toMatch(/^400021[A-Za-z0-9]{7}5001$/);
    const provisioned = await networkTokens.provision(VAULT, {
      panAlias: numberAlias,
      expMonth: 6,
      expYear: 32,
    });
    expect(provisioned).toMatchObject({ panAlias: numberAlias, card: { last4: '5001', bin: '400021' } });
    expect(await waitForState(numberAlias)).toMatchObject({ panAlias: numberAlias, state: 'ACTIVE' });
  });

  it.each([
    ['5100260000095404', 404, 'declined'],
    ['4000210000995404', 404, 'declined'],
    ['5100260000495422', 422, 'card-not-allowed'],
    ['4000210000395423', 422, 'rejected'],
    ['3530111333300000', 422, 'card-brand-not-supported'],
  ])('maps the provisioning outcome of %s to %i %s, without the PAN', async (pan, status, code) => {
    const panAlias = await aliasOf(pan);
    const error = (await rejectionOf(
      networkTokens.provision(VAULT, { panAlias, expMonth: 12, expYear: 30 }),
    )) as UpstreamError;
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ area: 'network-tokens', status, code, retryable: false });
    expect(error.message).toBe(
      `upstream network-tokens POST /account-updater/network-tokens failed: ${status} ${code} (${error.detail})`,
    );
    expect(containsDigitRun(`${error.message} ${error.stack}`)).toBe(false);
  });

  it('maps 422 card-not-allowed for an expired card', async () => {
    const panAlias = await aliasOf(panWith('510026', '0006', 16));
    await expect(
      networkTokens.provision(VAULT, { panAlias, expMonth: 1, expYear: 20 }),
    ).rejects.toMatchObject({ area: 'network-tokens', status: 422, code: 'card-not-allowed' });
  });

  it('maps 422 required-fields-missing and invalid-format with their pointers', async () => {
    const panAlias = await aliasOf(panWith('510026', '0105', 16));
    const missing = (await rejectionOf(
      networkTokens.provision(VAULT, { panAlias, expYear: 30 } as ProvisionNetworkTokenInput),
    )) as UpstreamError;
    expect(missing).toMatchObject({
      status: 422,
      code: 'required-fields-missing',
      pointer: '/exp_month',
      retryable: false,
    });
    const malformed = (await rejectionOf(
      networkTokens.provision(VAULT, {
        panAlias,
        expMonth: 13,
        expYear: 30,
        holderInfo: { email: 'not-an-address' },
      }),
    )) as UpstreamError;
    expect(malformed).toMatchObject({ status: 422, code: 'invalid-format', pointer: '/exp_month' });
  });

  it('answers 404 not-found for an unknown alias and for a token of another vault', async () => {
    const unknown = 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA';
    await expect(
      networkTokens.provision(VAULT, { panAlias: unknown, expMonth: 12, expYear: 30 }),
    ).rejects.toMatchObject({ area: 'network-tokens', status: 404, code: 'not-found' });
    await expect(networkTokens.get(VAULT, unknown)).rejects.toMatchObject({ status: 404, code: 'not-found' });
    await expect(networkTokens.delete(VAULT, unknown)).rejects.toMatchObject({
      status: 404,
      code: 'not-found',
    });

    const panAlias = await aliasOf(panWith('510026', '0301', 16));
    await networkTokens.provision(VAULT, { panAlias, expMonth: 12, expYear: 30 });
    await expect(networkTokens.get('tntsandbox2', panAlias)).rejects.toMatchObject({
      status: 404,
      code: 'not-found',
    });
    await expect(networkTokens.delete('tntsandbox2', panAlias)).rejects.toMatchObject({
      status: 404,
      code: 'not-found',
    });
  });

  it('refuses a PAN or a malformed alias with InvalidArgumentError before any request', async () => {
    const before = fixture.sandbox.requests().length;
    for (const bad of [
      '',
      '5100260000895001',
      '5100-2600-0089-5001',
      'tok_',
      'tok_sandbox_/../x',
      'CRDabc',
    ]) {
      for (const call of [
        networkTokens.provision(VAULT, { panAlias: bad, expMonth: 12, expYear: 30 }),
        networkTokens.get(VAULT, bad),
        networkTokens.delete(VAULT, bad),
      ]) {
        const error = (await rejectionOf(call)) as InvalidArgumentError;
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(error.argument).toBe('panAlias');
        expect(containsDigitRun(error.message)).toBe(false);
      }
    }
    expect(fixture.sandbox.requests().length).toBe(before);
  });

  it('logged every call with area network-tokens, and never a PAN', () => {
    const calls = areaLogEntries(fixture.logLines, 'network-tokens');
    expect(calls).toContainEqual(
      expect.objectContaining({
        method: 'POST',
        path: '/account-updater/network-tokens',
        status: NT_PROVISION_STATUS,
        msg: 'upstream call',
      }),
    );
    const all = fixture.logLines.join('\n');
    for (const pan of PANS_USED) expect(all).not.toContain(pan);
    const withoutTime = fixture.logLines.map((line) => JSON.stringify({ ...JSON.parse(line), time: 0 }));
    expect(containsDigitRun(withoutTime.join('\n'))).toBe(false);
  });
});

describe('networkTokenEnvelopeSchema', () => {
  const wire = {
    pan_alias: 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA',
    state: 'ACTIVE',
    created_at: '2026-11-21T05:01:02.123Z',
    updated_at: '2026-11-21T05:01:02.173Z',
    card: { last4: '5001', bin: '510026', expires_at: '2030-12' },
  };

  it('keeps a state it does not know as a string', () => {
    expect(networkTokenEnvelopeSchema.parse({ data: { ...wire, state: 'INACTIVE' } })).toMatchObject({
      state: 'INACTIVE',
    });
  });

  it('reads the token with or without the data envelope alike (sandbox contract §8)', () => {
    expect(networkTokenEnvelopeSchema.parse(wire)).toEqual(networkTokenEnvelopeSchema.parse({ data: wire }));
  });

  it('refuses drift: a card number where the BIN belongs, a malformed expiry, an empty state', () => {
    const cardWith = (card: Record<string, unknown>) => ({
      data: { ...wire, card: { ...wire.card, ...card } },
    });
    expect(networkTokenEnvelopeSchema.safeParse(cardWith({ bin: '5100260000895001' })).success).toBe(false);
    expect(networkTokenEnvelopeSchema.safeParse(cardWith({ expires_at: '12/30' })).success).toBe(false);
    expect(networkTokenEnvelopeSchema.safeParse({ data: { ...wire, state: '' } }).success).toBe(false);
  });
});
