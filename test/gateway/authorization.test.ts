import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { CreateCard, EnrolCard } from '../support/documents.ts';
import { expiredTestToken, type Stack, startStack, TEST_JWT_SECRET } from '../support/fixtures.ts';

/**
 * Client authorization through the gateway's GraphQL API (docs/gap-decisions.md "Client tokens";
 * scopes per endpoint of "Scopes per endpoint"): no token, a token without the scope, the vault
 * choice, and an expired token. None of these failures may reach the upstream.
 */

const ReadCard = graphql(`
  query IT_AZ_ReadCard($cardId: String!, $vaultId: String) {
    card(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ... on QueryCardSuccess { data { cardId vaultId } }
      ...ErrorFields
    }
  }
`);

const ReadAccountUpdaterCard = graphql(`
  query IT_AZ_ReadAccountUpdaterCard($cardId: String!, $vaultId: String) {
    accountUpdaterCard(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ... on QueryAccountUpdaterCardSuccess { data { cardId } }
      ...ErrorFields
    }
  }
`);

const CheckAccountUpdaterCard = graphql(`
  mutation IT_AZ_CheckAccountUpdaterCard($input: CheckAccountUpdaterCardInput!, $vaultId: String) {
    checkAccountUpdaterCard(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationCheckAccountUpdaterCardSuccess { data { event } }
      ...ErrorFields
    }
  }
`);

const Subscribe = graphql(`
  mutation IT_AZ_Subscribe($cardId: String!, $vaultId: String) {
    subscribeCardUpdates(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ...ErrorFields
    }
  }
`);

const Unsubscribe = graphql(`
  mutation IT_AZ_Unsubscribe($cardId: String!, $vaultId: String) {
    unsubscribeCardUpdates(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ...ErrorFields
    }
  }
`);

const CheckCardUpdates = graphql(`
  mutation IT_AZ_CheckCardUpdates($cardId: String!, $vaultId: String) {
    checkCardUpdates(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ...ErrorFields
    }
  }
`);

const ReadNode = graphql(`
  query IT_AZ_ReadNode($id: ID!) {
    node(id: $id) { __typename id }
  }
`);

const Viewer = graphql(`
  query IT_AZ_Viewer {
    viewer { subject vaults scopes }
  }
`);

const VAULT1 = 'tntsandbox1';
const VAULT2 = 'tntsandbox2';
const VISA = '4111111111111111';
const NEW_CARD = { pan: VISA, expMonth: 11, expYear: 29 };
const ENROL_CARD = { name: 'Ada Lovelace', number: VISA, expMonth: 11, expYear: 29 };
const UNKNOWN_CARD_ID = 'CRD0000000000000000000000';

describe('authorization through GraphQL', () => {
  let stack: Stack;
  let fullToken: string;
  let cardId: string;
  let cardNodeId: string;
  let writeOnlyToken: string;

  beforeAll(async () => {
    stack = await startStack();
    fullToken = await stack.token({ vaults: [VAULT1] });
    writeOnlyToken = await stack.token({ vaults: [VAULT1], scopes: ['cards:write'] });
    const created = await stack.execute(CreateCard, { input: NEW_CARD }, fullToken);
    const result = created.data?.createCard;
    if (result?.__typename !== 'MutationCreateCardSuccess') throw new Error(JSON.stringify(created));
    cardId = result.data.cardId;
    cardNodeId = result.data.id;
  });
  afterAll(() => stack.stop());

  /** Number of requests the sandbox answered so far (the upstream request log). */
  const upstreamRequests = () => stack.sandbox!.requests().length;

  /** Every root field that needs a scope, with the code of its result, run with `token`. */
  async function everyField(token: string | null, vaultId?: string): Promise<Record<string, unknown>> {
    const vault = vaultId ? { vaultId } : {};
    const results = await Promise.all([
      stack.execute(CreateCard, { input: NEW_CARD, ...vault }, token),
      stack.execute(ReadCard, { cardId, ...vault }, token),
      stack.execute(ReadAccountUpdaterCard, { cardId: UNKNOWN_CARD_ID, ...vault }, token),
      stack.execute(EnrolCard, { input: ENROL_CARD, ...vault }, token),
      stack.execute(CheckAccountUpdaterCard, { input: ENROL_CARD, ...vault }, token),
      stack.execute(Subscribe, { cardId, ...vault }, token),
      stack.execute(Unsubscribe, { cardId, ...vault }, token),
      stack.execute(CheckCardUpdates, { cardId, ...vault }, token),
    ]);
    const fields: Record<string, unknown> = {};
    for (const result of results) {
      expect(result.status).toBe(200);
      expect(result.errors).toBeUndefined();
      for (const [field, value] of Object.entries(result.data ?? {})) {
        const { __typename, code } = value as { __typename: string; code?: string };
        fields[field] = { __typename, code };
      }
    }
    return fields;
  }

  /** Expected {@link everyField} answer when every field fails with the same error type and code. */
  function allFailWith(__typename: string, code: string): Record<string, unknown> {
    return Object.fromEntries(
      [
        'createCard',
        'card',
        'accountUpdaterCard',
        'enrollAccountUpdaterCard',
        'checkAccountUpdaterCard',
        'subscribeCardUpdates',
        'unsubscribeCardUpdates',
        'checkCardUpdates',
      ].map((field) => [field, { __typename, code }]),
    );
  }

  describe('without a token', () => {
    it('answers UnauthenticatedError on every field that needs a scope, with no upstream call', async () => {
      const before = upstreamRequests();
      expect(await everyField(null)).toEqual(allFailWith('UnauthenticatedError', 'unauthenticated'));
      expect(upstreamRequests()).toBe(before);
    });

    it('answers node(id) with null and viewer with null', async () => {
      const node = await stack.execute(ReadNode, { id: cardNodeId }, null);
      expect(node.data?.node).toBeNull();
      const viewer = await stack.execute(Viewer, {}, null);
      expect(viewer.data).toEqual({ viewer: null });
    });
  });

  describe('a token without the scope', () => {
    it('answers ForbiddenError forbidden on every field for a token with no scope', async () => {
      const token = await stack.token({ vaults: [VAULT1], scopes: [] });
      const before = upstreamRequests();
      expect(await everyField(token)).toEqual(allFailWith('ForbiddenError', 'forbidden'));
      expect(upstreamRequests()).toBe(before);
    });

    it('lets cards:read read cards but not create, enrol, check or subscribe', async () => {
      const token = await stack.token({ vaults: [VAULT1], scopes: ['cards:read'] });
      const before = upstreamRequests();
      const fields = await everyField(token);
      const forbidden = { __typename: 'ForbiddenError', code: 'forbidden' };
      expect(fields).toEqual({
        createCard: forbidden,
        card: { __typename: 'QueryCardSuccess', code: undefined },
        accountUpdaterCard: { __typename: 'CardNotFoundError', code: 'card-not-found' },
        enrollAccountUpdaterCard: forbidden,
        checkAccountUpdaterCard: forbidden,
        subscribeCardUpdates: forbidden,
        unsubscribeCardUpdates: forbidden,
        checkCardUpdates: forbidden,
      });
      // Only the two reads reached the upstream (plus the token request of this vault, if any).
      const reads = stack
        .sandbox!.requests()
        .slice(before)
        .filter((r) => r.path !== '/oauth/token');
      expect(reads.map((r) => `${r.method} ${r.path.replace(/CRD\w+/, '{id}')}`).sort()).toEqual([
        'GET /account-updater/cards/{id}',
        'GET /card-interface/cards/{id}',
      ]);
    });

    it('denies cards:write reading a card', async () => {
      const token = await stack.token({ vaults: [VAULT1], scopes: ['cards:write'] });
      const read = await stack.execute(ReadCard, { cardId }, token);
      expect(read.data?.card).toMatchObject({ __typename: 'ForbiddenError', code: 'forbidden' });
      const node = await stack.execute(ReadNode, { id: cardNodeId }, token);
      expect(node.data?.node).toBeNull();
    });

    // POST /cards and v1 POST /cards need cards:write only (docs/gap-decisions.md "Scopes per endpoint"),
    // and the upstream answers the created record to such a token: once the side effect happened, the
    // client must get the typed result, never a bare top-level error.
    it.each([
      ['createCard', () => stack.execute(CreateCard, { input: NEW_CARD }, writeOnlyToken)],
      ['enrollAccountUpdaterCard', () => stack.execute(EnrolCard, { input: ENROL_CARD }, writeOnlyToken)],
    ] as const)('answers the %s result to a cards:write-only token', async (field, run) => {
      const result = await run();
      expect(result.errors).toBeUndefined();
      expect(
        (result.data as Record<string, { __typename: string }> | null | undefined)?.[field]?.__typename,
      ).toBe(
        field === 'createCard' ? 'MutationCreateCardSuccess' : 'MutationEnrollAccountUpdaterCardSuccess',
      );
    });

    it('ignores scopes of other areas (network-tokens, card-attributes, organization-users)', async () => {
      const token = await stack.token({
        vaults: [VAULT1],
        scopes: [
          'network-tokens:read',
          'network-tokens:write',
          'card-attributes:basic',
          'organization-users:read',
        ],
      });
      expect(await everyField(token)).toEqual(allFailWith('ForbiddenError', 'forbidden'));
    });
  });

  describe('vault choice', () => {
    it('answers vault-required for a token of two vaults without vaultId', async () => {
      const token = await stack.token({ vaults: [VAULT1, VAULT2] });
      const before = upstreamRequests();
      expect(await everyField(token)).toEqual(allFailWith('ForbiddenError', 'vault-required'));
      expect(upstreamRequests()).toBe(before);
    });

    it('acts in the named vault of a two-vault token', async () => {
      const token = await stack.token({ vaults: [VAULT1, VAULT2] });
      const inVault1 = await stack.execute(ReadCard, { cardId, vaultId: VAULT1 }, token);
      expect(inVault1.data?.card).toEqual({
        __typename: 'QueryCardSuccess',
        data: { cardId, vaultId: VAULT1 },
      });
      const inVault2 = await stack.execute(ReadCard, { cardId, vaultId: VAULT2 }, token);
      expect(inVault2.data?.card).toMatchObject({ __typename: 'CardNotFoundError', code: 'card-not-found' });
      const created = await stack.execute(CreateCard, { input: NEW_CARD, vaultId: VAULT2 }, token);
      expect(created.data?.createCard).toMatchObject({
        __typename: 'MutationCreateCardSuccess',
        data: { vaultId: VAULT2 },
      });
    });

    it('answers vault-not-allowed for a vaultId the token does not name', async () => {
      const token = await stack.token({ vaults: [VAULT1] });
      const before = upstreamRequests();
      expect(await everyField(token, VAULT2)).toEqual(allFailWith('ForbiddenError', 'vault-not-allowed'));
      expect(upstreamRequests()).toBe(before);
    });

    it('checks the scope before the vault', async () => {
      const token = await stack.token({ vaults: [VAULT1], scopes: ['cards:read'] });
      const result = await stack.execute(CreateCard, { input: NEW_CARD, vaultId: VAULT2 }, token);
      expect(result.data?.createCard).toMatchObject({ __typename: 'ForbiddenError', code: 'forbidden' });
    });
  });

  describe('token failures', () => {
    it('answers HTTP 401 token-expired for an expired token, with no upstream call', async () => {
      const expired = await expiredTestToken({ vaults: [VAULT1], scopes: ['cards:read', 'cards:write'] });
      const before = upstreamRequests();
      const result = await stack.execute(CreateCard, { input: NEW_CARD }, expired);
      expect(result.status).toBe(401);
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.map((e) => e.extensions?.code)).toEqual(['token-expired']);
      expect(JSON.stringify(result)).not.toContain(VISA);
      expect(upstreamRequests()).toBe(before);
    });

    it('answers HTTP 401 invalid-token for a token without the vaults claim', async () => {
      const nowS = Math.floor(Date.now() / 1000);
      const noVaults = await new SignJWT({ scope: 'cards:read' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject('test-user')
        .setIssuedAt(nowS)
        .setExpirationTime(nowS + 600)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      const result = await stack.execute(ReadCard, { cardId }, noVaults);
      expect(result.status).toBe(401);
      expect(result.errors?.map((e) => e.extensions?.code)).toEqual(['invalid-token']);
    });
  });
});
