import { parse } from 'graphql';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/fixtures.ts';

/**
 * What the endpoint tells about its schema: in production no introspection and no field suggestions
 * unless INTROSPECTION=on / FIELD_SUGGESTIONS=on, over HTTP and graphql-ws alike; in development both.
 */

const INTROSPECTION = parse('{ __schema { queryType { name } } }');
const TYPO = parse('{ viewr { subject } }');

/** POSTs `query` to `${url}/graphql` with `token`; the status and the error messages. */
async function post(url: string, query: string, token: string) {
  const response = await request(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query }),
  });
  const body = (await response.body.json()) as { data?: unknown; errors?: { message: string }[] };
  return {
    status: response.statusCode,
    data: body.data,
    messages: (body.errors ?? []).map((e) => e.message),
  };
}

/** Runs `query` once over graphql-ws; the error messages of its outcome. */
async function overWebSocket(stack: Stack, token: string, query: string): Promise<string[]> {
  const client = stack.wsClient(token);
  return new Promise((resolve) => {
    client.subscribe(
      { query },
      {
        next: () => {},
        error: (errors) => resolve((errors as { message: string }[]).map((e) => e.message)),
        complete: () => resolve([]),
      },
    );
  });
}

describe('NODE_ENV=production defaults', () => {
  let production: Stack;
  let opened: Stack;
  beforeAll(async () => {
    const env = { NODE_ENV: 'production', UPSTREAM: 'embedded' };
    [production, opened] = await Promise.all([
      startStack(env),
      startStack({ ...env, INTROSPECTION: 'on', FIELD_SUGGESTIONS: 'on' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([production?.stop(), opened?.stop()]);
  });

  it('refuses introspection over HTTP and graphql-ws, keeps __typename', async () => {
    const token = await production.token();
    const http = await post(production.url, '{ __schema { queryType { name } } }', token);
    expect(http.status).toBe(400);
    expect(http.messages[0]).toBe(
      'GraphQL introspection has been disabled, but the requested query contained the field "__schema".',
    );
    expect(await overWebSocket(production, token, '{ __type(name: "Query") { name } }')).toEqual([
      'GraphQL introspection has been disabled, but the requested query contained the field "__type".',
    ]);
    expect((await post(production.url, '{ __typename }', token)).data).toEqual({ __typename: 'Query' });
  });

  it('hides field suggestions', async () => {
    const http = await post(production.url, '{ viewr { subject } }', await production.token());
    expect(http.messages).toEqual(['Cannot query field "viewr" on type "Query". [Suggestion hidden]']);
  });

  it('INTROSPECTION=on and FIELD_SUGGESTIONS=on turn them back on', async () => {
    const token = await opened.token();
    expect((await post(opened.url, '{ __schema { queryType { name } } }', token)).data).toEqual({
      __schema: { queryType: { name: 'Query' } },
    });
    expect((await post(opened.url, '{ viewr { subject } }', token)).messages).toEqual([
      'Cannot query field "viewr" on type "Query". Did you mean "viewer"?',
    ]);
  });
});

describe('development defaults', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers introspection and suggests fields', async () => {
    const token = await stack.token();
    const result = await stack.execute(INTROSPECTION, {}, token);
    expect(result.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    const typo = await stack.execute(TYPO, {}, token);
    expect(typo.errors?.[0]?.message).toBe(
      'Cannot query field "viewr" on type "Query". Did you mean "viewer"?',
    );
  });
});
