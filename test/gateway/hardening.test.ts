import { connect, type Socket } from 'node:net';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  notification,
  postGraphql,
  postNotification,
  type Stack,
  startStack,
  useStack,
  waitForSubscribers,
} from '../support/fixtures.ts';
import { openSse, readEvents } from '../support/sse.ts';

/**
 * Issue 10, the attacks of classes 2, 4, 5, 8 and 9 reproduced against a running gateway, each with
 * the safe outcome asserted (exact statuses and codes): SSE ends at the token's `exp`; a bad document
 * over graphql-ws fails alone; client mistakes are 4xx/typed errors; slow and hoarding clients are
 * cut; browser-originated requests need JSON or a CSRF header and get CORS only from CORS_ORIGINS.
 */

const VAULT = 'tntsandbox1';
const CARD_EVENTS = 'subscription { cardEvents { id } }';
const ALLOWED_ORIGIN = 'https://app.example.com';

/** A raw graphql-ws socket, acknowledged; `messages` collects what arrives. */
async function openGraphqlWs(url: string, token: string) {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: Record<string, unknown>[] = [];
  let closeCode: number | undefined;
  socket.on('close', (code) => {
    closeCode = code;
  });
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, unknown>));
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  await expect.poll(() => messages.some((m) => m.type === 'connection_ack')).toBe(true);
  return { socket, messages, closeCode: () => closeCode };
}

/** Opens a raw TCP connection to the gateway; `received` collects what the server sends. */
async function rawConnection(url: string) {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  let received = '';
  let closed = false;
  socket.on('data', (chunk) => {
    received += chunk.toString();
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, received: () => received, closed: () => closed };
}

describe('token lifetime on SSE (class 2)', () => {
  const t = useStack();

  it('ends an SSE subscription with a token-expired error at exp and stops its source', async () => {
    const token = await t.stack.token({ vaults: [VAULT], expiresInS: 5 });
    const openedAt = Date.now();
    const stream = await openSse(t.stack.url, { query: CARD_EVENTS }, token);
    expect(stream.status).toBe(200);
    await waitForSubscribers(t.stack.app, VAULT, 1);
    const before = notification();
    expect((await postNotification(t.stack.url, before)).status).toBe(200);
    const events = await readEvents(stream, Number.POSITIVE_INFINITY, 15_000);
    // The token lives at most 5 s (long enough for the first event on a loaded machine); the stream
    // ended on its own, well before the 15 s read timeout.
    expect(Date.now() - openedAt).toBeLessThan(8_000);
    expect(events.map((e) => e.event)).toEqual(['next', 'next', 'complete']);
    expect(JSON.parse(events[0]!.data)).toEqual({ data: { cardEvents: { id: before.id } } });
    expect(JSON.parse(events[1]!.data)).toMatchObject({
      errors: [
        {
          message: 'The client token has expired: subscribe again with a fresh token',
          extensions: { code: 'token-expired' },
        },
      ],
    });
    // The subscription left the event stream: no more events, no more card reads for it.
    await expect.poll(() => t.stack.app.events!.subscriberCount(VAULT)).toBe(0);
  });
});

describe('one bad document fails alone over graphql-ws (class 4)', () => {
  const t = useStack();

  it('answers a syntax error, a validation error and limit breaches with error messages; the socket and its subscription stay', async () => {
    const token = await t.stack.token({ vaults: [VAULT] });
    const { socket, messages, closeCode } = await openGraphqlWs(t.stack.url, token);
    socket.send(JSON.stringify({ id: 'live', type: 'subscribe', payload: { query: CARD_EVENTS } }));
    await waitForSubscribers(t.stack.app, VAULT, 1);

    const bad: Record<string, string> = {
      syntax: 'subscription { cardEvents { id ',
      validation: 'subscription { cardEvents { noSuchField } }',
      tokens: `subscription { cardEvents { ${'id '.repeat(3_100)} } }`,
      aliases: `subscription { cardEvents { ${Array.from({ length: 16 }, (_, i) => `a${i}: id`).join(' ')} } }`,
    };
    for (const [id, query] of Object.entries(bad)) {
      socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query } }));
    }
    await expect
      .poll(() => messages.filter((m) => m.type === 'error').map((m) => m.id))
      .toEqual(expect.arrayContaining(Object.keys(bad)));
    const errorOf = (id: string) =>
      (messages.find((m) => m.type === 'error' && m.id === id)!.payload as { message: string }[])[0]!;
    expect(errorOf('syntax').message).toBe('Syntax Error: Expected Name, found <EOF>.');
    expect(errorOf('validation').message).toBe('Cannot query field "noSuchField" on type "CardEvent".');
    expect(errorOf('tokens').message).toBe('Syntax Error: Token limit of 3000 exceeded.');
    expect(errorOf('aliases').message).toBe('Syntax Error: Aliases limit of 15 exceeded, found 16.');

    // The socket is open and its first subscription still delivers.
    expect(closeCode()).toBeUndefined();
    expect(socket.readyState).toBe(WebSocket.OPEN);
    const after = notification();
    expect((await postNotification(t.stack.url, after)).status).toBe(200);
    await expect
      .poll(() => messages.find((m) => m.id === 'live' && m.type === 'next'))
      .toEqual({ id: 'live', type: 'next', payload: { data: { cardEvents: { id: after.id } } } });
    socket.close();
  });
});

describe('client mistakes are client errors (class 5)', () => {
  let stack: Stack;
  let token: string;
  beforeAll(async () => {
    stack = await startStack();
    token = await stack.token({ vaults: [VAULT] });
  });
  afterAll(() => stack.stop());

  async function get(search: string) {
    const response = await request(`${stack.url}/graphql?${search}`, {
      headers: { accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
    });
    return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
  }

  it.each([
    ['variables', 'variables=%7Bnot-json'],
    ['variables', 'variables=%5B1%2C2%5D'],
    ['extensions', 'extensions=%22text%22'],
  ])('answers a malformed GET %s parameter with 400 BAD_REQUEST (%s)', async (name, parameter) => {
    const { status, body } = await get(`query=${encodeURIComponent('{ __typename }')}&${parameter}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      errors: [
        {
          message: `The ${name} search parameter must be a JSON object`,
          extensions: { code: 'BAD_REQUEST' },
        },
      ],
    });
  });

  it('answers an out-of-range or malformed history cursor with a typed invalid-input error', async () => {
    for (const raw of ['v1:99999999999999999999:1', 'v1:9223372036854775808:0', 'nonsense']) {
      const after = Buffer.from(raw).toString('base64url');
      const response = await postGraphql(
        stack.url,
        {
          query: `query ($after: String) { cardEvents(first: 5, after: $after) {
            __typename ... on InputValidationError { code issues { path message } } } }`,
          variables: { after },
        },
        token,
      );
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        data: {
          cardEvents: {
            __typename: 'InputValidationError',
            code: 'invalid-input',
            issues: [{ path: ['after'], message: 'is not a card event cursor' }],
          },
        },
      });
    }
  });
});

describe('slow and hoarding clients (class 8)', () => {
  let stack: Stack;
  const REQUEST_TIMEOUT_MS = 1_000;
  const HEADERS_TIMEOUT_MS = 500;
  const MAX_CONNECTIONS = 3;
  beforeAll(async () => {
    stack = await startStack({
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS),
    });
  });
  afterAll(() => stack.stop());

  it.each(['/graphql', '/webhooks/card-events'])(
    'answers a body trickled to %s with 408 at the request timeout and closes the connection',
    async (path) => {
      const connection = await rawConnection(stack.url);
      const startedAt = Date.now();
      connection.socket.write(
        `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{`,
      );
      // One byte every 100 ms: never idle, never done.
      const trickle = setInterval(() => connection.socket.write(' '), 100);
      try {
        await expect.poll(() => connection.closed(), { timeout: 5_000 }).toBe(true);
      } finally {
        clearInterval(trickle);
      }
      const elapsed = Date.now() - startedAt;
      expect(connection.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(elapsed).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(REQUEST_TIMEOUT_MS + 1_500);
    },
  );

  it('answers headers trickled past the headers timeout with 408', async () => {
    const connection = await rawConnection(stack.url);
    const startedAt = Date.now();
    connection.socket.write('GET /health HTTP/1.1\r\n');
    const trickle = setInterval(() => connection.socket.write('x-slow: 1\r\n'), 100);
    try {
      await expect.poll(() => connection.closed(), { timeout: 5_000 }).toBe(true);
    } finally {
      clearInterval(trickle);
    }
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(Date.now() - startedAt).toBeLessThan(HEADERS_TIMEOUT_MS + 1_500);
  });

  it(`refuses a client address its connection number ${MAX_CONNECTIONS + 1} with 429 and accepts again once one closes`, async () => {
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => rawConnection(stack.url)));
    const refused = await rawConnection(stack.url);
    await expect.poll(() => refused.closed()).toBe(true);
    expect(refused.received()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(JSON.parse(refused.received().split('\r\n\r\n')[1]!)).toEqual({
      errors: [
        {
          message: 'Too many open connections from this client address',
          extensions: { code: 'too-many-connections' },
        },
      ],
    });
    // Held connections still work.
    held[0]!.socket.write('GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
    await expect.poll(() => held[0]!.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // One closes: a new connection is served.
    held[1]!.socket.destroy();
    await expect
      .poll(async () => {
        try {
          return (await request(`${stack.url}/health`, { reset: true })).statusCode;
        } catch {
          return 0;
        }
      })
      .toBe(200);
    for (const connection of held) connection.socket.destroy();
  });
});

describe('browser-originated requests (class 9)', () => {
  let stack: Stack;
  let token: string;
  beforeAll(async () => {
    stack = await startStack({ CORS_ORIGINS: ALLOWED_ORIGIN });
    token = await stack.token({ vaults: [VAULT] });
  });
  afterAll(() => stack.stop());

  const MUTATION = 'mutation { deleteCard(cardId: "CRDabcdefghijklmnopqrstuv") { __typename } }';

  async function post(
    contentType: string | undefined,
    body: string | FormData,
    headers: Record<string, string> = {},
  ) {
    const response = await request(`${stack.url}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(contentType ? { 'content-type': contentType } : {}),
        ...headers,
      },
      body: body as string,
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  }

  it('refuses a mutation from a form body (urlencoded, multipart) with 415 and runs nothing upstream', async () => {
    const before = stack.sandbox!.requests().length;
    const urlencoded = await post(
      'application/x-www-form-urlencoded',
      new URLSearchParams({ query: MUTATION }).toString(),
    );
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: MUTATION }));
    form.set('map', '{}');
    const multipart = await post(undefined, form);
    for (const answer of [urlencoded, multipart]) {
      expect(answer.status).toBe(415);
      expect(answer.body).toMatchObject({
        errors: [
          {
            message: 'GraphQL requests must be sent as application/json',
            extensions: { code: 'unsupported-media-type' },
          },
        ],
      });
    }
    expect(stack.sandbox!.requests().length).toBe(before);
  });

  it('refuses a text/plain (simple, never preflighted) body without a CSRF header with 403', async () => {
    const refused = await post('text/plain', JSON.stringify({ query: MUTATION }));
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: 'csrf-header-required' } }] });
    // A script that sets the header was preflighted by the browser: it gets past the CSRF check.
    const withHeader = await post('text/plain', JSON.stringify({ query: '{ __typename }' }), {
      'x-graphql-yoga-csrf': '1',
    });
    expect(withHeader.status).not.toBe(403);
  });

  it('refuses a mutation over GET with 405', async () => {
    const response = await request(`${stack.url}/graphql?query=${encodeURIComponent(MUTATION)}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/graphql-response+json' },
    });
    expect(response.statusCode).toBe(405);
    await response.body.dump();
  });

  it('answers CORS only for CORS_ORIGINS and never reflects another origin', async () => {
    const preflight = (origin: string) =>
      request(`${stack.url}/graphql`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, authorization',
        },
      });
    const allowed = await preflight(ALLOWED_ORIGIN);
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe(ALLOWED_ORIGIN);
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');
    await allowed.body.dump();

    const evil = await preflight('https://evil.example');
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    expect(evil.headers['access-control-allow-credentials']).toBeUndefined();
    await evil.body.dump();

    const answer = await request(`${stack.url}/graphql`, {
      method: 'POST',
      headers: {
        origin: 'https://evil.example',
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    await answer.body.dump();
  });
});
