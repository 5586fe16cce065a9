import { readFileSync } from 'node:fs';
import { print } from 'graphql';
import { type Client, createClient, type ExecutionResult } from 'graphql-sse';
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AccountUpdaterCardByIdDocument,
  EnrolCardWithWebhookDocument,
  LiveCardEventsDocument,
  type LiveCardEventsSubscription,
} from '../../src/client/generated/index.ts';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import {
  assertNoTestPanIn,
  expiredTestToken,
  member,
  testToken,
  useStack,
  waitForSubscribers,
} from '../support/fixtures.ts';

/** Operations per stream (graphql-ws's setting), reservation time and unopened streams per client. */
const CAP = 2;
const RESERVATION_TIMEOUT_MS = 1_500;
const MAX_UNOPENED = 2;
const STREAM = '/graphql/stream';
const TOKEN_HEADER = 'x-graphql-event-stream-token';
const TENANT = 'tntsandbox1';

/** A request of the single-connection mode as graphql-sse's client sends it, and its answer. */
interface Exchange {
  method: string;
  status: number;
  /** The answer's JSON body, when it has one. */
  body?: { errors?: { message: string; extensions?: { code?: string } }[] };
}

describe('graphql-sse single connection: graphql-ws limits and stream ownership', () => {
  const use = useStack({
    WS_MAX_SUBSCRIPTIONS_PER_SOCKET: String(CAP),
    WS_CONNECTION_INIT_TIMEOUT_MS: String(RESERVATION_TIMEOUT_MS),
    SSE_MAX_UNOPENED_STREAMS_PER_CLIENT: String(MAX_UNOPENED),
  });
  const clients: Client<true>[] = [];
  const aborts: AbortController[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.dispose();
    for (const abort of aborts.splice(0)) abort.abort();
    // A stream's end stops its operations: the next test starts with none.
    await waitForSubscribers(use.stack.app, TENANT, 0);
  });

  /** What {@link singleConnectionClient}'s client saw of its stream (its `PUT` and `GET`). */
  interface StreamSeen {
    /** The stream token the `PUT` returned. */
    token?: string;
    /**
     * When (ms since the epoch) the server ended the `GET`'s body, read to its end by the client
     * (unset when the client aborts it).
     */
    endedAt?: number;
  }

  /**
   * graphql-sse's client in single-connection mode for `bearer`; `exchanges` records its POSTs and
   * DELETEs (the client itself keeps only the status of a refusal), `stream` its stream.
   * `operationsBearer` replaces `bearer` in the client's POSTs (a client that refreshed its token
   * after opening its stream); `lazyCloseTimeout` is the client's (ms it keeps an idle stream open).
   */
  function singleConnectionClient(
    bearer: string,
    options: { operationsBearer?: string; lazyCloseTimeout?: number } = {},
  ): { client: Client<true>; exchanges: Exchange[]; stream: StreamSeen } {
    const exchanges: Exchange[] = [];
    const stream: StreamSeen = {};
    const client = createClient({
      url: `${use.stack.url}${STREAM}`,
      singleConnection: true,
      retryAttempts: 0,
      ...(options.lazyCloseTimeout ? { lazyCloseTimeout: options.lazyCloseTimeout } : {}),
      headers: { authorization: `Bearer ${bearer}` },
      fetchFn: async (input: RequestInfo | URL, init?: RequestInit) => {
        const method = init?.method ?? 'GET';
        const response = await fetch(
          input,
          method === 'POST' && options.operationsBearer
            ? { ...init, headers: { ...init?.headers, authorization: `Bearer ${options.operationsBearer}` } }
            : init,
        );
        if (method === 'PUT' && response.status === 201) stream.token = await response.clone().text();
        if (method === 'GET' && response.status === 200 && response.body) {
          const body = response.body.pipeThrough(
            new TransformStream<Uint8Array, Uint8Array>({
              flush() {
                stream.endedAt = Date.now();
              },
            }),
          );
          return new Response(body, { status: response.status, headers: response.headers });
        }
        if (method === 'POST' || method === 'DELETE') {
          const text = await response.clone().text();
          exchanges.push({
            method,
            status: response.status,
            ...(text ? { body: JSON.parse(text) as Exchange['body'] } : {}),
          });
        }
        return response;
      },
    });
    clients.push(client);
    return { client, exchanges, stream };
  }

  /** A live card-events subscription on `client`: its results and its end (error or completion). */
  function live(client: Client<true>) {
    const results: ExecutionResult<LiveCardEventsSubscription, unknown>[] = [];
    const outcome: { error?: unknown; completed?: boolean } = {};
    const stop = client.subscribe<LiveCardEventsSubscription>(
      { query: print(LiveCardEventsDocument) },
      {
        next: (result) => void results.push(result),
        error: (error) => {
          outcome.error = error;
        },
        complete: () => {
          outcome.completed = true;
        },
      },
    );
    return { results, outcome, stop };
  }

  async function enrol(token: string): Promise<string> {
    const enrolled = await use.stack.execute(
      EnrolCardWithWebhookDocument,
      { number: '4000210000692001' },
      token,
    );
    return member(enrolled.data?.enrollAccountUpdaterCard, 'MutationEnrollAccountUpdaterCardSuccess').data
      .cardId;
  }

  /** A raw request to the endpoint with `bearer` and, when given, a stream token. */
  function request(
    method: string,
    bearer: string,
    options: {
      streamToken?: string;
      headers?: Record<string, string>;
      body?: unknown;
      /** Sent as it is, instead of `body` as JSON. */
      rawBody?: string;
      query?: string;
    } = {},
  ): Promise<Response> {
    const abort = new AbortController();
    aborts.push(abort);
    return fetch(`${use.stack.url}${STREAM}${options.query ?? ''}`, {
      method,
      signal: abort.signal,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(options.streamToken ? { [TOKEN_HEADER]: options.streamToken } : {}),
        ...(options.body ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body ? { body: JSON.stringify(options.body) } : {}),
      ...(options.rawBody !== undefined ? { body: options.rawBody } : {}),
    });
  }

  async function reserve(bearer: string): Promise<string> {
    const response = await request('PUT', bearer);
    expect(response.status).toBe(201);
    return response.text();
  }

  /** Opens a reserved stream (GET); the connection stays open until the test ends. */
  async function open(bearer: string, streamToken: string): Promise<Response> {
    return request('GET', bearer, { streamToken, headers: { accept: 'text/event-stream' } });
  }

  const postLive = (bearer: string, streamToken: string, operationId: string) =>
    request('POST', bearer, {
      streamToken,
      body: { query: print(LiveCardEventsDocument), extensions: { operationId } },
    });

  async function expectRefusal(response: Response, status: number, code: string) {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as Exchange['body'];
    // A refusal of Yoga's pipeline carries the request id too (stamped on every road).
    expect(body?.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code }) }),
    ]);
    return body!.errors![0]!.message;
  }

  it(`runs ${CAP} live subscriptions on one stream and refuses the next with 429 too-many-subscriptions`, async () => {
    const token = await testToken({ subject: 'sse-cap' });
    const { client, exchanges } = singleConnectionClient(token);
    const before = use.stack.app.events?.subscriberCount(TENANT) ?? 0;
    const running = Array.from({ length: CAP }, () => live(client));
    await waitForSubscribers(use.stack.app, TENANT, before + CAP);

    const refused = live(client);
    await vi.waitFor(() => expect(refused.outcome.error).toBeDefined());
    expect((refused.outcome.error as { response?: Response }).response?.status).toBe(429);
    const posts = exchanges.filter((exchange) => exchange.method === 'POST');
    expect(posts.map((exchange) => exchange.status)).toEqual([...Array(CAP).fill(202), 429]);
    expect(posts.at(-1)!.body).toEqual({
      errors: [
        {
          message: `At most ${CAP} operations per connection`,
          extensions: { code: 'too-many-subscriptions' },
        },
      ],
    });

    // The refusal's access line names its code.
    await expect
      .poll(() =>
        readFileSync(use.stack.logFile, 'utf8')
          .split('\n')
          .filter((line) => line.includes('"route":"/graphql/stream"') && line.includes('"status":429')),
      )
      .toEqual([expect.stringContaining('"errorCodes":["too-many-subscriptions"]')]);

    // The first CAP still run: both receive an enrolment made afterwards.
    const cardId = await enrol(token);
    await vi.waitFor(() => {
      for (const { results } of running) {
        expect(results.map((result) => result.data?.cardEvents)).toContainEqual(
          expect.objectContaining({ type: 'ENROLLED', cardId }),
        );
      }
    });
    expect(running.map(({ outcome }) => outcome)).toEqual(running.map(() => ({})));
    expect(use.stack.app.events?.subscriberCount(TENANT)).toBe(before + CAP);
  });

  it('frees a slot when an operation is stopped (DELETE ends its source) or completes', async () => {
    const token = await testToken({ subject: 'sse-free' });
    const { client, exchanges } = singleConnectionClient(token);
    const before = use.stack.app.events?.subscriberCount(TENANT) ?? 0;
    const running = Array.from({ length: CAP }, () => live(client));
    await waitForSubscribers(use.stack.app, TENANT, before + CAP);
    // The server subscribes before it answers 202; the client sends DELETE only for an accepted POST.
    await vi.waitFor(() =>
      expect(exchanges.filter((exchange) => exchange.method === 'POST')).toHaveLength(CAP),
    );

    // Stopping one sends DELETE: its upstream subscription ends and its slot takes another one.
    running[0]!.stop();
    await waitForSubscribers(use.stack.app, TENANT, before + CAP - 1);
    await vi.waitFor(() =>
      expect(exchanges.filter((exchange) => exchange.method === 'DELETE').map((e) => e.status)).toEqual([
        200,
      ]),
    );
    const replacement = live(client);
    await waitForSubscribers(use.stack.app, TENANT, before + CAP);
    expect(replacement.outcome).toEqual({});
    await vi.waitFor(() =>
      expect(exchanges.filter((exchange) => exchange.method === 'POST').map((e) => e.status)).toEqual(
        Array(CAP + 1).fill(202),
      ),
    );

    // Completed operations free theirs: more queries than the cap, one after another, on a full stream
    // less one slot.
    replacement.stop();
    await waitForSubscribers(use.stack.app, TENANT, before + CAP - 1);
    for (let i = 0; i < CAP + 1; i++) {
      const results = [];
      for await (const result of client.iterate({
        query: print(AccountUpdaterCardByIdDocument),
        variables: { cardId: 'CRD0000000000000000000000' },
      })) {
        results.push(result);
      }
      expect(results).toHaveLength(1);
    }
    expect(exchanges.filter((exchange) => exchange.method === 'POST').map((e) => e.status)).toEqual(
      Array(2 * CAP + 2).fill(202),
    );
  });

  it("refuses another client's stream token with 404 stream-not-found; a PUT never takes the client's token", async () => {
    const owner = await testToken({ subject: 'sse-owner' });
    const refreshed = await testToken({ subject: 'sse-owner', expiresInS: 900 });
    const others = await Promise.all([
      testToken({ subject: 'sse-intruder' }),
      // The same subject with other vaults is another client.
      testToken({ subject: 'sse-owner', vaults: ['tntsandbox1', 'tntsandbox2'] }),
    ]);

    const chosen = '00000000-0000-4000-8000-000000000000';
    const put = await request('PUT', owner, { streamToken: chosen, query: `?token=${chosen}` });
    expect(put.status).toBe(201);
    const streamToken = await put.text();
    expect(streamToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(streamToken).not.toBe(chosen);
    await expectRefusal(await open(owner, chosen), 404, 'stream-not-found');

    const before = use.stack.app.events?.subscriberCount(TENANT) ?? 0;
    for (const other of others) {
      const message = await expectRefusal(await open(other, streamToken), 404, 'stream-not-found');
      expect(message).toBe('No stream of this client has this token (expired, closed or never reserved)');
      await expectRefusal(
        await request('GET', other, {
          query: `?token=${streamToken}`,
          headers: { accept: 'text/event-stream' },
        }),
        404,
        'stream-not-found',
      );
      await expectRefusal(await postLive(other, streamToken, 'op-1'), 404, 'stream-not-found');
      await expectRefusal(
        await request('DELETE', other, { streamToken, query: '?operationId=op-1' }),
        404,
        'stream-not-found',
      );
    }
    expect(use.stack.app.events?.subscriberCount(TENANT) ?? 0).toBe(before);

    // The owner, also with a refreshed token, uses it: an operation before the GET, the GET, a DELETE.
    expect((await postLive(refreshed, streamToken, 'op-1')).status).toBe(202);
    await waitForSubscribers(use.stack.app, TENANT, before + 1);
    const opened = await open(owner, streamToken);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toContain('text/event-stream');
    expect((await request('DELETE', owner, { streamToken, query: '?operationId=op-1' })).status).toBe(200);
    await waitForSubscribers(use.stack.app, TENANT, before);

    // A request naming no stream, or one whose GET has ended, is refused alike.
    await expectRefusal(
      await request('POST', owner, {
        body: { query: '{ viewer { subject } }', extensions: { operationId: 'x' } },
      }),
      404,
      'stream-not-found',
    );
    await opened.body?.cancel();
    await vi.waitFor(async () =>
      expectRefusal(await postLive(owner, streamToken, 'op-2'), 404, 'stream-not-found'),
    );
  });

  it(`holds at most ${MAX_UNOPENED} unopened streams per client: one more PUT is refused with 429 too-many-unopened-streams`, async () => {
    const token = await testToken({ subject: 'sse-bound' });
    const reserved = [await reserve(token), await reserve(token)];
    const message = await expectRefusal(await request('PUT', token), 429, 'too-many-unopened-streams');
    expect(message).toBe(
      `At most ${MAX_UNOPENED} unopened streams per client: open (GET) a reserved stream first`,
    );
    // Another client is not held by it.
    await reserve(await testToken({ subject: 'sse-bound-other' }));
    // An opened stream no longer counts.
    expect((await open(token, reserved[0]!)).status).toBe(200);
    await reserve(token);
    await expectRefusal(await request('PUT', token), 429, 'too-many-unopened-streams');
  });

  it('drops a stream not opened in time, with the operations started on it, and frees its place', async () => {
    const token = await testToken({ subject: 'sse-expiry' });
    const before = use.stack.app.events?.subscriberCount(TENANT) ?? 0;
    const reservedAt = Date.now();
    const streamToken = await reserve(token);
    await reserve(token);
    expect((await postLive(token, streamToken, 'op-1')).status).toBe(202);
    await waitForSubscribers(use.stack.app, TENANT, before + 1);
    await expectRefusal(await request('PUT', token), 429, 'too-many-unopened-streams');

    // The operation's upstream subscription ends with the reservation.
    await waitForSubscribers(use.stack.app, TENANT, before, RESERVATION_TIMEOUT_MS + 5_000);
    expect(Date.now() - reservedAt).toBeGreaterThanOrEqual(RESERVATION_TIMEOUT_MS - 50);
    await expectRefusal(await open(token, streamToken), 404, 'stream-not-found');
    await expectRefusal(await postLive(token, streamToken, 'op-2'), 404, 'stream-not-found');
    // Both reservations expired: the client may reserve again.
    await vi.waitFor(async () => expect((await request('PUT', token)).status).toBe(201), { timeout: 5_000 });
  });

  /** The SSE events of a graphql-sse stream's text (pings left out), with their JSON `data`. */
  function eventsOf(text: string): { event: string; data: unknown }[] {
    return text
      .split('\n\n')
      .map((block) => {
        const lines = block.split('\n');
        const event = lines
          .find((line) => line.startsWith('event:'))
          ?.slice(6)
          .trim();
        const data = lines
          .find((line) => line.startsWith('data:'))
          ?.slice(5)
          .trim();
        return event ? { event, data: data ? JSON.parse(data) : null } : undefined;
      })
      .filter((event) => event !== undefined);
  }

  /** The token's `exp` in ms since the epoch. */
  const expiryOf = (token: string) => decodeJwt(token).exp! * 1000;

  const TOKEN_EXPIRED_RESULT = {
    errors: [
      {
        message: 'The client token has expired: subscribe again with a fresh token',
        extensions: { code: 'token-expired' },
      },
    ],
  };

  it("ends an opened stream at the exp of its GET's token, with its operations: token-expired, then the stream's end", async () => {
    const opening = await testToken({ subject: 'sse-lifetime', expiresInS: 4 });
    // The client refreshed its token after opening: its operations alone would live 15 minutes.
    const refreshed = await testToken({ subject: 'sse-lifetime', expiresInS: 900 });
    const { client, stream } = singleConnectionClient(opening, {
      operationsBearer: refreshed,
      // It keeps its stream open after its last operation: only the server ends it.
      lazyCloseTimeout: 10_000,
    });
    const before = use.stack.app.events?.subscriberCount(TENANT) ?? 0;
    const subscription = live(client);
    await waitForSubscribers(use.stack.app, TENANT, before + 1);

    await vi.waitFor(() => expect(subscription.outcome).toEqual({ completed: true }), { timeout: 8_000 });
    expect(subscription.results).toEqual([TOKEN_EXPIRED_RESULT]);
    // The server ended the GET (the client would still hold it), at the opening token's exp.
    await expect.poll(() => stream.endedAt).toBeDefined();
    expect(stream.endedAt).toBeGreaterThanOrEqual(expiryOf(opening));
    expect(stream.endedAt).toBeLessThan(expiryOf(opening) + 2_000);
    // Its gateway subscription ended with it, and the stream is gone.
    await waitForSubscribers(use.stack.app, TENANT, before);
    await expectRefusal(await postLive(refreshed, stream.token!, 'op-2'), 404, 'stream-not-found');
    await expectRefusal(
      await request('DELETE', refreshed, { streamToken: stream.token!, query: '?operationId=op-2' }),
      404,
      'stream-not-found',
    );
    expect(use.stack.app.events?.subscriberCount(TENANT) ?? 0).toBe(before);
  });

  it('writes the token-expired result of an operation started before the GET, then ends the GET at exp', async () => {
    const opening = await testToken({ subject: 'sse-lifetime-raw', expiresInS: 4 });
    const refreshed = await testToken({ subject: 'sse-lifetime-raw', expiresInS: 900 });
    const before = use.stack.app.events?.subscriberCount(TENANT) ?? 0;
    const streamToken = await reserve(opening);
    expect((await postLive(refreshed, streamToken, 'op-1')).status).toBe(202);
    await waitForSubscribers(use.stack.app, TENANT, before + 1);

    const opened = await open(opening, streamToken);
    expect(opened.status).toBe(200);
    let ended: { text: string; at: number } | undefined;
    // Resolves when the server ends the body (rejects when afterEach aborts it).
    opened.text().then(
      (text) => {
        ended = { text, at: Date.now() };
      },
      () => {},
    );
    await vi.waitFor(() => expect(ended).toBeDefined(), { timeout: 8_000 });
    expect(ended?.at).toBeGreaterThanOrEqual(expiryOf(opening));
    expect(ended?.at).toBeLessThan(expiryOf(opening) + 2_000);
    expect(eventsOf(ended?.text ?? '')).toEqual([
      { event: 'next', data: { id: 'op-1', payload: TOKEN_EXPIRED_RESULT } },
      { event: 'complete', data: { id: 'op-1' } },
    ]);
    await waitForSubscribers(use.stack.app, TENANT, before);
    await expectRefusal(await postLive(refreshed, streamToken, 'op-2'), 404, 'stream-not-found');
    await expectRefusal(await open(refreshed, streamToken), 404, 'stream-not-found');
  });

  it('refuses to open a stream with an expired token (401 token-expired); the stream stays unopened', async () => {
    const token = await testToken({ subject: 'sse-expired' });
    const expired = await expiredTestToken({ subject: 'sse-expired' });
    const streamToken = await reserve(token);
    await expectRefusal(await open(expired, streamToken), 401, 'token-expired');
    expect((await open(token, streamToken)).status).toBe(200);
  });

  it("gives a refused operation's id back to its stream: the client may send it again", async () => {
    const token = await testToken({ subject: 'sse-refused-id' });
    const streamToken = await reserve(token);
    expect((await open(token, streamToken)).status).toBe(200);
    // Refused by validation (graphql-sse had reserved the id before asking the gateway).
    await expectRefusal(
      await request('POST', token, {
        streamToken,
        body: { query: 'subscription { noSuchField }', extensions: { operationId: 'op-1' } },
      }),
      400,
      'GRAPHQL_VALIDATION_FAILED',
    );
    expect((await postLive(token, streamToken, 'op-1')).status).toBe(202);
    // Refused by the operation cap, then sent again once a slot is free.
    expect((await postLive(token, streamToken, 'op-2')).status).toBe(202);
    await expectRefusal(await postLive(token, streamToken, 'op-3'), 429, 'too-many-subscriptions');
    expect((await request('DELETE', token, { streamToken, query: '?operationId=op-2' })).status).toBe(200);
    expect((await postLive(token, streamToken, 'op-3')).status).toBe(202);
  });

  it(`holds the caps under concurrency: ${CAP} of 10 simultaneous POSTs run on one stream, ${MAX_UNOPENED} of 6 simultaneous PUTs reserve (issue 20 item 3)`, async () => {
    const token = await testToken({ subject: 'sse-concurrent' });
    const streamToken = await reserve(token);
    expect((await open(token, streamToken)).status).toBe(200);
    const before = use.stack.app.events?.subscriberCount(TENANT) ?? 0;
    const posts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => postLive(token, streamToken, `concurrent-${i}`)),
    );
    expect(posts.map((response) => response.status).sort()).toEqual([
      ...Array(CAP).fill(202),
      ...Array(10 - CAP).fill(429),
    ]);
    for (const refused of posts.filter((response) => response.status === 429)) {
      await expectRefusal(refused, 429, 'too-many-subscriptions');
    }
    await waitForSubscribers(use.stack.app, TENANT, before + CAP);
    expect(use.stack.app.events?.subscriberCount(TENANT)).toBe(before + CAP);

    const other = await testToken({ subject: 'sse-concurrent-puts' });
    const puts = await Promise.all(Array.from({ length: 6 }, () => request('PUT', other)));
    expect(puts.map((response) => response.status).sort()).toEqual([
      ...Array(MAX_UNOPENED).fill(201),
      ...Array(6 - MAX_UNOPENED).fill(429),
    ]);
    for (const refused of puts.filter((response) => response.status === 429)) {
      await expectRefusal(refused, 429, 'too-many-unopened-streams');
    }
  });

  it("answers graphql-sse's own refusals with a typed code and never echoes a body that is not JSON", async () => {
    const token = await testToken({ subject: 'sse-refusals' });
    const pan = SANDBOX_TEST_CARDS[0]!.pan;
    // Distinct connections: graphql-sse words a body that is not JSON with the parser's message,
    // which quotes the body; the gateway answers as /graphql does.
    const malformed = await request('POST', token, {
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      rawBody: `x${pan}`,
    });
    expect(malformed.status).toBe(400);
    const text = await malformed.text();
    assertNoTestPanIn(text);
    expect(JSON.parse(text)).toEqual({
      errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }],
    });
    const unparsable = await request('GET', token, {
      headers: { accept: 'text/event-stream' },
      query: `?query=${encodeURIComponent(print(LiveCardEventsDocument))}&variables=%7B${pan}`,
    });
    // graphql-sse's own words are never passed on: the gateway's, by status.
    expect(await expectRefusal(unparsable, 400, 'BAD_REQUEST')).toBe(
      'Not a graphql-sse request this gateway can read: send `query` as a string, `variables` and `extensions` as JSON objects',
    );

    const streamToken = await reserve(token);
    expect((await open(token, streamToken)).status).toBe(200);
    expect(await expectRefusal(await open(token, streamToken), 409, 'stream-already-open')).toBe(
      'This stream is open already',
    );
    expect((await postLive(token, streamToken, 'op-1')).status).toBe(202);
    await expectRefusal(await postLive(token, streamToken, 'op-1'), 409, 'operation-id-in-use');
    await expectRefusal(
      await request('POST', token, { streamToken, body: { query: print(LiveCardEventsDocument) } }),
      400,
      'operation-id-missing',
    );
    await expectRefusal(
      await request('POST', token, { streamToken, headers: { 'content-type': 'text/plain' }, rawBody: 'x' }),
      415,
      'unsupported-media-type',
    );
    await expectRefusal(
      await request('PUT', token, { headers: { accept: 'application/json' } }),
      406,
      'not-acceptable',
    );
  });
});
