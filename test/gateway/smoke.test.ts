import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { useStack } from '../support/fixtures.ts';

const Viewer = graphql(`
  query SmokeViewer {
    viewer { subject vaults scopes }
  }
`);

describe('gateway smoke', () => {
  const t = useStack();

  it('answers viewer for a valid token and null without one', async () => {
    const token = await t.stack.token({ vaults: ['tntsandbox2'], scopes: ['cards:read'], subject: 'smoke' });
    const withToken = await t.stack.execute(Viewer, {}, token);
    expect(withToken.data).toEqual({
      viewer: { subject: 'smoke', vaults: ['tntsandbox2'], scopes: ['cards:read'] },
    });
    const anonymous = await t.stack.execute(Viewer, {}, null);
    expect(anonymous.data).toEqual({ viewer: null });
  });

  it('rejects a token signed with another secret with 401 and code invalid-token', async () => {
    const result = await t.stack.execute(Viewer, {}, 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl');
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('invalid-token');
  });
});

describe('operation limits (graphql-armor)', () => {
  const t = useStack();

  async function post(query: string) {
    const token = await t.stack.token();
    const response = await request(`${t.stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
    return {
      status: response.statusCode,
      body: (await response.body.json()) as { errors?: { message: string }[] },
    };
  }

  it('refuses more than 15 aliases and nesting deeper than 12 before any upstream call', async () => {
    const before = t.stack.sandbox!.requests().length;
    const aliases = await post(
      `{ ${Array.from({ length: 16 }, (_, i) => `v${i}: viewer { subject }`).join(' ')} }`,
    );
    expect(aliases.body.errors?.[0]?.message).toContain('Aliases limit of 15 exceeded');
    const nested = (depth: number): string =>
      depth === 0
        ? 'id'
        : `... on Organization { members { edges { node { vaults { vault { ${nested(depth - 1)} } } } } } }`;
    const deep = await post(`{ node(id: "x") { ${nested(2)} } }`);
    expect(deep.body.errors?.[0]?.message).toContain('Query depth limit of 12 exceeded');
    expect(t.stack.sandbox!.requests().length).toBe(before);
  });
});
