import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.ts';
import { MAX_REQUEST_BODY_BYTES } from '../../src/runtime/index.ts';
import { type Stack, startStack } from '../support/fixtures.ts';

/**
 * Raw request shapes (issue 20 item 6), written byte for byte on a TCP socket so that the Host
 * header, the request target and the method can be anything a client may send: each shape goes to a
 * gateway with the lean HTTP path (GRAPHQL_LEAN_HTTP on, the default) and to one without it
 * (GRAPHQL_LEAN_HTTP=off, every request through Yoga's own handler), and both must give the same
 * status, content type and body. A Host such as `127.0.0.1?query={viewer{subject}}&x=` or `h/other`
 * is refused (400) on both: Yoga builds its URL from Host, the lean path from the target alone.
 */

interface RawAnswer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** Sends `head` (request line and headers, `\r\n`-separated, without the blank line) and `body`; reads the answer to the end. */
function rawRequest(port: number, head: string[], body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => {
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) {
        reject(new Error(`no HTTP answer: ${raw.toString('latin1')}`));
        return;
      }
      const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      const headers = new Map<string, string>();
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      let payload: Buffer = raw.subarray(end + 4);
      if (headers.get('transfer-encoding') === 'chunked') payload = dechunk(payload);
      resolve({ status, contentType: headers.get('content-type'), body: payload.toString('utf8') });
    });
    socket.write(`${[...head, 'Connection: close', '', ''].join('\r\n')}${body}`);
  });
}

/** The payload of a chunked body (RFC 9112 §7.1). */
function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!size) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** One raw request shape: method and target, extra headers, body; `host` replaces the server's own. */
interface Shape {
  name: string;
  line: string;
  host?: string | null;
  headers?: string[];
  body?: string;
  /** The status both paths answer. */
  status: number;
}

const ME = '{ viewer { subject } }';
const q = (query: string) => encodeURIComponent(query);

function shapes(): Shape[] {
  const json = (value: unknown) => JSON.stringify(value);
  const post = (
    name: string,
    body: string,
    status: number,
    headers = ['Content-Type: application/json'],
  ): Shape => ({
    name,
    line: 'POST /graphql HTTP/1.1',
    headers,
    body,
    status,
  });
  return [
    // Hostile Host headers: refused before any URL is built from them.
    {
      name: 'Host injecting a query',
      line: 'GET /graphql?x=1 HTTP/1.1',
      host: '127.0.0.1?query={viewer{subject}}&x=',
      status: 400,
    },
    {
      name: 'Host injecting a query, bare target',
      line: 'GET /graphql HTTP/1.1',
      host: '127.0.0.1?query={viewer{subject}}&x=',
      status: 400,
    },
    { name: 'Host with a path', line: `GET /graphql?query=${q(ME)} HTTP/1.1`, host: 'h/other', status: 400 },
    {
      name: 'Host with a path, POST',
      line: 'POST /graphql HTTP/1.1',
      host: 'h/other',
      headers: ['Content-Type: application/json'],
      body: json({ query: ME }),
      status: 400,
    },
    {
      name: 'Host with /graphql and a query',
      line: 'GET /graphql?a=1 HTTP/1.1',
      host: '127.0.0.1/graphql?query={viewer{subject}}&x=',
      status: 400,
    },
    {
      name: 'Host with a fragment',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      host: 'evil#frag',
      status: 400,
    },
    {
      name: 'Host with userinfo',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      host: 'user@evil',
      status: 400,
    },
    {
      name: 'Host with a backslash',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      host: 'evil\\x',
      status: 400,
    },
    // Plain hosts, any of them.
    {
      name: 'Host name with port',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      host: 'api.example.com:443',
      status: 200,
    },
    { name: 'IPv6 Host', line: `GET /graphql?query=${q(ME)} HTTP/1.1`, host: '[::1]:4000', status: 200 },
    { name: 'no Host, HTTP/1.0', line: `GET /graphql?query=${q(ME)} HTTP/1.0`, host: null, status: 200 },
    // Request targets.
    {
      name: 'absolute-form target, GET',
      line: `GET http://127.0.0.1/graphql?query=${q(ME)} HTTP/1.1`,
      status: 400,
    },
    {
      name: 'absolute-form target, POST',
      line: 'POST http://evil.example/graphql HTTP/1.1',
      headers: ['Content-Type: application/json'],
      body: json({ query: ME }),
      status: 400,
    },
    { name: 'asterisk-form OPTIONS', line: 'OPTIONS * HTTP/1.1', status: 400 },
    { name: 'trailing slash', line: `GET /graphql/?query=${q(ME)} HTTP/1.1`, status: 200 },
    { name: 'upper-case path', line: `GET /GRAPHQL?query=${q(ME)} HTTP/1.1`, status: 404 },
    { name: 'double slash', line: `GET //graphql?query=${q(ME)} HTTP/1.1`, status: 404 },
    { name: 'unknown path', line: 'GET /other HTTP/1.1', status: 404 },
    // GET parameter combinations.
    { name: 'GET query', line: `GET /graphql?query=${q(ME)} HTTP/1.1`, status: 200 },
    { name: 'GET empty query string', line: 'GET /graphql? HTTP/1.1', status: 200 },
    { name: 'GET empty query', line: 'GET /graphql?query= HTTP/1.1', status: 200 },
    { name: 'GET variables only', line: 'GET /graphql?variables=%7B%7D HTTP/1.1', status: 200 },
    {
      name: 'GET query and variables',
      line: `GET /graphql?query=${q('query Q($n: Int) { viewer { subject } }')}&variables=${q('{"n":1}')} HTTP/1.1`,
      status: 200,
    },
    {
      name: 'GET malformed variables',
      line: `GET /graphql?query=${q(ME)}&variables=%7B HTTP/1.1`,
      status: 400,
    },
    {
      name: 'GET variables not an object',
      line: `GET /graphql?query=${q(ME)}&variables=%5B1%5D HTTP/1.1`,
      status: 400,
    },
    {
      name: 'GET malformed extensions',
      line: `GET /graphql?query=${q(ME)}&extensions=nope HTTP/1.1`,
      status: 400,
    },
    {
      name: 'GET extensions and variables',
      line: `GET /graphql?query=${q(ME)}&variables=%7B%7D&extensions=%7B%7D HTTP/1.1`,
      status: 200,
    },
    {
      name: 'GET unknown persisted query',
      line: `GET /graphql?extensions=${q(json({ persistedQuery: { version: 1, sha256Hash: 'ab'.repeat(32) } }))} HTTP/1.1`,
      status: 404,
    },
    {
      name: 'GET operationName not in document',
      line: `GET /graphql?query=${q(ME)}&operationName=Nope HTTP/1.1`,
      status: 400,
    },
    {
      name: 'GET two operations, none chosen',
      line: `GET /graphql?query=${q('query A { __typename } query B { __typename }')} HTTP/1.1`,
      status: 400,
    },
    {
      name: 'GET repeated query',
      line: `GET /graphql?query=${q(ME)}&query=${q('{ __typename }')} HTTP/1.1`,
      status: 200,
    },
    {
      name: 'GET mutation',
      line: `GET /graphql?query=${q('mutation { unsubscribeCardUpdates(cardId: "x") { __typename } }')} HTTP/1.1`,
      status: 405,
    },
    {
      name: 'GET with a fragment in the target',
      line: `GET /graphql?query=${q(ME)}#frag HTTP/1.1`,
      status: 200,
    },
    {
      name: 'GET accept JSON',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      headers: ['Accept: application/json'],
      status: 200,
    },
    {
      name: 'GET accept graphql-response+json, validation error',
      line: `GET /graphql?query=${q('{ nope }')} HTTP/1.1`,
      headers: ['Accept: application/graphql-response+json'],
      status: 400,
    },
    {
      name: 'GET accept with q',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      headers: ['Accept: application/json;q=0.9, */*;q=0.1'],
      status: 200,
    },
    {
      name: 'GET accept XML only',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      headers: ['Accept: application/xml'],
      status: 406,
    },
    {
      name: 'GET with a body',
      line: `GET /graphql?query=${q(ME)} HTTP/1.1`,
      headers: ['Content-Type: application/json', 'Content-Length: 2'],
      body: '{}',
      status: 200,
    },
    // Methods.
    {
      name: 'PUT',
      line: 'PUT /graphql HTTP/1.1',
      headers: ['Content-Type: application/json'],
      body: json({ query: ME }),
      status: 405,
    },
    { name: 'DELETE', line: 'DELETE /graphql HTTP/1.1', status: 403 },
    {
      name: 'PATCH',
      line: 'PATCH /graphql HTTP/1.1',
      headers: ['Content-Type: application/json'],
      body: json({ query: ME }),
      status: 405,
    },
    { name: 'OPTIONS without Origin', line: 'OPTIONS /graphql HTTP/1.1', status: 204 },
    // Content types.
    post('POST JSON', json({ query: ME }), 200),
    post('POST JSON charset upper case', json({ query: ME }), 200, [
      'Content-Type: application/json; charset=UTF-8',
    ]),
    post('POST JSON charset without space', json({ query: ME }), 200, [
      'Content-Type: application/json;charset=utf-8',
    ]),
    post('POST JSON upper-case type', json({ query: ME }), 415, ['Content-Type: APPLICATION/JSON']),
    post('POST graphql-response+json type', json({ query: ME }), 415, [
      'Content-Type: application/graphql-response+json',
    ]),
    post('POST no content type', json({ query: ME }), 403, []),
    post('POST application/graphql', ME, 200, ['Content-Type: application/graphql']),
    post('POST text/plain', json({ query: ME }), 403, ['Content-Type: text/plain']),
    post('POST form', `query=${q(ME)}`, 415, ['Content-Type: application/x-www-form-urlencoded']),
    post('POST multipart', '--b\r\n\r\n--b--', 415, ['Content-Type: multipart/form-data; boundary=b']),
    // Bodies.
    post('POST bad JSON', '{"query": "{ viewer { subject } }"', 400),
    post('POST bad JSON with a card number', '{"query": "4111111111111111', 400),
    post('POST empty body', '', 400),
    post('POST JSON null', 'null', 400),
    post('POST JSON number', '42', 400),
    post('POST batch of one', json([{ query: ME }]), 400),
    post('POST batch of two', json([{ query: ME }, { query: '{ __typename }' }]), 400),
    post('POST query not a string', json({ query: 42 }), 400),
    post('POST variables a string', json({ query: ME, variables: '{}' }), 400),
    post('POST extensions an array', json({ query: ME, extensions: [] }), 400),
    post('POST operationName a number', json({ query: ME, operationName: 1 }), 400),
    post('POST unknown member', json({ query: ME, other: true }), 400),
    post('POST validation error', json({ query: '{ viewer { nope } }' }), 200),
    post('POST parse error', json({ query: '{ viewer {' }), 200),
    post('POST with a byte order mark', `\uFEFF${json({ query: ME })}`, 400),
    post(
      'POST subscription asking for JSON',
      json({ query: 'subscription { cardEvents { cursor } }' }),
      406,
      ['Content-Type: application/json', 'Accept: application/json'],
    ),
    {
      name: 'POST chunked body',
      line: 'POST /graphql HTTP/1.1',
      headers: ['Content-Type: application/json', 'Transfer-Encoding: chunked'],
      body: (() => {
        const text = json({ query: ME });
        return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;
      })(),
      status: 200,
    },
  ];
}

describe('raw request shapes: lean path and Yoga answer alike (GRAPHQL_LEAN_HTTP on and off)', () => {
  let stack: Stack;
  let yogaApp: App;
  let token: string;
  let leanPort: number;
  let yogaPort: number;

  beforeAll(async () => {
    stack = await startStack();
    const dir = mkdtempSync(join(tmpdir(), 'cardgraph-raw-'));
    yogaApp = buildApp(
      {
        ...stack.config,
        events: { ...stack.config.events, dataDir: dir },
        graphql: { ...stack.config.graphql, leanHttp: false },
      },
      { logDestination: pino.destination({ dest: join(dir, 'log.jsonl'), sync: true }) },
    );
    yogaPort = Number(new URL((await yogaApp.start()).url).port);
    leanPort = Number(new URL(stack.url).port);
    token = await stack.token();
    expect(stack.config.graphql.leanHttp).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await yogaApp?.stop();
    await stack?.stop();
  });

  const table = shapes();

  it(`has dozens of shapes (${table.length})`, () => {
    expect(table.length).toBeGreaterThanOrEqual(60);
  });

  it.each(table.map((shape, index) => [shape.name, shape, index] as const))(
    '%s',
    async (_name, shape, index) => {
      const answers: RawAnswer[] = [];
      for (const port of [leanPort, yogaPort]) {
        const host = shape.host === undefined ? `127.0.0.1:${port}` : shape.host;
        const body = shape.body ?? '';
        const head = [
          shape.line,
          ...(host === null ? [] : [`Host: ${host}`]),
          `Authorization: Bearer ${token}`,
          `X-Request-Id: raw-shape-${index}`,
          ...(shape.headers ?? []),
          ...(body && !shape.headers?.some((h) => /^(content-length|transfer-encoding):/i.test(h))
            ? [`Content-Length: ${Buffer.byteLength(body)}`]
            : []),
        ];
        answers.push(await rawRequest(port, head, body));
      }
      const [lean, yoga] = answers;
      expect(lean).toEqual(yoga);
      expect(lean!.status).toBe(shape.status);
      // Nothing a hostile Host carried ran.
      if (shape.host?.includes('query=')) expect(lean!.body).not.toContain('"subject"');
      expect(lean!.body).not.toContain('4111111111111111');
    },
  );

  /**
   * `Expect: 100-continue` (RFC 9110 §10.1.1) on raw TCP: the head alone is sent, and the body only
   * once the server has answered something; what arrives before the body and the whole answer
   * after it (status lines and headers without the date, framing and request id) are compared.
   */
  async function expectContinue(port: number, head: string[], body: string) {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(`${[...head, `Host: 127.0.0.1:${port}`, 'Connection: close', '', ''].join('\r\n')}`);
    await expect.poll(() => chunks.length, { timeout: 5_000 }).toBeGreaterThan(0);
    const interim = Buffer.concat(chunks).toString('latin1');
    if (!socket.destroyed) socket.write(body);
    await closed;
    const answer = Buffer.concat(chunks).toString('latin1');
    const normal = (text: string) =>
      text
        .split('\r\n')
        .filter(
          (line) =>
            !/^(date|x-request-id|connection|keep-alive|content-length|transfer-encoding):/i.test(line),
        )
        .join('\n');
    return { interim: normal(interim), answer: normal(answer) };
  }

  it.each([
    ['a JSON query', JSON.stringify({ query: ME }), 'HTTP/1.1 200 OK'],
    ['a bad JSON body', '{"query":', 'HTTP/1.1 400 Bad Request'],
  ])(
    'answers Expect: 100-continue with %s alike on both paths: 100, then the answer',
    async (_name, body, final) => {
      const head = [
        'POST /graphql HTTP/1.1',
        `Authorization: Bearer ${token}`,
        'Content-Type: application/json',
        'Expect: 100-continue',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'X-Request-Id: expect-continue',
      ];
      const lean = await expectContinue(leanPort, head, body);
      const yoga = await expectContinue(yogaPort, head, body);
      expect(lean).toEqual(yoga);
      expect(lean.interim).toBe('HTTP/1.1 100 Continue\n\n');
      expect(lean.answer.split('\n').filter((line) => line.startsWith('HTTP/1.1 '))).toEqual([
        'HTTP/1.1 100 Continue',
        final,
      ]);
    },
  );

  it('refuses a declared body over the limit under Expect: 100-continue with 413 before the body, alike on both paths', async () => {
    const head = [
      'POST /graphql HTTP/1.1',
      `Authorization: Bearer ${token}`,
      'Content-Type: application/json',
      'Expect: 100-continue',
      `Content-Length: ${MAX_REQUEST_BODY_BYTES + 1}`,
      'X-Request-Id: expect-large',
    ];
    const lean = await expectContinue(leanPort, head, '');
    const yoga = await expectContinue(yogaPort, head, '');
    expect(lean).toEqual(yoga);
    expect(lean.answer.split('\n').filter((line) => line.startsWith('HTTP/1.1 '))).toEqual([
      'HTTP/1.1 413 Payload Too Large',
    ]);
    expect(lean.answer).toContain('"code":"REQUEST_ENTITY_TOO_LARGE"');
  });
});
