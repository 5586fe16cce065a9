import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { createClient } from 'graphql-ws';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../src/lib/logger.ts';
import { createRequestRecord } from '../../src/lib/request-record.ts';
import { writeAccessLine } from '../../src/server/access-line.ts';
import { notification, postGraphql, postNotification, type Stack, startStack } from '../support/fixtures.ts';

interface LogLine {
  level: number;
  name: string;
  msg: string;
  reqId?: string;
  method?: string;
  route?: string;
  operation?: string;
  status?: number;
  durationMs?: number;
  errorCodes?: string[];
  transport?: string;
  closeCode?: number;
}

/** Texts only a client sent: none may appear in any log line, at any level. */
const VALID_QUERY =
  'query Me { markerAliasQx7: viewer { subject } card(cardId: "CRDliteralMarker000000001") { __typename } }';
const INVALID_QUERY = '{ viewer { subject nopeMarkerField } }';
const MALFORMED_QUERY = '{ viewer { subject ';
const VARIABLE_MARKER = 'variableMarkerValue-31337';

describe('access log', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ LOG_LEVEL: 'trace' });
    token = await stack.token();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('writes one access line per request, client mistakes below error, and never the query text', async () => {
    const valid = await postGraphql(
      stack.url,
      { query: VALID_QUERY, variables: { unused: VARIABLE_MARKER } },
      token,
      {
        'x-request-id': 'log-valid',
      },
    );
    expect(valid.status).toBe(200);
    const invalid = await postGraphql(stack.url, { query: INVALID_QUERY }, token, {
      'x-request-id': 'log-invalid',
    });
    expect(invalid.body.errors?.[0]?.extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      requestId: 'log-invalid',
    });
    await postGraphql(stack.url, { query: MALFORMED_QUERY }, token, { 'x-request-id': 'log-malformed' });
    const unauthenticated = await postGraphql(stack.url, { query: VALID_QUERY }, 'not-a-jwt', {
      'x-request-id': 'log-unauthenticated',
    });
    expect(unauthenticated.status).toBe(401);
    const viaGet = await request(`${stack.url}/graphql?query=${encodeURIComponent(VALID_QUERY)}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'x-request-id': 'log-get' },
    });
    await viaGet.body.dump();
    const webhook = await request(`${stack.url}/webhooks/card-events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'vgs-signature': 't=1,v0=00',
        'x-request-id': 'log-webhook',
      },
      body: JSON.stringify(notification()),
    });
    await webhook.body.dump();
    expect(webhook.statusCode).toBe(401);
    expect((await postNotification(stack.url, notification())).status).toBe(200);
    for (const [path, id] of [
      ['/health', 'log-health'],
      ['/readiness', 'log-readiness'],
      ['/nope/4111111111111111', 'log-unknown'],
    ] as const) {
      const answer = await request(`${stack.url}${path}`, { headers: { 'x-request-id': id } });
      await answer.body.dump();
    }
    // One graphql-ws connection: one access line, written when it closes.
    const ws = createClient({
      url: `${stack.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers: { 'x-request-id': 'log-ws' } });
        }
      },
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    const wsResult = await new Promise<unknown>((resolve, reject) => {
      let result: unknown;
      ws.subscribe(
        { query: INVALID_QUERY },
        {
          next: (value) => (result = value),
          error: (error) => resolve(error ?? result),
          complete: () => resolve(result),
        },
      );
      setTimeout(() => reject(new Error('no graphql-ws answer')), 5_000);
    });
    expect(JSON.stringify(wsResult)).toContain('"requestId":"log-ws"');
    await ws.dispose();

    const readLines = () =>
      readFileSync(stack.logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LogLine);
    await expect
      .poll(() => readLines().some((line) => line.reqId === 'log-ws' && line.msg === 'request'))
      .toBe(true);
    const text = readFileSync(stack.logFile, 'utf8');
    const access = readLines().filter((line) => line.name === 'gateway' && line.msg === 'request');
    const byId = (id: string) => access.filter((line) => line.reqId === id);
    for (const id of [
      'log-valid',
      'log-invalid',
      'log-malformed',
      'log-unauthenticated',
      'log-get',
      'log-webhook',
      'log-health',
      'log-readiness',
      'log-unknown',
      'log-ws',
    ]) {
      expect(byId(id), id).toHaveLength(1);
      expect(byId(id)[0]!.level, id).toBe(30);
      expect(byId(id)[0]!.durationMs, id).toBeTypeOf('number');
    }
    expect(byId('log-valid')[0]).toMatchObject({
      method: 'POST',
      route: '/graphql',
      operation: 'Me',
      status: 200,
    });
    expect(byId('log-invalid')[0]).toMatchObject({ status: 400, errorCodes: ['GRAPHQL_VALIDATION_FAILED'] });
    expect(byId('log-malformed')[0]).toMatchObject({ status: 400, errorCodes: ['GRAPHQL_PARSE_FAILED'] });
    expect(byId('log-unauthenticated')[0]).toMatchObject({ status: 401 });
    expect(byId('log-get')[0]).toMatchObject({
      method: 'GET',
      route: '/graphql',
      operation: 'Me',
      status: 200,
    });
    expect(byId('log-webhook')[0]).toMatchObject({
      method: 'POST',
      route: '/webhooks/card-events',
      status: 401,
    });
    expect(byId('log-health')[0]).toMatchObject({ route: '/health', status: 200 });
    expect(byId('log-readiness')[0]).toMatchObject({ route: '/readiness', status: 200 });
    expect(byId('log-unknown')[0]).toMatchObject({ route: 'other', status: 404 });
    expect(byId('log-ws')[0]).toMatchObject({
      transport: 'graphql-ws',
      route: '/graphql',
      status: 101,
      errorCodes: ['GRAPHQL_VALIDATION_FAILED'],
    });
    // Every request has exactly one line: as many lines as requests, with distinct ids.
    expect(access).toHaveLength(new Set(access.map((line) => line.reqId)).size);
    // The 10 above and the accepted webhook (a generated id).
    expect(access).toHaveLength(11);

    // Client mistakes are never logged as errors.
    expect(readLines().filter((line) => line.level >= 50)).toEqual([]);
    // No query text, variable value or literal at any level (trace included).
    for (const secret of [
      VALID_QUERY,
      INVALID_QUERY,
      MALFORMED_QUERY,
      'markerAliasQx7',
      'nopeMarkerField',
      VARIABLE_MARKER,
    ]) {
      expect(text, secret).not.toContain(secret);
    }
  });
});

describe('generated request ids', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ LOG_LEVEL: 'info' });
    token = await stack.token();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('logs every request under the id its x-request-id header answered (2,400 requests)', async () => {
    // About one random UUID in 200 holds a Luhn-valid run of 13 to 19 digits across its hyphens,
    // which the logger would mask: 2,400 requests without the regeneration would log about 12 under
    // another id (the chance of none is about 6 in a million).
    const answered: string[] = [];
    const send = async (i: number) => {
      const answer =
        i % 2 === 0
          ? await request(`${stack.url}/health`)
          : await request(`${stack.url}/graphql`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify({ query: '{ viewer { subject } }' }),
            });
      await answer.body.dump();
      expect(answer.statusCode).toBe(200);
      answered.push(String(answer.headers['x-request-id']));
    };
    const REQUESTS = 2_400;
    const CONCURRENCY = 16;
    for (let start = 0; start < REQUESTS; start += CONCURRENCY) {
      await Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => send(start + k)));
    }
    expect(new Set(answered).size).toBe(REQUESTS);
    const logged = () =>
      readFileSync(stack.logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LogLine)
        .filter((line) => line.name === 'gateway' && line.msg === 'request')
        .map((line) => line.reqId);
    await expect.poll(() => logged().length).toBe(REQUESTS);
    expect(new Set(logged())).toEqual(new Set(answered));
  });
});

describe('access line writer (src/server/access-line.ts)', () => {
  /** The gateway's logger at `level` writing into an array of parsed lines. */
  function logTo(level: string) {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(JSON.parse(String(chunk)));
        callback();
      },
    });
    return { lines, logger: createLogger({ level, name: 'gateway', destination: destination as never }) };
  }

  it('masks PANs in operation names and error codes, and keeps the members in the line order', () => {
    const { lines, logger } = logTo('info');
    const record = createRequestRecord('req-pan-1');
    record.operationNames.add('Q4111111111111111');
    record.errorCodes.add('code 4111 1111 1111 1111');
    writeAccessLine(logger, { record, method: 'POST', route: '/graphql', status: 200, durationMs: 1.26 });
    expect(lines).toHaveLength(1);
    const { time: _time, pid: _pid, hostname: _hostname, ...line } = lines[0]!;
    expect(line).toEqual({
      level: 30,
      name: 'gateway',
      reqId: 'req-pan-1',
      transport: 'http',
      method: 'POST',
      route: '/graphql',
      operation: 'Q411111******1111',
      status: 200,
      durationMs: 1.3,
      errorCodes: ['code 4111 11** **** 1111'],
      msg: 'request',
    });
    expect(Object.keys(line)).toEqual([
      'level',
      'name',
      'reqId',
      'transport',
      'method',
      'route',
      'operation',
      'status',
      'durationMs',
      'errorCodes',
      'msg',
    ]);
    expect(JSON.stringify(lines)).not.toContain('4111111111111111');
  });

  it('writes 5xx lines at error even when info is off, and nothing below the level', () => {
    const { lines, logger } = logTo('warn');
    const record = createRequestRecord(undefined, 'graphql-ws');
    writeAccessLine(logger, { record, method: 'GET', route: '/graphql', status: 200, durationMs: 3 });
    writeAccessLine(logger, {
      record,
      method: 'GET',
      route: '/graphql',
      status: 101,
      closeCode: 1011,
      durationMs: 3,
    });
    expect(lines).toHaveLength(0);
    writeAccessLine(logger, { record, method: 'POST', route: '/graphql', status: 502, durationMs: 2 });
    expect(lines).toMatchObject([{ level: 50, transport: 'graphql-ws', status: 502, msg: 'request' }]);
  });
});
