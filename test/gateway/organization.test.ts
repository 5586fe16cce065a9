import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type InviteAttributes,
  type MemberAttributes,
  SANDBOX_INVITES,
  SANDBOX_MEMBERS,
  type VaultMembership,
} from '../../src/sandbox/organization-members.ts';
import type { It4_Org_InviteFieldsFragment, It4_Org_MemberFieldsFragment } from '../generated/graphql.ts';
import { graphql } from '../generated/index.ts';
import { member, SANDBOX_OWNER, type Stack, startStack } from '../support/fixtures.ts';

/**
 * Organization members and invitations through the gateway's GraphQL API over HTTP against the
 * embedded sandbox: `organization(id)` with its `members` and `invites` Relay connections (forward
 * pagination across pages), `VaultMembership.vault`, the seeded sandbox organization
 * `ACsandbox000000000000001`, the errors of the area (unknown organization, bad id, scope) and the
 * number of upstream requests (spec "Organization member (user)", "Organization members";
 * docs/gap-decisions.md "Organization members").
 */

// Shared by the documents below; the codegen inlines them into each of them.
graphql(`
  fragment IT4_ORG_MemberFields on OrganizationMember {
    id
    name
    emailAddress
    role
    permissions
    ssoId
    createdAt
    vaults { role vault { id name environment } }
  }
`);

graphql(`
  fragment IT4_ORG_InviteFields on OrganizationInvite {
    id
    emailAddress
    role
    state
    invitedBy
    createdAt
    vaults { role vault { id name environment } }
  }
`);

// One page of `members`, or of `invites` instead with `$invites: true`: the two connections share the
// organization and the paging arguments, and a skipped one reads nothing upstream.
const Page = graphql(`
  query IT4_ORG_Page(
    $id: String!
    $first: Int
    $after: String
    $vaultId: String
    $invites: Boolean! = false
  ) {
    organization(id: $id, vaultId: $vaultId) {
      __typename
      ... on QueryOrganizationSuccess {
        data {
          id
          members(first: $first, after: $after) @skip(if: $invites) {
            edges { cursor node { ...IT4_ORG_MemberFields } }
            pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
          }
          invites(first: $first, after: $after) @include(if: $invites) {
            edges { cursor node { ...IT4_ORG_InviteFields } }
            pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
          }
        }
      }
      ...ErrorFields
    }
  }
`);

const Everything = graphql(`
  query IT4_ORG_Everything($id: String!) {
    organization(id: $id) {
      __typename
      ... on QueryOrganizationSuccess {
        data {
          id
          first: members(first: 2) { edges { node { id } } }
          members { edges { node { ...IT4_ORG_MemberFields } } pageInfo { hasNextPage } }
          invites { edges { node { ...IT4_ORG_InviteFields } } pageInfo { hasNextPage } }
        }
      }
      ...ErrorFields
    }
  }
`);

const Backwards = graphql(`
  query IT4_ORG_Backwards($id: String!, $last: Int, $before: String) {
    organization(id: $id) {
      __typename
      ... on QueryOrganizationSuccess {
        data { members(last: $last, before: $before) { edges { node { id } } } }
      }
      ...ErrorFields
    }
  }
`);

const ORGANIZATION_ID = 'ACsandbox000000000000001';
const MEMBERS_PATH = `/accounts/organizations/${ORGANIZATION_ID}/members`;
const INVITES_PATH = `/accounts/organizations/${ORGANIZATION_ID}/invites`;
const VAULT1 = 'tntsandbox1';
const VAULT2 = 'tntsandbox2';

const membershipOf = (vault: VaultMembership) => ({
  role: vault.role,
  vault: { id: vault.id, name: vault.name, environment: vault.env_identifier },
});

/** The GraphQL `OrganizationMember` a seeded sandbox member must come back as. */
const memberOf = (seed: MemberAttributes): It4_Org_MemberFieldsFragment => ({
  id: seed.id,
  name: seed.name,
  emailAddress: seed.email_address,
  role: seed.role,
  permissions: seed.permissions,
  ssoId: seed.sso_id,
  createdAt: seed.created_at,
  vaults: seed.vaults.map(membershipOf),
});

/** The GraphQL `OrganizationInvite` a seeded sandbox invitation must come back as. */
const inviteOf = (seed: InviteAttributes): It4_Org_InviteFieldsFragment => ({
  id: seed.id,
  emailAddress: seed.email_address,
  role: seed.role,
  state: seed.state,
  invitedBy: seed.invited_by,
  createdAt: seed.created_at,
  vaults: seed.vaults.map(membershipOf),
});

describe('organization members and invites through GraphQL', () => {
  let stack: Stack;
  let vault1Token: string;

  beforeAll(async () => {
    stack = await startStack();
    vault1Token = await stack.token({ vaults: [VAULT1] });
  });
  afterAll(() => stack.stop());

  /** Runs `work` and returns it with the sandbox requests answered meanwhile, token requests left out. */
  async function withRequests<T>(work: () => Promise<T>) {
    const before = stack.sandbox!.requests().length;
    const result = await work();
    const requests = stack.sandbox!.requests().slice(before);
    return { result, requests: requests.filter((r) => r.path !== '/oauth/token'), all: requests };
  }

  /** One page of members, failing the test on anything but success. */
  async function membersPage(variables: { first?: number; after?: string | null }, token = vault1Token) {
    const result = await stack.execute(Page, { id: ORGANIZATION_ID, ...variables }, token);
    expect(result.errors).toBeUndefined();
    const members = member(result.data?.organization, 'QueryOrganizationSuccess').data.members;
    if (!members) throw new Error('members connection is null');
    return members;
  }

  it('seeds eight members and three invitations (the tables below rely on it)', () => {
    expect(SANDBOX_MEMBERS.map((m) => m.id)).toEqual([
      'USsandbox000000000000001',
      'USsandbox000000000000002',
      'USsandbox000000000000003',
      'USsandbox000000000000004',
      'USsandbox000000000000005',
      'USsandbox000000000000006',
      'USsandbox000000000000007',
      'USsandbox000000000000008',
    ]);
    expect(SANDBOX_INVITES.map((i) => i.id)).toEqual([
      'INsandbox000000000000001',
      'INsandbox000000000000002',
      'INsandbox000000000000003',
    ]);
  });

  describe('members', () => {
    it('answers every member, oldest first, with one upstream request', async () => {
      const { result, requests } = await withRequests(() => membersPage({}));
      expect(result.edges.map((edge) => edge.node)).toEqual(SANDBOX_MEMBERS.map(memberOf));
      expect(result.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      expect(result.pageInfo.endCursor).toBe(result.edges.at(-1)!.cursor);
      expect(requests).toEqual([{ method: 'GET', path: MEMBERS_PATH, status: 200, vault: VAULT1 }]);
    });

    it('answers the owner with the exact fields of the spec', async () => {
      const page = await membersPage({ first: 1 });
      expect(page.edges.map((edge) => edge.node)).toEqual([
        {
          ...SANDBOX_OWNER,
          vaults: [
            { role: 'admin', vault: { id: VAULT1, name: 'Sandbox vault 1', environment: 'SANDBOX' } },
            { role: 'admin', vault: { id: VAULT2, name: 'Sandbox vault 2', environment: 'LIVE' } },
          ],
        },
      ]);
      expect(page.pageInfo.hasNextPage).toBe(true);
    });

    it('pages forwards with first and after until hasNextPage is false', async () => {
      const { result: pages, requests } = await withRequests(async () => {
        const first = await membersPage({ first: 3 });
        const second = await membersPage({ first: 3, after: first.pageInfo.endCursor });
        const third = await membersPage({ first: 3, after: second.pageInfo.endCursor });
        return [first, second, third];
      });
      expect(pages.map((page) => page.edges.map((edge) => edge.node.id))).toEqual([
        ['USsandbox000000000000001', 'USsandbox000000000000002', 'USsandbox000000000000003'],
        ['USsandbox000000000000004', 'USsandbox000000000000005', 'USsandbox000000000000006'],
        ['USsandbox000000000000007', 'USsandbox000000000000008'],
      ]);
      expect(pages.map((page) => [page.pageInfo.hasPreviousPage, page.pageInfo.hasNextPage])).toEqual([
        [false, true],
        [true, true],
        [true, false],
      ]);
      for (const page of pages) {
        expect(page.pageInfo.startCursor).toBe(page.edges[0]!.cursor);
        expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)!.cursor);
      }
      const cursors = pages.flatMap((page) => page.edges.map((edge) => edge.cursor));
      expect(new Set(cursors).size).toBe(8);
      // The whole list comes back in the seeded order over the pages.
      expect(pages.flatMap((page) => page.edges.map((edge) => edge.node))).toEqual(
        SANDBOX_MEMBERS.map(memberOf),
      );
      // One upstream page per GraphQL request, shared by `organization` and `members`.
      expect(requests).toEqual(
        Array.from({ length: 3 }, () => ({ method: 'GET', path: MEMBERS_PATH, status: 200, vault: VAULT1 })),
      );

      // A cursor stays valid from one request to the next; after the last edge the page is empty.
      const again = await membersPage({ first: 2, after: pages[0]!.edges[1]!.cursor });
      expect(again.edges.map((edge) => edge.node.id)).toEqual([
        'USsandbox000000000000003',
        'USsandbox000000000000004',
      ]);
      const pastTheEnd = await membersPage({ first: 3, after: pages[2]!.pageInfo.endCursor });
      expect(pastTheEnd.edges).toEqual([]);
      expect(pastTheEnd.pageInfo.hasNextPage).toBe(false);
    });

    it('lists a member without vault access with no vaults, and the role in each vault', async () => {
      const page = await membersPage({});
      const byId = new Map(page.edges.map((edge) => [edge.node.id, edge.node]));
      expect(byId.get('USsandbox000000000000007')).toMatchObject({
        name: 'Donald Knuth',
        role: 'viewer',
        permissions: ['read'],
        vaults: [],
      });
      expect(byId.get('USsandbox000000000000008')?.vaults).toEqual([
        { role: 'developer', vault: { id: VAULT1, name: 'Sandbox vault 1', environment: 'SANDBOX' } },
        { role: 'viewer', vault: { id: VAULT2, name: 'Sandbox vault 2', environment: 'LIVE' } },
      ]);
      expect(byId.get('USsandbox000000000000003')).toMatchObject({
        role: 'developer',
        permissions: ['read', 'write'],
      });
    });

    it('reads the same organization with the credentials of the other vault', async () => {
      const vault2Token = await stack.token({ vaults: [VAULT2] });
      const { result, requests } = await withRequests(() => membersPage({}, vault2Token));
      expect(result.edges.map((edge) => edge.node)).toEqual(SANDBOX_MEMBERS.map(memberOf));
      expect(requests).toEqual([{ method: 'GET', path: MEMBERS_PATH, status: 200, vault: VAULT2 }]);

      const bothVaults = await stack.token({ vaults: [VAULT1, VAULT2] });
      const named = await stack.execute(Page, { id: ORGANIZATION_ID, vaultId: VAULT2, first: 1 }, bothVaults);
      expect(member(named.data?.organization, 'QueryOrganizationSuccess').data.members!.edges).toHaveLength(
        1,
      );
      const unnamed = await stack.execute(Page, { id: ORGANIZATION_ID }, bothVaults);
      expect(member(unnamed.data?.organization, 'ForbiddenError').code).toBe('vault-required');
    });
  });

  describe('invites', () => {
    it('answers the pending invitations, oldest first, paged forwards', async () => {
      const { result, requests } = await withRequests(async () => {
        const all = await stack.execute(Page, { id: ORGANIZATION_ID, invites: true }, vault1Token);
        const first = await stack.execute(
          Page,
          { id: ORGANIZATION_ID, invites: true, first: 2 },
          vault1Token,
        );
        const firstPage = member(first.data?.organization, 'QueryOrganizationSuccess').data.invites!;
        const second = await stack.execute(
          Page,
          { id: ORGANIZATION_ID, invites: true, first: 2, after: firstPage.pageInfo.endCursor },
          vault1Token,
        );
        return {
          all: member(all.data?.organization, 'QueryOrganizationSuccess').data.invites!,
          firstPage,
          secondPage: member(second.data?.organization, 'QueryOrganizationSuccess').data.invites!,
        };
      });
      expect(result.all.edges.map((edge) => edge.node)).toEqual(SANDBOX_INVITES.map(inviteOf));
      expect(result.all.edges[2]!.node).toEqual({
        id: 'INsandbox000000000000003',
        emailAddress: 'ken.thompson@example.com',
        role: 'admin',
        state: 'pending',
        invitedBy: 'USsandbox000000000000001',
        createdAt: '2025-11-20T08:15:42.900Z',
        vaults: [
          { role: 'admin', vault: { id: VAULT1, name: 'Sandbox vault 1', environment: 'SANDBOX' } },
          { role: 'admin', vault: { id: VAULT2, name: 'Sandbox vault 2', environment: 'LIVE' } },
        ],
      });
      expect(result.all.pageInfo.hasNextPage).toBe(false);
      expect(result.firstPage.edges.map((edge) => edge.node.id)).toEqual([
        'INsandbox000000000000001',
        'INsandbox000000000000002',
      ]);
      expect(result.firstPage.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      expect(result.secondPage.edges.map((edge) => edge.node.id)).toEqual(['INsandbox000000000000003']);
      expect(result.secondPage.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      // Each request reads the members page (the organization exists) and one invites page.
      expect(requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(
        Array.from({ length: 3 }, () => [`GET ${MEMBERS_PATH} 200`, `GET ${INVITES_PATH} 200`]).flat(),
      );
    });
  });

  it('answers members, invites and every vault of them with one upstream request per list', async () => {
    const { result, requests } = await withRequests(() =>
      stack.execute(Everything, { id: ORGANIZATION_ID }, vault1Token),
    );
    expect(result.errors).toBeUndefined();
    const organization = member(result.data?.organization, 'QueryOrganizationSuccess').data;
    expect(organization.id).toBe(ORGANIZATION_ID);
    expect(organization.first!.edges.map((edge) => edge.node.id)).toEqual([
      'USsandbox000000000000001',
      'USsandbox000000000000002',
    ]);
    expect(organization.members!.edges.map((edge) => edge.node)).toEqual(SANDBOX_MEMBERS.map(memberOf));
    expect(organization.invites!.edges.map((edge) => edge.node)).toEqual(SANDBOX_INVITES.map(inviteOf));
    expect(requests).toEqual([
      { method: 'GET', path: MEMBERS_PATH, status: 200, vault: VAULT1 },
      { method: 'GET', path: INVITES_PATH, status: 200, vault: VAULT1 },
    ]);
  });

  describe('errors', () => {
    it('answers OrganizationNotFoundError not-found for an organization the upstream does not know', async () => {
      const { result, requests } = await withRequests(() =>
        stack.execute(Page, { id: 'ACunknown000000000000001' }, vault1Token),
      );
      expect(result.errors).toBeUndefined();
      expect(result.data?.organization).toEqual({
        __typename: 'OrganizationNotFoundError',
        code: 'not-found',
        message: 'The organization was not found',
      });
      expect(requests).toEqual([
        {
          method: 'GET',
          path: '/accounts/organizations/ACunknown000000000000001/members',
          status: 404,
          vault: VAULT1,
        },
      ]);
    });

    it.each(['', 'AC-sandbox', 'AC sandbox', 'A'.repeat(65), '../ACsandbox000000000000001'])(
      'answers InputValidationError for the malformed id %j, with no upstream request',
      async (id) => {
        const { result, all } = await withRequests(() => stack.execute(Page, { id }, vault1Token));
        expect(all).toEqual([]);
        expect(result.data?.organization).toEqual({
          __typename: 'InputValidationError',
          code: 'invalid-input',
          message: expect.any(String),
          issues: [{ path: ['id'], message: 'must be an organization id' }],
        });
      },
    );

    it('answers ForbiddenError without organization-users:read and UnauthenticatedError without a token', async () => {
      const cardsOnly = await stack.token({
        vaults: [VAULT1],
        scopes: ['cards:read', 'cards:write', 'network-tokens:read', 'card-attributes:basic'],
      });
      const { result, all } = await withRequests(async () => [
        await stack.execute(Page, { id: ORGANIZATION_ID }, cardsOnly),
        await stack.execute(Page, { id: ORGANIZATION_ID }, null),
      ]);
      expect(all).toEqual([]);
      expect(member(result[0]!.data?.organization, 'ForbiddenError').code).toBe('forbidden');
      expect(member(result[1]!.data?.organization, 'UnauthenticatedError').code).toBe('unauthenticated');

      const onlyScope = await stack.token({ vaults: [VAULT1], scopes: ['organization-users:read'] });
      expect((await membersPage({ first: 1 }, onlyScope)).edges).toHaveLength(1);
    });

    // The connections are nullable, so a bad paging argument nulls only that connection: a GraphQL
    // error that carries the code and the argument, like `cardEvents`.
    it.each<[string, { first?: number; after?: string; last?: number; before?: string }, string[]]>([
      ['last', { last: 2 }, ['last']],
      ['last and before', { last: 2, before: 'T2Zmc2V0Q29ubmVjdGlvbjo1' }, ['last', 'before']],
      ['a negative first', { first: -1 }, ['first']],
      ['an after that is not base64 of a cursor', { after: 'not-a-cursor' }, ['after']],
      ['an after of another connection', { after: Buffer.from('CardEvent:1').toString('base64') }, ['after']],
      [
        'a negative offset cursor',
        { after: Buffer.from('OffsetConnection:-5').toString('base64') },
        ['after'],
      ],
    ])('refuses %s as invalid input', async (_case, variables, names) => {
      const backwards = variables.last != null || variables.before != null;
      const result = backwards
        ? await stack.execute(Backwards, { id: ORGANIZATION_ID, ...variables }, vault1Token)
        : await stack.execute(Page, { id: ORGANIZATION_ID, ...variables }, vault1Token);
      expect(result.data?.organization).toMatchObject({
        __typename: 'QueryOrganizationSuccess',
        data: { members: null },
      });
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]).toMatchObject({
        path: ['organization', 'data', 'members'],
        extensions: { code: 'invalid-input' },
      });
      for (const name of names) expect(result.errors![0]!.message).toContain(name);
    });
  });
});
