import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { SignJWT } from 'jose';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.ts';
import { MAX_REQUEST_BODY_BYTES } from '../../src/runtime/index.ts';
import { type Stack, startStack, TEST_JWT_SECRET } from '../support/fixtures.ts';

/**
 * The lean GraphQL path (src/server/graphql-http.ts) answers exactly as Yoga's own handling: one
 * stack with the lean path on (the default) and a second gateway on the same sandbox with it off,
 * each request of the table sent to both with the same request id.
 */

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Framing and per-connection headers, which differ by how a body is written, not by what it says. */
const FRAMING = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

let stack: Stack;
let yogaApp: App;
let yogaUrl: string;
let token: string;

beforeAll(async () => {
  stack = await startStack();
  const dir = mkdtempSync(join(tmpdir(), 'cardgraph-yoga-'));
  yogaApp = buildApp(
    {
      ...stack.config,
      events: { ...stack.config.events, dataDir: dir },
      graphql: { ...stack.config.graphql, leanHttp: false },
    },
    { logDestination: pino.destination({ dest: join(dir, 'log.jsonl'), sync: true }) },
  );
  yogaUrl = (await yogaApp.start()).url;
  token = await stack.token();
}, 60_000);

afterAll(async () => {
  await yogaApp?.stop();
  await stack?.stop();
});

type Body = string | Buffer | Readable | undefined;
type Case = {
  name: string;
  method?: 'GET' | 'POST';
  search?: Record<string, string>;
  headers?: Record<string, string>;
  /** A fresh body per request (streams are read once). */
  body?: () => Body;
  /** Path that answers on the lean-enabled gateway. */
  path: 'lean' | 'yoga';
  status: number;
};

async function send(base: string, c: Case, id: string): Promise<Answer> {
  const search = c.search ? `?${new URLSearchParams(c.search)}` : '';
  // A connection per request: a server answering 413 before the body ends may close it.
  const dispatcher = new Agent();
  try {
    const response = await request(`${base}/graphql${search}`, {
      method: c.method ?? 'POST',
      headers: { 'x-request-id': id, ...c.headers },
      body: c.body?.(),
      dispatcher,
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (!FRAMING.has(name)) headers[name] = String(value);
    }
    return { status: response.statusCode, headers, body: await response.body.text() };
  } finally {
    await dispatcher.destroy();
  }
}

const json = (value: unknown) => () => JSON.stringify(value);
const auth = () => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const ME = '{ viewer { subject vaults } }';

async function* chunked(total: number): AsyncIterable<Buffer> {
  yield Buffer.from('{"query":"');
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  for (let sent = 0; sent < total; sent += chunk.length) yield chunk;
  yield Buffer.from('"}');
}

function cases(expiredToken: string): Case[] {
  const apqQuery = '{ viewer { subject } }';
  return [
    { name: 'valid query', body: json({ query: ME }), path: 'lean', status: 200 },
    {
      name: 'valid query with variables and operation name',
      body: json({
        query:
          'query Card($id: String!) { accountUpdaterCard(cardId: $id) { __typename ... on Error { code } } }',
        variables: { id: 'no-such-card' },
        operationName: 'Card',
      }),
      path: 'lean',
      status: 200,
    },
    {
      name: 'graphql-response+json accept',
      headers: { ...auth(), accept: 'application/graphql-response+json' },
      body: json({ query: '{ viewer { nope } }' }),
      path: 'lean',
      status: 400,
    },
    { name: 'validation error', body: json({ query: '{ viewer { nope } }' }), path: 'lean', status: 200 },
    { name: 'parse error', body: json({ query: '{ viewer {' }), path: 'lean', status: 200 },
    { name: 'missing query', body: json({ variables: {} }), path: 'lean', status: 200 },
    { name: 'bad JSON', body: () => '{"query": "{ viewer { subject } }"', path: 'lean', status: 400 },
    { name: 'JSON null', body: () => 'null', path: 'lean', status: 400 },
    { name: 'JSON string', body: () => '"4111111111111111"', path: 'lean', status: 400 },
    { name: 'batch', body: json([{ query: ME }]), path: 'lean', status: 400 },
    {
      name: 'too large, declared',
      body: () => Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1, ' '),
      path: 'lean',
      status: 413,
    },
    {
      name: 'too large, chunked',
      body: () => Readable.from(chunked(MAX_REQUEST_BODY_BYTES)),
      path: 'lean',
      status: 413,
    },
    {
      name: 'CSRF: text/plain without a CSRF header',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: json({ query: ME }),
      path: 'yoga',
      status: 403,
    },
    {
      name: 'CSRF: form body',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: () => `query=${encodeURIComponent(ME)}`,
      path: 'yoga',
      status: 415,
    },
    // The same query with only the authorization header changed (none for 'no token').
    ...(
      [
        ['expired token', `Bearer ${expiredToken}`, 401],
        ['malformed token', 'Bearer not.a.jwt', 401],
        ['no token', undefined, 200],
      ] as const
    ).map(
      ([name, authorization, status]): Case => ({
        name,
        headers: { ...(authorization ? { authorization } : {}), 'content-type': 'application/json' },
        body: json({ query: ME }),
        path: 'lean',
        status,
      }),
    ),
    {
      name: 'APQ hash only, unknown',
      body: json({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ nothing }') } } }),
      path: 'lean',
      status: 404,
    },
    {
      name: 'APQ hash and query',
      body: json({
        query: apqQuery,
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256(apqQuery) } },
      }),
      path: 'lean',
      status: 200,
    },
    {
      name: 'APQ hash only, registered',
      body: json({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(apqQuery) } } }),
      path: 'lean',
      status: 200,
    },
    {
      name: 'APQ mismatch',
      body: json({ query: ME, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(apqQuery) } } }),
      path: 'lean',
      status: 400,
    },
    {
      name: 'subscription asking for JSON only',
      headers: { ...auth(), accept: 'application/json' },
      body: json({ query: 'subscription { cardEvents { cursor } }' }),
      path: 'lean',
      status: 406,
    },
    { name: 'GET query', method: 'GET', search: { query: ME }, path: 'lean', status: 200 },
    {
      name: 'GET mutation',
      method: 'GET',
      search: { query: 'mutation { unsubscribeCardUpdates(cardId: "x") { __typename } }' },
      path: 'lean',
      status: 405,
    },
    {
      name: 'GET malformed variables',
      method: 'GET',
      search: { query: ME, variables: '{"a":' },
      path: 'lean',
      status: 400,
    },
    {
      name: 'GET with an SSE accept',
      method: 'GET',
      headers: { ...auth(), accept: 'text/event-stream' },
      search: { query: ME },
      path: 'yoga',
      status: 200,
    },
    {
      name: 'POST with an Origin (CORS)',
      headers: { ...auth(), origin: 'https://elsewhere.example' },
      body: json({ query: ME }),
      path: 'yoga',
      status: 200,
    },
  ];
}

/** `cardgraph_graphql_http_requests_total{path}` of a gateway. */
async function pathCounts(app: App): Promise<Record<string, number>> {
  const text = await app.metrics.registry.metrics();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^cardgraph_graphql_http_requests_total\{path="(\w+)"\} (\d+)$/gm)) {
    counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

describe('lean GraphQL HTTP path', () => {
  it('answers every request of the table as Yoga does: status, headers and body', async () => {
    const expired = await new SignJWT({ vaults: ['tntsandbox1'], scope: '' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('test-user')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const table = cases(expired);
    const before = { lean: await pathCounts(stack.app), yoga: await pathCounts(yogaApp) };
    for (const [index, c] of table.entries()) {
      const withHeaders = { ...c, headers: c.headers ?? auth() };
      const id = `lean-test-${index}`;
      const lean = await send(stack.url, withHeaders, id);
      const yoga = await send(yogaUrl, withHeaders, id);
      expect({ case: c.name, ...lean }).toEqual({ case: c.name, ...yoga });
      expect({ case: c.name, status: lean.status }).toEqual({ case: c.name, status: c.status });
      expect(lean.headers['x-request-id']).toBe(id);
    }
    const after = { lean: await pathCounts(stack.app), yoga: await pathCounts(yogaApp) };
    const leanCases = table.filter((c) => c.path === 'lean').length;
    expect((after.lean.lean ?? 0) - (before.lean.lean ?? 0)).toBe(leanCases);
    expect((after.lean.yoga ?? 0) - (before.lean.yoga ?? 0)).toBe(table.length - leanCases);
    expect((after.yoga.yoga ?? 0) - (before.yoga.yoga ?? 0)).toBe(table.length);
    expect(after.yoga.lean ?? 0).toBe(0);
  }, 60_000);

  it('streams a subscription asked for without an Accept as Yoga does (SSE), until the client leaves', async () => {
    const first = async (base: string) => {
      const controller = new AbortController();
      const response = await request(`${base}/graphql`, {
        method: 'POST',
        headers: { ...auth(), 'x-request-id': 'lean-sub' },
        body: JSON.stringify({ query: 'subscription { cardEvents { cursor } }' }),
        signal: controller.signal,
      });
      const headers = Object.fromEntries(
        Object.entries(response.headers).filter(([name]) => !FRAMING.has(name)),
      );
      const reader = response.body[Symbol.asyncIterator]();
      const chunk = await reader.next();
      controller.abort();
      await response.body.dump().catch(() => {});
      return { status: response.statusCode, headers, first: String(chunk.value) };
    };
    // Yoga's own path leaves the subscription of the 406 case above running; the lean path ends it.
    expect(stack.app.events?.subscriberCount()).toBe(0);
    const yogaBefore = yogaApp.events?.subscriberCount();
    const lean = await first(stack.url);
    expect(lean).toEqual(await first(yogaUrl));
    expect(lean.status).toBe(200);
    expect(lean.headers['content-type']).toBe('text/event-stream');
    await expect.poll(() => yogaApp.events?.subscriberCount(), { timeout: 5_000 }).toBe(yogaBefore);
    await expect.poll(() => stack.app.events?.subscriberCount(), { timeout: 5_000 }).toBe(0);
  });

  it('logs no failure when a client goes away in the middle of its body', async () => {
    const { port } = new URL(stack.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nAuthorization: Bearer ${token}\r\n\r\n{"query":`,
    );
    await expect
      .poll(() => stack.app.metrics.registry.getSingleMetricAsString('cardgraph_graphql_http_requests_total'))
      .toContain('path="lean"');
    socket.destroy();
    await expect.poll(() => readFileSync(stack.logFile, 'utf8')).toMatch(/"status":499/);
    expect(readFileSync(stack.logFile, 'utf8')).not.toContain('lean GraphQL path failed');
  });

  it('masks card data in a malformed body on the lean path (the JSON parser quotes the body)', async () => {
    const lean = await send(
      stack.url,
      { name: 'pan', body: () => '{"query": 4111111111111111', path: 'lean', status: 400, headers: auth() },
      'pan',
    );
    expect(lean.status).toBe(400);
    expect(lean.body).not.toContain('4111111111111111');
    expect(JSON.parse(lean.body).errors[0].message).toBe('POST body sent invalid JSON.');
  });
});
