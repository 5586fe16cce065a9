import { beforeAll, describe, expect, it } from 'vitest';
import type { OrganizationMember } from '../../src/upstream/accounts/client.ts';
import { AccountsClient } from '../../src/upstream/accounts/client.ts';
import { membersPageSchema } from '../../src/upstream/accounts/schemas.ts';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import { areaLogEntries, CREDENTIALS, rejectionOf, SANDBOX_OWNER, useUpstream } from '../support/fixtures.ts';

/** Organization members client against the embedded sandbox (spec "Organization members"; contract §2). */

const VAULT = 'tntsandbox1';
const ORGANIZATION = 'ACsandbox000000000000001';
const MEMBERS_PATH = `/accounts/organizations/${ORGANIZATION}/members`;
const MEMBER_IDS = Array.from({ length: 8 }, (_, i) => `USsandbox00000000000000${i + 1}`);

// The specification's reading (JSON:API paging); the documented unpaged list is in
// documented-answers.test.ts.
const fixture = useUpstream({ wire: 'specification' });
let accounts: AccountsClient;
beforeAll(() => {
  accounts = new AccountsClient(fixture.clientOptions('/accounts'));
});

const ADA: OrganizationMember = {
  ...SANDBOX_OWNER,
  vaults: [
    { id: 'tntsandbox1', name: 'Sandbox vault 1', role: 'admin', envIdentifier: 'SANDBOX' },
    { id: 'tntsandbox2', name: 'Sandbox vault 2', role: 'admin', envIdentifier: 'LIVE' },
  ],
};

describe('AccountsClient', () => {
  it('lists the members of the organization on one default page', async () => {
    const page = await accounts.listMembers(VAULT, ORGANIZATION);
    expect(page.total).toBe(8);
    expect(page.nextPage).toBeUndefined();
    expect(page.items.map((member) => member.id)).toEqual(MEMBER_IDS);
    expect(page.items[0]).toEqual(ADA);
    expect(page.items[6]).toEqual({
      id: 'USsandbox000000000000007',
      name: 'Donald Knuth',
      emailAddress: 'donald.knuth@example.com',
      role: 'viewer',
      permissions: ['read'],
      ssoId: '8d2f4c7e-5b1a-4e3c-9a6d-000000000007',
      createdAt: '2025-01-14T19:00:00.001Z',
      vaults: [],
    });
  });

  it('pages through the members by following nextPage, from either vault', async () => {
    const seen: string[] = [];
    const pages: { size: number; next: unknown }[] = [];
    let request: { number?: number; size?: number } | undefined = { size: 3 };
    while (request) {
      const page = await accounts.listMembers('tntsandbox2', ORGANIZATION, request);
      expect(page.total).toBe(8);
      seen.push(...page.items.map((member) => member.id));
      pages.push({ size: page.items.length, next: page.nextPage });
      request = page.nextPage;
    }
    expect(seen).toEqual(MEMBER_IDS);
    expect(pages).toEqual([
      { size: 3, next: { number: 2, size: 3 } },
      { size: 3, next: { number: 3, size: 3 } },
      { size: 2, next: undefined },
    ]);
    expect(await accounts.listMembers(VAULT, ORGANIZATION, { number: 9, size: 3 })).toEqual({
      items: [],
      total: 8,
    });
    expect(
      fixture.sandbox
        .requests()
        .filter((r) => r.path === MEMBERS_PATH)
        .map((r) => r.vault),
    ).toContain('tntsandbox2');
  });

  it('lists the pending invitations', async () => {
    const page = await accounts.listInvites(VAULT, ORGANIZATION, { number: 1, size: 2 });
    expect(page).toEqual({
      items: [
        {
          id: 'INsandbox000000000000001',
          emailAddress: 'linus.torvalds@example.com',
          role: 'developer',
          vaults: [
            { id: 'tntsandbox1', name: 'Sandbox vault 1', role: 'developer', envIdentifier: 'SANDBOX' },
          ],
          invitedBy: 'USsandbox000000000000001',
          state: 'pending',
          createdAt: '2025-09-01T10:00:00.000Z',
        },
        {
          id: 'INsandbox000000000000002',
          emailAddress: 'radia.perlman@example.com',
          role: 'viewer',
          vaults: [{ id: 'tntsandbox2', name: 'Sandbox vault 2', role: 'viewer', envIdentifier: 'LIVE' }],
          invitedBy: 'USsandbox000000000000002',
          state: 'pending',
          createdAt: '2025-10-12T15:30:00.250Z',
        },
      ],
      total: 3,
      nextPage: { number: 2, size: 2 },
    });
    const last = await accounts.listInvites(VAULT, ORGANIZATION, page.nextPage);
    expect(last.items.map((invite) => invite.id)).toEqual(['INsandbox000000000000003']);
    expect(last.nextPage).toBeUndefined();
  });

  it('maps 404 not-found for another organization and 400 bad-request for a page size over the maximum', async () => {
    for (const list of [accounts.listMembers.bind(accounts), accounts.listInvites.bind(accounts)]) {
      const error = await rejectionOf(list(VAULT, 'ACother00000000000000001'));
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ area: 'accounts', status: 404, code: 'not-found', retryable: false });
    }
    await expect(accounts.listMembers(VAULT, ORGANIZATION, { size: 101 })).rejects.toMatchObject({
      area: 'accounts',
      status: 400,
      code: 'bad-request',
    });
  });

  it('maps 403 forbidden for a token without organization-users:read', async () => {
    const cardsOnly = new AccessTokenProvider({
      tokenUrl: `${fixture.url}/oauth/token`,
      credentials: CREDENTIALS,
      http: fixture.http,
      scope: 'cards:read',
    });
    const client = new AccountsClient({
      baseUrl: `${fixture.url}/accounts`,
      tokens: cardsOnly,
      http: fixture.http,
    });
    await expect(client.listMembers(VAULT, ORGANIZATION)).rejects.toMatchObject({
      area: 'accounts',
      status: 403,
      code: 'forbidden',
      retryable: false,
    });
  });

  it('refuses a malformed organization id or page with InvalidArgumentError before any request', async () => {
    const before = fixture.sandbox.requests().length;
    for (const bad of ['', 'AC/../x', 'AC sandbox', 'AC?x=1', 'x'.repeat(129)]) {
      const error = (await rejectionOf(accounts.listMembers(VAULT, bad))) as InvalidArgumentError;
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.argument).toBe('organizationId');
    }
    for (const page of [{ number: 0 }, { size: -1 }, { number: 1.5 }, { size: Number.NaN }]) {
      const error = (await rejectionOf(
        accounts.listInvites(VAULT, ORGANIZATION, page),
      )) as InvalidArgumentError;
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.argument).toBe('page');
    }
    expect(fixture.sandbox.requests().length).toBe(before);
  });

  it('logged the calls with area accounts and the path without the query', () => {
    const calls = areaLogEntries(fixture.logLines, 'accounts');
    expect(calls).toContainEqual(
      expect.objectContaining({
        level: 20,
        method: 'GET',
        path: MEMBERS_PATH,
        status: 200,
        msg: 'upstream call',
      }),
    );
  });
});

describe('membersPageSchema', () => {
  const user = {
    id: 'USsandbox000000000000009',
    type: 'users',
    attributes: {
      created_at: '2026-01-01T00:00:00.000Z',
      id: 'USsandbox000000000000009',
      name: 'New Member',
      email_address: 'new.member@example.com',
      vaults: [{ id: 'tntsandbox1', name: 'Sandbox vault 1', role: 'auditor', env_identifier: 'STAGING' }],
      role: 'billing',
      permissions: ['read', 'audit'],
      sso_id: null,
    },
  };

  it('keeps unknown roles, permissions and environments; a null sso_id is left out; no links is the whole list', () => {
    expect(membersPageSchema.parse({ data: [user] })).toEqual({
      whole: true,
      items: [
        {
          id: 'USsandbox000000000000009',
          name: 'New Member',
          emailAddress: 'new.member@example.com',
          role: 'billing',
          permissions: ['read', 'audit'],
          createdAt: '2026-01-01T00:00:00.000Z',
          vaults: [{ id: 'tntsandbox1', name: 'Sandbox vault 1', role: 'auditor', envIdentifier: 'STAGING' }],
        },
      ],
    });
  });

  it('refuses drift: another resource type, a next link without page[number], permissions not an array', () => {
    expect(membersPageSchema.safeParse({ data: [{ ...user, type: 'people' }] }).success).toBe(false);
    expect(
      membersPageSchema.safeParse({ data: [user], links: { next: '/members?cursor=abc' } }).success,
    ).toBe(false);
    expect(
      membersPageSchema.safeParse({
        data: [{ ...user, attributes: { ...user.attributes, permissions: 'read' } }],
      }).success,
    ).toBe(false);
  });
});
