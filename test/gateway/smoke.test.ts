import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { type Stack, startStack } from '../support/stack.ts';

const Viewer = graphql(`
  query SmokeViewer {
    viewer { subject vaults scopes }
  }
`);

describe('gateway smoke', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  it('answers viewer for a valid token and null without one', async () => {
    const token = await stack.token({ vaults: ['tntsandbox2'], scopes: ['cards:read'], subject: 'smoke' });
    const withToken = await stack.execute(Viewer, {}, token);
    expect(withToken.data).toEqual({
      viewer: { subject: 'smoke', vaults: ['tntsandbox2'], scopes: ['cards:read'] },
    });
    const anonymous = await stack.execute(Viewer, {}, null);
    expect(anonymous.data).toEqual({ viewer: null });
  });

  it('rejects a token signed with another secret with 401 and code invalid-token', async () => {
    const result = await stack.execute(Viewer, {}, 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl');
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('invalid-token');
  });
});
