import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_INVITES, SANDBOX_MEMBERS } from '../../src/sandbox/organization-members.ts';
import { expectSandboxErrorAnswer, startSandbox, type TestSandbox } from '../support/fixtures.ts';

const ORG = 'ACsandbox000000000000001';
const MEMBERS = `/accounts/organizations/${ORG}/members`;
const INVITES = `/accounts/organizations/${ORG}/invites`;
const link = (path: string, number: number, size: number) =>
  `${path}?page%5Bnumber%5D=${number}&page%5Bsize%5D=${size}`;

let t: TestSandbox;
let token: string;
beforeAll(async () => {
  // The specification's reading (paging); the documented one is in organization-members-documented.test.ts.
  t = await startSandbox({ wire: 'specification' });
  token = await t.token('tntsandbox1', 'organization-users:read');
});
afterAll(() => t.stop());

describe('GET /accounts/organizations/{organizationId}/members', () => {
  it('lists the eight seeded users in the spec shape, oldest first, as JSON:API', async () => {
    const response = await t.call('GET', MEMBERS, { token });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(response.body.data).toHaveLength(8);
    expect(response.body.data[0]).toEqual({
      id: 'USsandbox000000000000001',
      type: 'users',
      attributes: {
        created_at: '2024-01-15T09:30:00.000Z',
        id: 'USsandbox000000000000001',
        name: 'Ada Lovelace',
        email_address: 'ada.lovelace@example.com',
        vaults: [
          { id: 'tntsandbox1', name: 'Sandbox vault 1', role: 'admin', env_identifier: 'SANDBOX' },
          { id: 'tntsandbox2', name: 'Sandbox vault 2', role: 'admin', env_identifier: 'LIVE' },
        ],
        role: 'owner',
        permissions: ['read', 'write', 'admin'],
        sso_id: '8d2f4c7e-5b1a-4e3c-9a6d-000000000001',
      },
    });
    expect(response.body.data.map((user: { id: string }) => user.id)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `USsandbox00000000000000${n}`),
    );
    expect(response.body.data.map((user: { attributes: unknown }) => user.attributes)).toEqual(
      SANDBOX_MEMBERS,
    );
    expect(response.body.links).toEqual({
      self: link(MEMBERS, 1, 20),
      first: link(MEMBERS, 1, 20),
      last: link(MEMBERS, 1, 20),
      prev: null,
      next: null,
    });
    expect(response.body.meta).toEqual({ total: 8 });
  });

  it('covers both vaults, every role and permission set, and a member without vault access', () => {
    const roles = new Set(SANDBOX_MEMBERS.map((m) => m.role));
    expect([...roles].sort()).toEqual(['admin', 'developer', 'owner', 'viewer']);
    const vaultRoles = new Set(SANDBOX_MEMBERS.flatMap((m) => m.vaults.map((v) => `${v.id}:${v.role}`)));
    expect(vaultRoles).toContain('tntsandbox1:viewer');
    expect(vaultRoles).toContain('tntsandbox2:developer');
    expect(new Set(SANDBOX_MEMBERS.flatMap((m) => m.vaults.map((v) => v.env_identifier)))).toEqual(
      new Set(['SANDBOX', 'LIVE']),
    );
    expect(SANDBOX_MEMBERS.find((m) => m.vaults.length === 0)?.name).toBe('Donald Knuth');
    expect(new Set(SANDBOX_MEMBERS.map((m) => m.permissions.join(',')))).toEqual(
      new Set(['read,write,admin', 'read,write', 'read']),
    );
  });

  it('excludes pending invitations', async () => {
    const response = await t.call('GET', MEMBERS, { token });
    const emails = response.body.data.map((user: { attributes: { email_address: string } }) => {
      return user.attributes.email_address;
    });
    for (const invite of SANDBOX_INVITES) expect(emails).not.toContain(invite.email_address);
  });

  it('paginates with page[number] and page[size], links and meta.total', async () => {
    const second = await t.call('GET', `${MEMBERS}?page[number]=2&page[size]=3`, { token });
    expect(second.status).toBe(200);
    expect(second.body.data.map((user: { id: string }) => user.id)).toEqual([
      'USsandbox000000000000004',
      'USsandbox000000000000005',
      'USsandbox000000000000006',
    ]);
    expect(second.body.links).toEqual({
      self: link(MEMBERS, 2, 3),
      first: link(MEMBERS, 1, 3),
      last: link(MEMBERS, 3, 3),
      prev: link(MEMBERS, 1, 3),
      next: link(MEMBERS, 3, 3),
    });
    expect(second.body.meta).toEqual({ total: 8 });

    // Following `next` (a path-absolute link, percent-encoded brackets) reaches the last page.
    const last = await t.call('GET', second.body.links.next, { token });
    expect(last.body.data.map((user: { id: string }) => user.id)).toEqual([
      'USsandbox000000000000007',
      'USsandbox000000000000008',
    ]);
    expect(last.body.links.next).toBeNull();
    expect(last.body.links.prev).toBe(link(MEMBERS, 2, 3));

    const beyond = await t.call('GET', `${MEMBERS}?page%5Bnumber%5D=9&page%5Bsize%5D=3`, { token });
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.links.prev).toBe(link(MEMBERS, 3, 3));
    expect(beyond.body.links.next).toBeNull();
    expect(beyond.body.meta).toEqual({ total: 8 });

    const sizeOnly = await t.call('GET', `${MEMBERS}?page[size]=100&sort=name`, { token });
    expect(sizeOnly.body.data).toHaveLength(8);
    expect(sizeOnly.body.links.self).toBe(link(MEMBERS, 1, 100));
  });

  it.each([
    ['page[size]=0', ['page[size]']],
    ['page[size]=101', ['page[size]']],
    ['page[size]=2.5', ['page[size]']],
    ['page[number]=0', ['page[number]']],
    ['page[number]=-1&page[size]=abc', ['page[number]', 'page[size]']],
  ])('answers 400 bad-request naming the parameter for %s', async (query, parameters) => {
    const response = await t.call('GET', `${MEMBERS}?${query}`, { token });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(response.body.errors).toEqual(
      parameters.map((parameter) => ({
        status: '400',
        code: 'bad-request',
        detail: `${parameter} must be an integer from 1 to ${parameter === 'page[size]' ? 100 : 999999999}`,
        source: { parameter },
      })),
    );
  });

  it('answers the same organization to a token of the other vault', async () => {
    const other = await t.call('GET', MEMBERS, { token: await t.token('tntsandbox2') });
    expect(other.status).toBe(200);
    expect(other.body.meta).toEqual({ total: 8 });
  });
});

describe('GET /accounts/organizations/{organizationId}/invites', () => {
  it('lists the three pending invitations as `invites` resources', async () => {
    const response = await t.call('GET', INVITES, { token });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(response.body.data[0]).toEqual({
      id: 'INsandbox000000000000001',
      type: 'invites',
      attributes: {
        created_at: '2025-09-01T10:00:00.000Z',
        id: 'INsandbox000000000000001',
        email_address: 'linus.torvalds@example.com',
        role: 'developer',
        vaults: [
          { id: 'tntsandbox1', name: 'Sandbox vault 1', role: 'developer', env_identifier: 'SANDBOX' },
        ],
        invited_by: 'USsandbox000000000000001',
        state: 'pending',
      },
    });
    expect(response.body.data.map((invite: { id: string }) => invite.id)).toEqual([
      'INsandbox000000000000001',
      'INsandbox000000000000002',
      'INsandbox000000000000003',
    ]);
    expect(response.body.meta).toEqual({ total: 3 });
    expect(response.body.links.next).toBeNull();
  });

  it('paginates like the members list', async () => {
    const response = await t.call('GET', `${INVITES}?page[size]=2`, { token });
    expect(response.body.data).toHaveLength(2);
    expect(response.body.links.next).toBe(link(INVITES, 2, 2));
    expect(response.body.links.last).toBe(link(INVITES, 2, 2));
  });
});

describe('errors of the organization members area', () => {
  it.each([MEMBERS, INVITES])('%s: unknown organization is 404 not-found', async (path) => {
    const response = await t.call('GET', path.replace(ORG, 'ACunknown000000000000000'), { token });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(response.body).toEqual({
      errors: [{ status: '404', code: 'not-found', detail: 'no such organization' }],
    });
  });

  it('needs organization-users:read (403) and a token (401)', async () => {
    const cardsOnly = await t.token('tntsandbox1', 'cards:read cards:write');
    const forbidden = await t.call('GET', MEMBERS, { token: cardsOnly });
    expectSandboxErrorAnswer(
      forbidden,
      403,
      'forbidden',
      'the access token lacks the scope organization-users:read',
    );
    const anonymous = await t.call('GET', INVITES);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="sandbox"');
    expect(anonymous.body.errors[0].code).toBe('unauthorized');
  });

  it('answers 405 for other methods', async () => {
    const response = await t.call('POST', MEMBERS, {
      token,
      body: {},
      contentType: 'application/vnd.api+json',
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.body.errors[0].code).toBe('method-not-allowed');
  });
});
