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

/** POSTs `query` (and `variables`) to `${url}/graphql` with `token`; the status and the error messages. */
async function post(url: string, query: string, token: string, variables?: Record<string, unknown>) {
  const response = await request(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  const body = (await response.body.json()) as { data?: unknown; errors?: { message: string }[] };
  return {
    status: response.statusCode,
    data: body.data,
    messages: (body.errors ?? []).map((e) => e.message),
  };
}

/** Runs `query` once over graphql-ws; the error messages of its outcome. */
async function overWebSocket(
  stack: Stack,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<string[]> {
  const client = stack.wsClient(token);
  return new Promise((resolve) => {
    client.subscribe(
      { query, ...(variables ? { variables } : {}) },
      {
        // A subscription's variable coercion error comes as its one result.
        next: (result) => void (result.errors && resolve(result.errors.map((e) => e.message))),
        error: (errors) => resolve((errors as { message: string }[]).map((e) => e.message)),
        complete: () => resolve([]),
      },
    );
  });
}

/** Misspellings graphql-js answers with a suggestion: field, argument, type, enum literal, enum variable. */
const SUGGESTION_CASES: [string, Record<string, unknown> | undefined][] = [
  ['{ viewr { subject } }', undefined],
  ['{ card(cardID: "CRDx") { id } }', undefined],
  ['query Q($x: Strin) { __typename }', undefined],
  ['subscription { cardEvents(types: [ENROLED]) { id } }', undefined],
  ['subscription S($t: [CardEventType!]) { cardEvents(types: $t) { id } }', { t: ['ENROLED'] }],
];

describe('NODE_ENV=production defaults', () => {
  let production: Stack;
  let opened: Stack;
  /** Production with GRAPHQL_LEAN_HTTP=off: every request through Yoga's own handler. */
  let yogaOnly: Stack;
  beforeAll(async () => {
    const env = { NODE_ENV: 'production', UPSTREAM: 'embedded' };
    [production, opened, yogaOnly] = await Promise.all([
      startStack(env),
      startStack({ ...env, INTROSPECTION: 'on', FIELD_SUGGESTIONS: 'on' }),
      startStack({ ...env, GRAPHQL_LEAN_HTTP: 'off' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([production?.stop(), opened?.stop(), yogaOnly?.stop()]);
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

  it('hides every suggestion: field, argument, type, enum value literal and variable, on the lean path, Yoga and graphql-ws (issue 20 item 9)', async () => {
    const expected = [
      ['Cannot query field "viewr" on type "Query". [Suggestion hidden]'],
      [
        'Unknown argument "cardID" on field "Query.card". [Suggestion hidden]',
        'Cannot query field "id" on type "QueryCardResult".',
        'Field "card" argument "cardId" of type "String!" is required, but it was not provided.',
      ],
      ['Unknown type "Strin". [Suggestion hidden]', 'Variable "$x" is never used in operation "Q".'],
      ['Value does not exist in "CardEventType" enum. [Suggestion hidden]'],
      [
        'Variable "$t" got invalid value at "t[0]"; Value does not exist in "CardEventType" enum. [Suggestion hidden]',
      ],
    ];
    const token = await production.token();
    const leanToken = await yogaOnly.token();
    expect(production.config.graphql.leanHttp).toBe(true);
    expect(yogaOnly.config.graphql.leanHttp).toBe(false);
    for (const [i, [query, variables]] of SUGGESTION_CASES.entries()) {
      expect((await post(production.url, query, token, variables)).messages).toEqual(expected[i]);
      expect((await post(yogaOnly.url, query, leanToken, variables)).messages).toEqual(expected[i]);
      expect(await overWebSocket(production, token, query, variables)).toEqual(expected[i]);
    }
  });

  it('INTROSPECTION=on and FIELD_SUGGESTIONS=on turn them back on', async () => {
    const openedToken = await opened.token();
    for (const [query, variables] of SUGGESTION_CASES) {
      for (const messages of [
        (await post(opened.url, query, openedToken, variables)).messages,
        await overWebSocket(opened, openedToken, query, variables),
      ]) {
        expect(messages.join(' ')).toMatch(
          / Did you mean (the enum value )?"(viewer|cardId|String|ENROLLED)"\?/,
        );
      }
    }
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
