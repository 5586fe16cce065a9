import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { createClient as createSseClient, type ExecutionResult } from 'graphql-sse';
import { createClient as createRedisClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CardAttributesDocument,
  EnrolCardWithWebhookDocument,
  LiveCardEventsDocument,
  MeDocument,
  possibleTypes,
} from '../../src/client/generated/index.ts';
import { REDIS_APQ_KEYS } from '../../src/plugins/persisted-operations.ts';
import {
  leftover,
  member,
  type Stack,
  startStack,
  useStack,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

/** The trusted-documents id codegen embedded in a generated document (`sha256:<hex>`). */
const idOf = (document: unknown) => (document as { __meta__: { hash: string } }).__meta__.hash;
const persisted = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const ARBITRARY = '{ viewer { subject } }';

/** A GraphQL request over HTTP POST or GET (anonymous when `token` is null); returns status and JSON body. */
async function http(
  stack: Stack,
  method: 'GET' | 'POST',
  params: { query?: string; variables?: unknown; extensions?: unknown },
  token: string | null,
): Promise<{ status: number; body: ExecutionResult & Record<string, unknown> }> {
  const headers = {
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    accept: 'application/graphql-response+json',
  };
  let response: Response;
  if (method === 'POST') {
    response = await fetch(`${stack.url}/graphql`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
  } else {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined) search.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
    response = await fetch(`${stack.url}/graphql?${search}`, { headers });
  }
  return { status: response.status, body: (await response.json()) as never };
}

/** Every result of one graphql-sse operation (mode and path as given). */
async function overSse(
  stack: Stack,
  token: string,
  mode: { path: string; singleConnection: boolean },
  request: { query: string; extensions?: Record<string, unknown>; variables?: Record<string, unknown> },
): Promise<ExecutionResult[]> {
  const client = createSseClient({
    url: `${stack.url}${mode.path}`,
    singleConnection: mode.singleConnection,
    retryAttempts: 0,
    headers: { authorization: `Bearer ${token}` },
  });
  const results: ExecutionResult[] = [];
  try {
    for await (const result of client.iterate(request)) results.push(result as ExecutionResult);
  } catch (error) {
    // A refusal before the stream starts arrives as the failed response's GraphQL body.
    const response = (error as { response?: Response }).response;
    if (!response) throw error;
    // The single-connection client aborts its requests on failure, the body with them.
    const text = await response.text().catch(() => null);
    if (text === null) {
      results.push({ status: response.status } as ExecutionResult);
      return results;
    }
    // Yoga answers an SSE request refused before execution as an event stream; /graphql/stream as JSON.
    const json = response.headers.get('content-type')?.includes('text/event-stream')
      ? text
          .split('\n')
          .find((line) => line.startsWith('data:'))!
          .slice(5)
      : text;
    results.push({ ...(JSON.parse(json) as ExecutionResult), status: response.status } as ExecutionResult);
  } finally {
    client.dispose();
  }
  return results;
}

/** Every result of one graphql-ws operation, or its error messages. */
async function overWs(
  stack: Stack,
  token: string,
  request: { query: string; extensions?: Record<string, unknown> },
): Promise<ExecutionResult[]> {
  const results: ExecutionResult[] = [];
  try {
    for await (const result of stack.wsClient(token).iterate(request))
      results.push(result as ExecutionResult);
  } catch (errors) {
    results.push({ errors: errors as never });
  }
  return results;
}

const SSE_MODES = [
  { path: '/graphql/stream', singleConnection: true },
  { path: '/graphql/stream', singleConnection: false },
  { path: '/graphql', singleConnection: false },
];

describe('PERSISTED_OPERATIONS=require (trusted documents only)', () => {
  const t = useStack({ PERSISTED_OPERATIONS: 'require' });

  it.each(['POST', 'GET'] as const)(
    'HTTP %s: refuses an arbitrary query and runs a manifest document by id',
    async (method) => {
      const refused = await http(t.stack, method, { query: ARBITRARY }, t.vault1Token);
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toMatchObject([
        {
          extensions: { code: 'persisted-operation-required' },
          message: expect.stringContaining('trusted documents'),
        },
      ]);
      expect(refused.body.data).toBeUndefined();

      const accepted = await http(
        t.stack,
        method,
        { extensions: persisted(idOf(MeDocument)) },
        t.vault1Token,
      );
      expect(accepted.status).toBe(200);
      expect(accepted.body.data).toEqual({
        __typename: 'Query',
        viewer: {
          __typename: 'Viewer',
          subject: 'test-user',
          vaults: ['tntsandbox1'],
          scopes: expect.any(Array),
        },
      });
      // The bare hex of the id is accepted too (Apollo's sha256Hash carries hex).
      const hex = await http(
        t.stack,
        method,
        { extensions: persisted(idOf(MeDocument).slice(7)) },
        t.vault1Token,
      );
      expect(hex.body.data).toEqual(accepted.body.data);
    },
  );

  it('refuses an unknown id and an APQ registration of a document outside the manifest', async () => {
    const unknown = await http(t.stack, 'POST', { extensions: persisted(sha256(ARBITRARY)) }, t.vault1Token);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toMatchObject([{ extensions: { code: 'persisted-operation-not-found' } }]);

    const registration = await http(
      t.stack,
      'POST',
      { query: ARBITRARY, extensions: persisted(sha256(ARBITRARY)) },
      t.vault1Token,
    );
    expect(registration.body.errors).toMatchObject([
      { extensions: { code: 'persisted-operation-required' } },
    ]);
    // Nothing was stored: the hash alone still names no document.
    const after = await http(t.stack, 'POST', { extensions: persisted(sha256(ARBITRARY)) }, t.vault1Token);
    expect(after.body.errors).toMatchObject([{ extensions: { code: 'persisted-operation-not-found' } }]);
  });

  it('a manifest id decides over query text sent along (Apollo over HTTP and graphql-ws send their text)', async () => {
    const withText = await http(
      t.stack,
      'POST',
      { query: `${ARBITRARY} # changed`, extensions: persisted(idOf(MeDocument)) },
      t.vault1Token,
    );
    expect(withText.body.data).toMatchObject({ viewer: { subject: 'test-user' } });
  });

  it.each(SSE_MODES)(
    'SSE $path (single connection: $singleConnection): refuses an arbitrary query, runs a manifest document',
    async (mode) => {
      const refused = await overSse(t.stack, t.vault1Token, mode, { query: ARBITRARY });
      expect(refused).toMatchObject([{ status: 400 }]);
      expect(refused.some((r) => r.data)).toBe(false);
      if (!mode.singleConnection) {
        expect(refused[0]!.errors).toMatchObject([{ extensions: { code: 'persisted-operation-required' } }]);
      } else {
        // The same refusal at protocol level: reserve a stream, then start the operation on it.
        const headers = { authorization: `Bearer ${t.vault1Token}`, 'content-type': 'application/json' };
        const reservation = await fetch(`${t.stack.url}/graphql/stream`, { method: 'PUT', headers });
        const streamToken = await reservation.text();
        const start = await fetch(`${t.stack.url}/graphql/stream`, {
          method: 'POST',
          headers: { ...headers, 'x-graphql-event-stream-token': streamToken },
          body: JSON.stringify({ query: ARBITRARY, extensions: { operationId: 'op1' } }),
        });
        expect(start.status).toBe(400);
        expect(await start.json()).toEqual({
          errors: [
            {
              message:
                'This gateway runs only its trusted documents: send extensions.persistedQuery.sha256Hash of one',
              extensions: { code: 'persisted-operation-required' },
            },
          ],
        });
      }

      const accepted = await overSse(t.stack, t.vault1Token, mode, {
        query: '',
        extensions: persisted(idOf(CardAttributesDocument)),
        variables: { number: '510026' },
      });
      expect(accepted).toHaveLength(1);
      expect(
        member(
          (accepted[0]!.data as { cardAttributes: { __typename: string } }).cardAttributes,
          'QueryCardAttributesSuccess',
        ),
      ).toMatchObject({
        data: { bin: '510026' },
      });
    },
  );

  it('graphql-ws: refuses an arbitrary query with the code, runs a manifest subscription and delivers its event', async () => {
    const refused = await overWs(t.stack, t.vault1Token, { query: ARBITRARY });
    expect(refused).toMatchObject([{ errors: [{ extensions: { code: 'persisted-operation-required' } }] }]);

    const client = t.stack.wsClient(t.vault1Token);
    const iterator = client.iterate({ query: '', extensions: persisted(idOf(LiveCardEventsDocument)) });
    const first = iterator.next();
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
    const enrolled = await http(
      t.stack,
      'POST',
      {
        extensions: persisted(idOf(EnrolCardWithWebhookDocument)),
        variables: { number: '4000210000692001' },
      },
      t.vault1Token,
    );
    const result = (
      enrolled.body.data as { enrollAccountUpdaterCard: { __typename: string; data?: { cardId: string } } }
    ).enrollAccountUpdaterCard;
    expect(result.__typename).toBe('MutationEnrollAccountUpdaterCardSuccess');
    const cardId = result.data?.cardId;
    const { value } = await first;
    expect((value as ExecutionResult<{ cardEvents: unknown }>).data?.cardEvents).toMatchObject({
      type: 'ENROLLED',
      cardId,
    });
    await iterator.return?.();
  });

  it("Apollo Client's PersistedQueryLink with the codegen ids runs every generated document by hash alone", async () => {
    const bodies: Record<string, unknown>[] = [];
    const client = new ApolloClient({
      cache: new InMemoryCache({ possibleTypes }),
      link: new PersistedQueryLink({ generateHash: idOf }).concat(
        new HttpLink({
          uri: `${t.stack.url}/graphql`,
          headers: { authorization: `Bearer ${t.vault1Token}` },
          fetch: async (input, init) => {
            bodies.push(JSON.parse(String(init?.body)));
            return fetch(input, init);
          },
        }),
      ),
    });
    const { data, error } = await client.query({
      query: CardAttributesDocument,
      variables: { number: '510026' },
    });
    expect(error).toBeUndefined();
    expect(member(data?.cardAttributes, 'QueryCardAttributesSuccess').data.bin).toBe('510026');
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).not.toHaveProperty('query');
  });
});

describe('PERSISTED_OPERATIONS=allow (default)', () => {
  const t = useStack();

  it('runs arbitrary queries and manifest ids; APQ: miss, registration, hit; a wrong hash is refused', async () => {
    expect((await http(t.stack, 'POST', { query: ARBITRARY }, t.vault1Token)).body.data).toEqual({
      viewer: { subject: 'test-user' },
    });
    expect(
      (await http(t.stack, 'GET', { extensions: persisted(idOf(MeDocument)) }, t.vault1Token)).body.data,
    ).toMatchObject({
      viewer: { subject: 'test-user' },
    });

    const query = '{ viewer { vaults } }';
    const miss = await http(t.stack, 'GET', { extensions: persisted(sha256(query)) }, t.vault1Token);
    expect(miss.body.errors).toMatchObject([
      { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
    ]);
    const registered = await http(
      t.stack,
      'POST',
      { query, extensions: persisted(sha256(query)) },
      t.vault1Token,
    );
    expect(registered.body.data).toEqual({ viewer: { vaults: ['tntsandbox1'] } });
    expect(
      (await http(t.stack, 'GET', { extensions: persisted(sha256(query)) }, t.vault1Token)).body.data,
    ).toEqual({
      viewer: { vaults: ['tntsandbox1'] },
    });
    // Over graphql-ws and SSE the stored hash answers alike (their clients send an empty query string).
    expect(await overWs(t.stack, t.vault1Token, { query: '', extensions: persisted(sha256(query)) })).toEqual(
      [{ data: { viewer: { vaults: ['tntsandbox1'] } } }],
    );
    expect(
      await overSse(t.stack, t.vault1Token, SSE_MODES[0]!, {
        query: '',
        extensions: persisted(sha256(query)),
      }),
    ).toEqual([{ data: { viewer: { vaults: ['tntsandbox1'] } } }]);

    const mismatch = await http(
      t.stack,
      'POST',
      { query: ARBITRARY, extensions: persisted(sha256(query)) },
      t.vault1Token,
    );
    expect(mismatch.body.errors).toMatchObject([{ extensions: { code: 'PERSISTED_QUERY_MISMATCH' } }]);
  });
});

describe('the start-up line about the trusted-documents manifest', () => {
  const MANIFEST_LINE =
    'no trusted-documents manifest loaded: manifest ids answer PERSISTED_QUERY_NOT_FOUND (run `npm run codegen` or set PERSISTED_OPERATIONS_MANIFEST)';
  /** The gateway's log lines whose message is {@link MANIFEST_LINE}. */
  const manifestLines = (stack: Stack) =>
    readFileSync(stack.logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; manifest?: string })
      .filter((line) => line.msg === MANIFEST_LINE);

  it('without a manifest (a fresh clone before codegen) the start says so once, at warn', async () => {
    const missing = join(tmpdir(), 'cardgraph-no-such-manifest.json');
    const stack = leftover(await startStack({ PERSISTED_OPERATIONS_MANIFEST: missing }), (s) => s.stop());
    expect(manifestLines(stack)).toEqual([expect.objectContaining({ level: 40, manifest: missing })]);
    const token = await stack.token();
    expect(
      (await http(stack, 'GET', { extensions: persisted(idOf(MeDocument)) }, token)).body.errors,
    ).toMatchObject([{ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }]);
  });

  it.each([
    ['the generated manifest', {}],
    ['PERSISTED_OPERATIONS=off (no manifest is read)', { PERSISTED_OPERATIONS: 'off' }],
  ])('with %s the start writes no such line', async (_, env) => {
    const stack = leftover(await startStack(env), (s) => s.stop());
    expect(manifestLines(stack)).toEqual([]);
  });
});

describe('APQ registration (issue 20 item 1): authenticated requests, valid documents only', () => {
  const t = useStack();
  const lookUp = async (hash: string) =>
    (await http(t.stack, 'POST', { extensions: persisted(hash) }, t.vault1Token)).body.errors?.[0]?.extensions
      ?.code ?? 'found';

  it.each(['POST', 'GET'] as const)(
    'HTTP %s without a token: refused with 401 persisted-query-registration-unauthenticated, nothing stored',
    async (method) => {
      const query = `{ viewer { subject } } # anonymous ${method}`;
      const refused = await http(t.stack, method, { query, extensions: persisted(sha256(query)) }, null);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({
        errors: [
          {
            message:
              'Registering an automatic persisted query needs a client token: send Authorization: Bearer <token>',
            extensions: {
              code: 'persisted-query-registration-unauthenticated',
              requestId: expect.any(String),
            },
          },
        ],
      });
      expect(await lookUp(sha256(query))).toBe('PERSISTED_QUERY_NOT_FOUND');
    },
  );

  it('with a bad token: refused with 401 invalid-token, nothing stored', async () => {
    const query = '{ viewer { subject } } # bad token';
    const refused = await http(t.stack, 'POST', { query, extensions: persisted(sha256(query)) }, 'not-a-jwt');
    expect(refused.status).toBe(401);
    expect(refused.body.errors).toMatchObject([{ extensions: { code: 'invalid-token' } }]);
    expect(await lookUp(sha256(query))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('a document that does not parse, fails validation or breaks an operation limit is answered with its error and not stored', async () => {
    const unparsable = '{ viewer { subject } ';
    const invalid = '{ viewer { noSuchField } }';
    const tooManyTokens = `{ viewer { ${'subject '.repeat(3_000)} } }`;
    for (const [query, code] of [
      [unparsable, 'GRAPHQL_PARSE_FAILED'],
      [invalid, 'GRAPHQL_VALIDATION_FAILED'],
      [tooManyTokens, 'GRAPHQL_PARSE_FAILED'],
    ] as const) {
      const answer = await http(
        t.stack,
        'POST',
        { query, extensions: persisted(sha256(query)) },
        t.vault1Token,
      );
      expect(answer.body.errors?.[0]?.extensions?.code).toBe(code);
      expect(await lookUp(sha256(query))).toBe('PERSISTED_QUERY_NOT_FOUND');
    }
  });

  it('a valid document from a token is stored: over HTTP and over graphql-ws (authenticated at connection_init)', async () => {
    const overHttp = '{ viewer { subject } } # registered over HTTP';
    expect(
      (
        await http(
          t.stack,
          'POST',
          { query: overHttp, extensions: persisted(sha256(overHttp)) },
          t.vault1Token,
        )
      ).body,
    ).toEqual({ data: { viewer: { subject: 'test-user' } } });
    expect(await lookUp(sha256(overHttp))).toBe('found');

    const overWsQuery = '{ viewer { subject } } # registered over graphql-ws';
    expect(
      await overWs(t.stack, t.vault1Token, {
        query: overWsQuery,
        extensions: persisted(sha256(overWsQuery)),
      }),
    ).toEqual([{ data: { viewer: { subject: 'test-user' } } }]);
    expect(await lookUp(sha256(overWsQuery))).toBe('found');
  });
});

describe('APQ store in Redis (EVENTS_BACKEND=redis), shared by replicas', () => {
  let redis: RedisServer;
  let replicas: Stack[];
  let token: string;
  beforeAll(async () => {
    redis = await startRedisServer();
    const env = { EVENTS_BACKEND: 'redis', REDIS_URL: `${redis.url}/2`, APQ_TTL_S: '600' };
    replicas = [await startStack(env), await startStack(env)];
    token = await replicas[0]!.token();
  });
  afterAll(async () => {
    for (const replica of replicas ?? []) await replica.stop();
    await redis?.stop();
  });

  it('a query registered through one replica runs by hash alone on the other; its registration time is kept', async () => {
    const [a, b] = replicas as [Stack, Stack];
    const query = '{ viewer { subject vaults } }';
    const hash = sha256(query);
    expect((await http(b, 'POST', { extensions: persisted(hash) }, token)).body.errors).toMatchObject([
      { extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
    ]);
    expect((await http(a, 'POST', { query, extensions: persisted(hash) }, token)).body.data).toBeDefined();
    expect((await http(b, 'GET', { extensions: persisted(hash) }, token)).body.data).toEqual({
      viewer: { subject: 'test-user', vaults: ['tntsandbox1'] },
    });

    const client = createRedisClient({ url: `${redis.url}/2` });
    await client.connect();
    try {
      expect(await client.hGet(REDIS_APQ_KEYS.documents, hash)).toBe(query);
      expect(await client.get(REDIS_APQ_KEYS.bytes)).toBe(String(Buffer.byteLength(query)));
      const registeredAt = Number(await client.zScore(REDIS_APQ_KEYS.registered, hash));
      expect(Date.now() - registeredAt).toBeGreaterThanOrEqual(0);
      expect(Date.now() - registeredAt).toBeLessThan(10_000);
    } finally {
      await client.close();
    }
  });
});
