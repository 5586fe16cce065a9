import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import type { ProvisionNetworkTokenInput } from '../generated/graphql.ts';
import { graphql } from '../generated/index.ts';
import { CreateCard } from '../support/documents.ts';
import { member, useStack } from '../support/fixtures.ts';
import { DOCUMENTED } from '../support/wire.ts';

/**
 * Network tokens through the gateway's GraphQL API over HTTP against the embedded sandbox:
 * `provisionNetworkToken`, `networkToken` and `deleteNetworkToken` for every test card of sandbox
 * contract §5.5, the brands of §7, the token lifecycle (PENDING → ACTIVE/SUSPENDED → DELETED, spec
 * "States and transitions"), every error of the spec's Errors table the gateway can reach, input
 * validation and scopes (docs/gap-decisions.md "Network tokens", "Scopes per endpoint").
 */

// Shared by the documents below; the codegen inlines it into each of them.
graphql(`
  fragment IT4_NT_TokenFields on NetworkToken {
    panAlias
    vaultId
    state
    usable
    networkTokenLast4
    expiresAt
    cardLast4
    cardBin
    cardExpiresAt
    holderInfo { name email phoneNumber billingAddress { name address1 city } }
    createdAt
    updatedAt
  }
`);

const Provision = graphql(`
  mutation IT4_NT_Provision($input: ProvisionNetworkTokenInput!, $vaultId: String) {
    provisionNetworkToken(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationProvisionNetworkTokenSuccess { data { ...IT4_NT_TokenFields } }
      ...ErrorFields
    }
  }
`);

const Read = graphql(`
  query IT4_NT_Read($panAlias: String!, $vaultId: String) {
    networkToken(panAlias: $panAlias, vaultId: $vaultId) {
      __typename
      ... on QueryNetworkTokenSuccess { data { ...IT4_NT_TokenFields } }
      ...ErrorFields
    }
  }
`);

const Delete = graphql(`
  mutation IT4_NT_Delete($panAlias: String!, $vaultId: String) {
    deleteNetworkToken(panAlias: $panAlias, vaultId: $vaultId) {
      __typename
      ... on MutationDeleteNetworkTokenSuccess { data { ...IT4_NT_TokenFields } }
      ...ErrorFields
    }
  }
`);

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const FOUR_DIGITS = /^\d{4}$/;
const VAULT1 = 'tntsandbox1';
const VAULT2 = 'tntsandbox2';

/** Contract §5.5, cards whose provisioning is accepted: PAN, final state. */
const FINAL_STATE_CARDS: readonly [string, 'ACTIVE' | 'SUSPENDED'][] = [
  ['5100260000895001', 'ACTIVE'],
  ['4000210000395001', 'ACTIVE'],
  ['5100260000395002', 'SUSPENDED'],
  ['4000210000795002', 'SUSPENDED'],
];

/** Contract §5.5, cards whose provisioning is refused: PAN, GraphQL error type, code, message. */
const REFUSED_CARDS: readonly [string, string, string, string][] = [
  [
    '5100260000095404',
    'NetworkTokenDeclinedError',
    'declined',
    'The card network declined the network token',
  ],
  [
    '4000210000995404',
    'NetworkTokenDeclinedError',
    'declined',
    'The card network declined the network token',
  ],
  [
    '5100260000495422',
    'NetworkTokenRejectedError',
    'card-not-allowed',
    'The card is not allowed a network token',
  ],
  [
    '4000210000895422',
    'NetworkTokenRejectedError',
    'card-not-allowed',
    'The card is not allowed a network token',
  ],
  [
    '5100260000895423',
    'NetworkTokenRejectedError',
    'rejected',
    'The network rejected the network token request',
  ],
  [
    '4000210000395423',
    'NetworkTokenRejectedError',
    'rejected',
    'The network rejected the network token request',
  ],
];

const VISA = '4111111111111111';
const MASTERCARD = '5555555555554444';
const DISCOVER = '6011111111111117';
const AMEX = '378282246310005';
const VISA_OF_VAULT2 = '4242424242424242';
const DINERS = '36227206271667';
const JCB = '3530111333300000';

const HOLDER = { name: 'Ada Lovelace', email: 'ada.lovelace@example.com', phoneNumber: '+14155550100' };
/** A `tok_` alias of the form the sandbox issues that no vault holds. */
const UNKNOWN_TOK_ALIAS = 'tok_sandbox_0000000000000000000000';
/** A format-preserving alias (BIN, letters, last four) that no vault holds. */
const UNKNOWN_FP_ALIAS = '411111Zz9Yx8W1111';
const NOT_FOUND_MESSAGE = 'No network token exists for this PAN alias in this vault';
/** The input error of a `panAlias` in no documented alias form (src/schema/network-token.ts). */
const ALIAS_MESSAGE = 'must be an alias of a PAN (tok_, format-preserving or digits), at most 128 characters';
/** State of a token right after provisioning: final at once (documented) or pending (specification). */
const FIRST_STATE = (final: 'ACTIVE' | 'SUSPENDED') => (DOCUMENTED ? final : 'PENDING');

describe('network tokens through GraphQL', () => {
  const t = useStack();

  /** Keeps `pan` on file in the card interface (expiry 11/29) and returns its `tok_` alias. */
  async function panAliasOf(pan: string, token = t.vault1Token): Promise<string> {
    const result = await t.stack.execute(CreateCard, { input: { pan, expMonth: 11, expYear: 29 } }, token);
    return member(result.data?.createCard, 'MutationCreateCardSuccess').data.panAlias;
  }

  const provision = (input: ProvisionNetworkTokenInput, token: string | null = t.vault1Token) =>
    t.stack.execute(Provision, { input }, token);
  const read = (panAlias: string, token: string | null = t.vault1Token) =>
    t.stack.execute(Read, { panAlias }, token);
  const remove = (panAlias: string, token: string | null = t.vault1Token) =>
    t.stack.execute(Delete, { panAlias }, token);

  /** Reads the token until provisioning reported its final state (the sandbox takes 100 ms). */
  async function waitForFinalState(panAlias: string, token = t.vault1Token, timeoutMs = 3_000) {
    return vi.waitFor(
      async () => {
        const current = member(
          (await read(panAlias, token)).data?.networkToken,
          'QueryNetworkTokenSuccess',
        ).data;
        expect(current.state).not.toBe('PENDING');
        return current;
      },
      { timeout: timeoutMs, interval: 20 },
    );
  }

  /** Runs `work` and returns it with the sandbox requests answered meanwhile. */
  async function withRequests<T>(work: () => Promise<T>) {
    const before = t.stack.sandbox!.requests().length;
    const result = await work();
    return { result, requests: t.stack.sandbox!.requests().slice(before) };
  }

  it('lists every card of contract §5.5 in these tables', () => {
    const tested = [...FINAL_STATE_CARDS.map(([pan]) => pan), ...REFUSED_CARDS.map(([pan]) => pan)].sort();
    const contract = SANDBOX_TEST_CARDS.filter((card) => card.table === 'network-token')
      .map((card) => card.pan)
      .sort();
    expect(tested).toEqual(contract);
  });

  describe('provisioning of the contract §5.5 cards', () => {
    it.each(FINAL_STATE_CARDS)(
      '%s answers (documented: at once; specification: PENDING, then) %s',
      async (pan, state) => {
        const panAlias = await panAliasOf(pan);
        const provisioned = await provision({ panAlias, expMonth: 11, expYear: 29, holderInfo: HOLDER });
        const pending = member(
          provisioned.data?.provisionNetworkToken,
          'MutationProvisionNetworkTokenSuccess',
        ).data;
        expect(pending).toEqual({
          panAlias,
          vaultId: VAULT1,
          state: FIRST_STATE(state),
          usable: DOCUMENTED && state === 'ACTIVE',
          networkTokenLast4: DOCUMENTED ? pending.networkTokenLast4 : null,
          expiresAt: DOCUMENTED ? '2029-11' : null,
          cardLast4: pan.slice(-4),
          cardBin: pan.slice(0, 6),
          cardExpiresAt: '2029-11',
          holderInfo: { ...HOLDER, billingAddress: null },
          createdAt: pending.createdAt,
          updatedAt: pending.createdAt,
        });
        expect(pending.createdAt).toMatch(ISO_UTC);

        const final = await waitForFinalState(panAlias);
        expect(final).toEqual({
          ...pending,
          state,
          usable: state === 'ACTIVE',
          networkTokenLast4: final.networkTokenLast4,
          expiresAt: '2029-11',
          updatedAt: final.updatedAt,
        });
        expect(final.networkTokenLast4).toMatch(FOUR_DIGITS);
        // The token's number is not the card's: its last four never match (docs/gap-decisions.md).
        expect(final.networkTokenLast4).not.toBe(pan.slice(-4));
        expect(final.updatedAt).toMatch(ISO_UTC);
        // Documented, the answer was already final: nothing changes after it.
        if (DOCUMENTED) expect(final).toEqual(pending);
        else expect(final.updatedAt! > pending.createdAt!).toBe(true);
        expect(JSON.stringify([provisioned, final])).not.toContain(pan);
      },
    );

    it.each(REFUSED_CARDS)('%s answers %s %s and stores no token', async (pan, typename, code, message) => {
      const panAlias = await panAliasOf(pan);
      const { result, requests } = await withRequests(() =>
        provision({ panAlias, expMonth: 11, expYear: 29 }),
      );
      expect(result.errors).toBeUndefined();
      expect(result.data?.provisionNetworkToken).toEqual({ __typename: typename, code, message });
      expect(requests).toEqual([
        {
          method: 'POST',
          path: '/account-updater/network-tokens',
          status: code === 'declined' ? 404 : 422,
          vault: VAULT1,
        },
      ]);
      const after = await read(panAlias);
      expect(member(after.data?.networkToken, 'NetworkTokenNotFoundError').code).toBe('not-found');
      expect(JSON.stringify(result)).not.toContain(pan);
    });
  });

  describe('brands (contract §7)', () => {
    it.each([
      ['Diners Club', DINERS],
      ['JCB', JCB],
    ])('%s answers CardBrandNotSupportedError card-brand-not-supported', async (_brand, pan) => {
      const panAlias = await panAliasOf(pan);
      const result = await provision({ panAlias, expMonth: 11, expYear: 29 });
      const error = member(result.data?.provisionNetworkToken, 'CardBrandNotSupportedError');
      expect(error.code).toBe('card-brand-not-supported');
      expect(JSON.stringify(result)).not.toContain(pan);
    });

    it('provisions a Discover card (Visa, Mastercard, Amex and Discover are supported)', async () => {
      const panAlias = await panAliasOf(DISCOVER);
      const result = await provision({ panAlias, expMonth: 11, expYear: 29 });
      expect(
        member(result.data?.provisionNetworkToken, 'MutationProvisionNetworkTokenSuccess').data,
      ).toMatchObject({
        panAlias,
        state: FIRST_STATE('ACTIVE'),
        cardBin: '601111',
        cardLast4: '1117',
        holderInfo: null,
      });
      expect((await waitForFinalState(panAlias)).state).toBe('ACTIVE');
    });
  });

  describe('errors of the spec for POST /network-tokens', () => {
    it('answers NetworkTokenRejectedError card-not-allowed for an expired card', async () => {
      const panAlias = await panAliasOf(AMEX);
      const result = await provision({ panAlias, expMonth: 1, expYear: 20 });
      expect(result.data?.provisionNetworkToken).toEqual({
        __typename: 'NetworkTokenRejectedError',
        code: 'card-not-allowed',
        message: 'The card is not allowed a network token',
      });
    });

    it('answers NetworkTokenNotFoundError not-found for an alias no vault holds', async () => {
      for (const panAlias of [UNKNOWN_TOK_ALIAS, UNKNOWN_FP_ALIAS]) {
        const result = await provision({ panAlias, expMonth: 11, expYear: 29 });
        expect(result.data?.provisionNetworkToken).toEqual({
          __typename: 'NetworkTokenNotFoundError',
          code: 'not-found',
          message: NOT_FOUND_MESSAGE,
        });
      }
    });

    it('sends any well-formed tok_ alias (the sandbox issues tok_sandbox_ only): not-found for one no vault holds', async () => {
      const { result, requests } = await withRequests(() =>
        provision({ panAlias: 'tok_unknown', expMonth: 11, expYear: 29 }),
      );
      expect(requests.filter((r) => r.path !== '/oauth/token')).toEqual([
        { method: 'POST', path: '/account-updater/network-tokens', status: 404, vault: VAULT1 },
      ]);
      expect(member(result.data?.provisionNetworkToken, 'NetworkTokenNotFoundError').code).toBe('not-found');
    });

    it('takes the documented all-digit alias form (9914040119524512000) and sends it as it is', async () => {
      const { result, requests } = await withRequests(async () => ({
        got: await read('9914040119524512000'),
        deleted: await remove('9914040119524512000'),
      }));
      expect(
        requests.filter((r) => r.path !== '/oauth/token').map((r) => `${r.method} ${r.path} ${r.status}`),
      ).toEqual([
        'GET /account-updater/network-tokens/9914040119524512000 404',
        'DELETE /account-updater/network-tokens/9914040119524512000 404',
      ]);
      expect(member(result.got.data?.networkToken, 'NetworkTokenNotFoundError').code).toBe('not-found');
      expect(member(result.deleted.data?.deleteNetworkToken, 'NetworkTokenNotFoundError').code).toBe(
        'not-found',
      );
    });
  });

  describe('networkToken and deleteNetworkToken', () => {
    it('answers NetworkTokenNotFoundError for an unknown alias and for a card without a token', async () => {
      const withoutToken = await panAliasOf(VISA, t.vault2Token);
      for (const [panAlias, token] of [
        [UNKNOWN_TOK_ALIAS, t.vault1Token],
        [UNKNOWN_FP_ALIAS, t.vault1Token],
        ['tok_unknown', t.vault1Token],
        [withoutToken, t.vault2Token],
      ] as const) {
        const got = await read(panAlias, token);
        expect(got.data?.networkToken).toEqual({
          __typename: 'NetworkTokenNotFoundError',
          code: 'not-found',
          message: NOT_FOUND_MESSAGE,
        });
        const deleted = await remove(panAlias, token);
        expect(deleted.data?.deleteNetworkToken).toEqual({
          __typename: 'NetworkTokenNotFoundError',
          code: 'not-found',
          message: NOT_FOUND_MESSAGE,
        });
      }
    });

    it("hides another vault's token: not found for reading, provisioning and deleting", async () => {
      const panAlias = await panAliasOf(VISA_OF_VAULT2, t.vault2Token);
      const provisioned = await provision({ panAlias, expMonth: 11, expYear: 29 }, t.vault2Token);
      expect(
        member(provisioned.data?.provisionNetworkToken, 'MutationProvisionNetworkTokenSuccess').data.vaultId,
      ).toBe(VAULT2);
      expect((await waitForFinalState(panAlias, t.vault2Token)).state).toBe('ACTIVE');

      expect(member((await read(panAlias)).data?.networkToken, 'NetworkTokenNotFoundError').code).toBe(
        'not-found',
      );
      expect(
        member(
          (await provision({ panAlias, expMonth: 11, expYear: 29 })).data?.provisionNetworkToken,
          'NetworkTokenNotFoundError',
        ).code,
      ).toBe('not-found');
      expect(
        member((await remove(panAlias)).data?.deleteNetworkToken, 'NetworkTokenNotFoundError').code,
      ).toBe('not-found');
      // Untouched in its own vault.
      const own = await read(panAlias, t.vault2Token);
      expect(member(own.data?.networkToken, 'QueryNetworkTokenSuccess').data).toMatchObject({
        vaultId: VAULT2,
        state: 'ACTIVE',
        usable: true,
      });

      // A token naming both vaults acts in the vault it is told to, and needs to be told.
      const bothVaults = await t.stack.token({ vaults: [VAULT1, VAULT2] });
      const inVault2 = await t.stack.execute(Read, { panAlias, vaultId: VAULT2 }, bothVaults);
      expect(member(inVault2.data?.networkToken, 'QueryNetworkTokenSuccess').data.state).toBe('ACTIVE');
      const unnamed = await t.stack.execute(Read, { panAlias }, bothVaults);
      expect(member(unnamed.data?.networkToken, 'ForbiddenError').code).toBe('vault-required');
    });

    it('runs the lifecycle: ACTIVE, provisioned again unchanged, DELETED (idempotent), provisioned anew', async () => {
      const panAlias = await panAliasOf(VISA);
      const first = member(
        (await provision({ panAlias, expMonth: 11, expYear: 29, holderInfo: HOLDER })).data
          ?.provisionNetworkToken,
        'MutationProvisionNetworkTokenSuccess',
      ).data;
      const active = await waitForFinalState(panAlias);
      expect(active).toMatchObject({ state: 'ACTIVE', usable: true, createdAt: first.createdAt });

      // One token per card: a second request answers the existing token as it is.
      const again = await provision({ panAlias, expMonth: 11, expYear: 29 });
      expect(member(again.data?.provisionNetworkToken, 'MutationProvisionNetworkTokenSuccess').data).toEqual(
        active,
      );

      const deleted = member(
        (await remove(panAlias)).data?.deleteNetworkToken,
        'MutationDeleteNetworkTokenSuccess',
      ).data;
      // The delete answer carries the card's last4, bin and expiry only (spec "Network token").
      expect(deleted).toEqual({
        panAlias,
        vaultId: VAULT1,
        state: 'DELETED',
        usable: false,
        networkTokenLast4: active.networkTokenLast4,
        expiresAt: '2029-11',
        cardLast4: '1111',
        cardBin: '411111',
        cardExpiresAt: '2029-11',
        holderInfo: null,
        createdAt: active.createdAt,
        updatedAt: deleted.updatedAt,
      });
      expect(deleted.updatedAt! >= active.updatedAt!).toBe(true);

      const readDeleted = member((await read(panAlias)).data?.networkToken, 'QueryNetworkTokenSuccess').data;
      expect(readDeleted).toEqual({ ...deleted, holderInfo: { ...HOLDER, billingAddress: null } });

      const deletedAgain = await remove(panAlias);
      expect(member(deletedAgain.data?.deleteNetworkToken, 'MutationDeleteNetworkTokenSuccess').data).toEqual(
        deleted,
      );

      const anew = member(
        (await provision({ panAlias, expMonth: 11, expYear: 29 })).data?.provisionNetworkToken,
        'MutationProvisionNetworkTokenSuccess',
      ).data;
      expect(anew).toMatchObject({
        state: FIRST_STATE('ACTIVE'),
        usable: DOCUMENTED,
        networkTokenLast4: DOCUMENTED ? expect.stringMatching(FOUR_DIGITS) : null,
        holderInfo: null,
      });
      expect(anew.createdAt! >= deleted.updatedAt!).toBe(true);
      expect(await waitForFinalState(panAlias)).toMatchObject({ state: 'ACTIVE', usable: true });
    });

    it('deletes a token before its notification (specification: abandons the pending provisioning): the token stays DELETED', async () => {
      const panAlias = await panAliasOf(MASTERCARD);
      await provision({ panAlias, expMonth: 11, expYear: 29 });
      const deleted = member(
        (await remove(panAlias)).data?.deleteNetworkToken,
        'MutationDeleteNetworkTokenSuccess',
      ).data;
      expect(deleted).toMatchObject({
        state: 'DELETED',
        usable: false,
        networkTokenLast4: DOCUMENTED ? expect.stringMatching(FOUR_DIGITS) : null,
        expiresAt: DOCUMENTED ? '2029-11' : null,
        cardLast4: '4444',
        cardBin: '555555',
      });
      // Quiet window: the abandoned provisioning would have completed 100 ms after the request (the
      // t.stack's enrolment delay); nothing announces that it did not, so the test looks 300 ms later.
      await sleep(300);
      const later = member((await read(panAlias)).data?.networkToken, 'QueryNetworkTokenSuccess').data;
      expect(later).toMatchObject({
        state: 'DELETED',
        networkTokenLast4: deleted.networkTokenLast4,
        expiresAt: deleted.expiresAt,
      });
    });
  });

  describe('input validation (nothing reaches the upstream)', () => {
    const valid: ProvisionNetworkTokenInput = { panAlias: UNKNOWN_TOK_ALIAS, expMonth: 11, expYear: 29 };

    it.each<[string, Partial<ProvisionNetworkTokenInput>, { path: string[]; message: string }[]]>([
      [
        'a malformed alias',
        { panAlias: 'not-an-alias' },
        [{ path: ['input', 'panAlias'], message: ALIAS_MESSAGE }],
      ],
      ['a plain card number', { panAlias: VISA }, [{ path: ['input', 'panAlias'], message: ALIAS_MESSAGE }]],
      ['expMonth 13', { expMonth: 13 }, [{ path: ['input', 'expMonth'], message: 'must be 1 to 12' }]],
      ['expMonth 0', { expMonth: 0 }, [{ path: ['input', 'expMonth'], message: 'must be 1 to 12' }]],
      [
        'a four-digit expYear',
        { expYear: 2029 },
        [{ path: ['input', 'expYear'], message: 'must be a two-digit year' }],
      ],
      [
        'a bad email',
        { holderInfo: { email: 'not-an-email' } },
        [{ path: ['input', 'holderInfo', 'email'], message: 'must be an email address' }],
      ],
      [
        'a bad phone number',
        { holderInfo: { phoneNumber: '+1 (415) call-me' } },
        [
          {
            path: ['input', 'holderInfo', 'phoneNumber'],
            message: 'must be a phone number of up to 15 digits',
          },
        ],
      ],
      [
        'every bad field at once',
        { panAlias: 'x', expMonth: 13, expYear: -1, holderInfo: { email: 'a@', name: 'N'.repeat(201) } },
        [
          { path: ['input', 'panAlias'], message: ALIAS_MESSAGE },
          { path: ['input', 'expMonth'], message: 'must be 1 to 12' },
          { path: ['input', 'expYear'], message: 'must be a two-digit year' },
          { path: ['input', 'holderInfo', 'name'], message: 'must be at most 200 characters' },
          { path: ['input', 'holderInfo', 'email'], message: 'must be an email address' },
        ],
      ],
    ])('provisionNetworkToken rejects %s', async (_case, change, issues) => {
      const { result, requests } = await withRequests(() => provision({ ...valid, ...change }));
      expect(requests).toEqual([]);
      expect(result.errors).toBeUndefined();
      const error = member(result.data?.provisionNetworkToken, 'InputValidationError');
      expect(error.code).toBe('invalid-input');
      expect(error.issues).toEqual(issues);
      expect(JSON.stringify(result)).not.toContain(VISA);
    });

    it.each([
      '',
      'not-an-alias',
      VISA,
      'tok_',
      'tok_has-hyphen',
      '411111Zz9Yx8W11',
      // Not safe as a path segment, or too long (issue 19).
      '5573495XTj/P21V7312',
      '..',
      'tok_%2F',
      `tok_${'a'.repeat(125)}`,
    ])('networkToken and deleteNetworkToken reject panAlias %j', async (panAlias) => {
      const { result, requests } = await withRequests(async () => ({
        got: await read(panAlias),
        deleted: await remove(panAlias),
      }));
      expect(requests).toEqual([]);
      for (const value of [result.got.data?.networkToken, result.deleted.data?.deleteNetworkToken]) {
        expect(value).toEqual({
          __typename: 'InputValidationError',
          code: 'invalid-input',
          message: expect.any(String),
          issues: [{ path: ['panAlias'], message: ALIAS_MESSAGE }],
        });
      }
      expect(JSON.stringify(result)).not.toContain(VISA);
    });
  });

  describe('scopes (network-tokens:read, network-tokens:write)', () => {
    it('lets network-tokens:read read but not provision or delete', async () => {
      const readOnly = await t.stack.token({ vaults: [VAULT1], scopes: ['network-tokens:read'] });
      const { result, requests } = await withRequests(async () => ({
        provisioned: await provision({ panAlias: UNKNOWN_TOK_ALIAS, expMonth: 11, expYear: 29 }, readOnly),
        deleted: await remove(UNKNOWN_TOK_ALIAS, readOnly),
      }));
      expect(requests).toEqual([]);
      expect(member(result.provisioned.data?.provisionNetworkToken, 'ForbiddenError').code).toBe('forbidden');
      expect(member(result.deleted.data?.deleteNetworkToken, 'ForbiddenError').code).toBe('forbidden');
      // Allowed through: the upstream answers not-found.
      expect(
        member((await read(UNKNOWN_TOK_ALIAS, readOnly)).data?.networkToken, 'NetworkTokenNotFoundError')
          .code,
      ).toBe('not-found');
    });

    it('lets network-tokens:write provision and delete but not read', async () => {
      const writeOnly = await t.stack.token({ vaults: [VAULT1], scopes: ['network-tokens:write'] });
      const { result, requests } = await withRequests(() => read(UNKNOWN_TOK_ALIAS, writeOnly));
      expect(requests).toEqual([]);
      expect(member(result.data?.networkToken, 'ForbiddenError').code).toBe('forbidden');
      expect(
        member(
          (await provision({ panAlias: UNKNOWN_TOK_ALIAS, expMonth: 11, expYear: 29 }, writeOnly)).data
            ?.provisionNetworkToken,
          'NetworkTokenNotFoundError',
        ).code,
      ).toBe('not-found');
      expect(
        member(
          (await remove(UNKNOWN_TOK_ALIAS, writeOnly)).data?.deleteNetworkToken,
          'NetworkTokenNotFoundError',
        ).code,
      ).toBe('not-found');
    });

    it('answers UnauthenticatedError without a token, and cards scopes do not suffice', async () => {
      const cardsOnly = await t.stack.token({ vaults: [VAULT1], scopes: ['cards:read', 'cards:write'] });
      for (const [token, typename, code] of [
        [null, 'UnauthenticatedError', 'unauthenticated'],
        [cardsOnly, 'ForbiddenError', 'forbidden'],
      ] as const) {
        const { result, requests } = await withRequests(async () => [
          (await read(UNKNOWN_TOK_ALIAS, token)).data?.networkToken,
          (await provision({ panAlias: UNKNOWN_TOK_ALIAS, expMonth: 11, expYear: 29 }, token)).data
            ?.provisionNetworkToken,
          (await remove(UNKNOWN_TOK_ALIAS, token)).data?.deleteNetworkToken,
        ]);
        expect(requests).toEqual([]);
        for (const value of result) expect(value).toMatchObject({ __typename: typename, code });
      }
    });
  });
});
