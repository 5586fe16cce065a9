import { createServer, type Server } from 'node:http';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Viewer } from '../../src/auth/viewer.ts';
import { useGraphQLSSE } from '../../src/plugins/graphql-sse.ts';
import { closeNow, listen } from '../../src/server/listen.ts';
import { captureLogger } from '../support/fixtures.ts';

/**
 * A failure of the gateway inside graphql-sse's handler (a hook that throws something that is not a
 * client's mistake) is the internal error on `/graphql/stream`, in both modes: 500, `Unexpected
 * error.` with code `internal-error`, logged and never sent; and an operation it refused leaves its id
 * free on its stream.
 */

/** `ticks` subscriptions running now (each ends when its source is returned). */
let ticking = 0;

const schema = createSchema({
  typeDefs: 'type Query { fine: String } type Subscription { ticks: Int }',
  resolvers: {
    Query: { fine: () => 'ok' },
    Subscription: {
      ticks: {
        // One tick, then none: a source that ends only when it is returned.
        subscribe: () => {
          ticking++;
          let ticked = false;
          const source: AsyncIterableIterator<{ ticks: number }> = {
            next: () => {
              if (ticked) return new Promise(() => {});
              ticked = true;
              return Promise.resolve({ value: { ticks: 1 }, done: false });
            },
            return: () => {
              ticking--;
              return Promise.resolve({ value: undefined, done: true });
            },
            [Symbol.asyncIterator]: () => source,
          };
          return source;
        },
      },
    },
  },
});

/** Throws a plain Error in `onParams` (inside graphql-sse's hooks) for an operation named `Explode`. */
const explodeInParams: Plugin = {
  onParams({ params }) {
    if (params.operationName === 'Explode') throw new Error('params hook exploded: hunter2');
  },
};

const VIEWER: Viewer = {
  subject: 'sse-internal',
  scopes: new Set(),
  vaults: ['tntsandbox1'],
  expiresAt: Date.now() + 3_600_000,
};

const RESERVATION_TIMEOUT_MS = 500;
const { logger, lines } = captureLogger();
const servers: Server[] = [];
/** `/graphql/stream` of a server whose streams never time out, and of one whose do quickly. */
const urls = { lasting: '', expiring: '' };

async function start(reservationTimeoutMs: number): Promise<string> {
  const yoga = createYoga({
    schema,
    plugins: [
      useGraphQLSSE({
        // `Bearer broken`: the token check itself fails (not a refusal: a gateway failure).
        async authenticate(authorization) {
          if (authorization === 'Bearer broken') throw new Error('token store down: hunter2');
          return VIEWER;
        },
        limits: { maxOperationsPerStream: 2, reservationTimeoutMs, maxUnopenedStreamsPerClient: 1 },
        logger,
      }),
      explodeInParams,
    ],
  });
  const server = createServer(yoga);
  servers.push(server);
  return `${await listen(server, 0, '127.0.0.1', 'PORT')}/graphql/stream`;
}

beforeAll(async () => {
  urls.lasting = await start(60_000);
  urls.expiring = await start(RESERVATION_TIMEOUT_MS);
});

afterAll(async () => {
  await Promise.all(servers.map((server) => closeNow(server)));
});

const INTERNAL_ERROR = {
  errors: [{ message: 'Unexpected error.', extensions: { code: 'internal-error' } }],
};

async function answer(response: Response) {
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: (await response.json()) as unknown,
  };
}

describe('graphql-sse: a failure inside its hooks', () => {
  it('answers a failing token check 500 internal-error, logged and not sent', async () => {
    const response = await fetch(urls.lasting, {
      method: 'PUT',
      headers: { authorization: 'Bearer broken' },
    });
    expect(await answer(response)).toEqual({
      status: 500,
      contentType: 'application/json; charset=utf-8',
      body: INTERNAL_ERROR,
    });
    // What failed is logged (the answer above says nothing of it).
    expect(
      lines.filter(
        (line) => line.includes('graphql-sse request failed') && line.includes('token store down'),
      ),
    ).toHaveLength(1);
  });

  it('answers an operation whose hook fails 500 internal-error in both modes; its id stays free', async () => {
    const headers = { authorization: 'Bearer ok', 'content-type': 'application/json' };
    const explode = { query: 'query Explode { fine }', operationName: 'Explode' };
    // Distinct connections: one event stream per operation.
    const distinct = await fetch(urls.lasting, {
      method: 'POST',
      headers: { ...headers, accept: 'text/event-stream' },
      body: JSON.stringify(explode),
    });
    expect(await answer(distinct)).toEqual({
      status: 500,
      contentType: 'application/json; charset=utf-8',
      body: INTERNAL_ERROR,
    });

    // Single connection: the operation is refused before graphql-sse takes its id.
    const put = await fetch(urls.lasting, { method: 'PUT', headers });
    expect(put.status).toBe(201);
    const stream = { ...headers, 'x-graphql-event-stream-token': await put.text() };
    const refused = await fetch(urls.lasting, {
      method: 'POST',
      headers: stream,
      body: JSON.stringify({ ...explode, extensions: { operationId: 'op-1' } }),
    });
    expect(await answer(refused)).toEqual({
      status: 500,
      contentType: 'application/json; charset=utf-8',
      body: INTERNAL_ERROR,
    });
    const again = await fetch(urls.lasting, {
      method: 'POST',
      headers: stream,
      body: JSON.stringify({ query: '{ fine }', extensions: { operationId: 'op-1' } }),
    });
    expect(again.status).toBe(202);
    expect(
      lines.filter(
        (line) => line.includes('graphql-sse operation failed') && line.includes('params hook exploded'),
      ),
    ).toHaveLength(2);
  });
});

describe('graphql-sse: a stream not opened in time', () => {
  it("is dropped through graphql-sse's handler: the operations started on it stop, its token is unknown", async () => {
    const headers = { authorization: 'Bearer ok', 'content-type': 'application/json' };
    const put = await fetch(urls.expiring, { method: 'PUT', headers });
    expect(put.status).toBe(201);
    const token = await put.text();
    const stream = { ...headers, 'x-graphql-event-stream-token': token };
    const posted = await fetch(urls.expiring, {
      method: 'POST',
      headers: stream,
      body: JSON.stringify({ query: 'subscription { ticks }', extensions: { operationId: 'op-1' } }),
    });
    expect(posted.status).toBe(202);
    expect(ticking).toBe(1);
    // The client holds its one unopened stream.
    expect((await fetch(urls.expiring, { method: 'PUT', headers })).status).toBe(429);

    // graphql-sse ends the operation's source when it drops the stream; nothing else returns it.
    await expect.poll(() => ticking, { timeout: RESERVATION_TIMEOUT_MS + 5_000 }).toBe(0);
    const opened = await fetch(urls.expiring, { headers: { ...stream, accept: 'text/event-stream' } });
    expect(opened.status).toBe(404);
    expect(await opened.json()).toEqual({
      errors: [
        {
          message: 'No stream of this client has this token (expired, closed or never reserved)',
          extensions: { code: 'stream-not-found' },
        },
      ],
    });
    // Its place is free again.
    expect((await fetch(urls.expiring, { method: 'PUT', headers })).status).toBe(201);
  });
});
