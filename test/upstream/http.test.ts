import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createUpstreamHttp, UpstreamError, type UpstreamHttp } from '../../src/upstream/http.ts';
import { captureLogger, logEntries, rejectionOf } from '../support/fixtures.ts';

/**
 * The pooled HTTP client against a scripted node:http server on a free port: retry policy (idempotent
 * methods only), error mapping of contract §3 bodies, timeouts, zod failures.
 */

type Script = (req: IncomingMessage, res: ServerResponse, hit: number) => void;

let server: Server;
let base: string;
let script: Script = (_req, res) => res.end();
const hits: { method: string; path: string }[] = [];

function json(res: ServerResponse, status: number, body: unknown, type = 'application/json') {
  res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push({ method: req.method ?? '', path: req.url ?? '' });
    req.resume();
    req.on('end', () => script(req, res, hits.length));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

let http: UpstreamHttp | undefined;
afterEach(async () => {
  hits.length = 0;
  await http?.close();
  http = undefined;
});

function client(timeoutMs = 2000) {
  const captured = captureLogger();
  http = createUpstreamHttp({
    timeoutMs,
    logger: captured.logger,
    retry: { maxRetries: 2, minDelayMs: 10, maxDelayMs: 20 },
  });
  return { http, lines: captured.lines };
}

const thing = z.object({ id: z.string(), count: z.number() });

describe('createUpstreamHttp', () => {
  it('parses a success body with the schema and logs area, method, path, status and duration at debug', async () => {
    script = (_req, res) => json(res, 200, { id: 'CRDabc', count: 2, extra: true });
    const { http, lines } = client();
    const response = await http.request({
      area: 'card-interface',
      method: 'GET',
      url: `${base}/card-interface/cards/CRDabc`,
      schema: thing,
    });
    expect(response).toEqual({ status: 200, data: { id: 'CRDabc', count: 2 } });
    const [entry] = logEntries(lines, 'upstream call');
    expect(entry).toMatchObject({
      level: 20,
      area: 'card-interface',
      method: 'GET',
      path: '/card-interface/cards/CRDabc',
      status: 200,
    });
    expect(typeof entry?.durationMs).toBe('number');
  });

  it('retries a GET on 503 and 502 and returns the third answer', async () => {
    script = (_req, res, hit) =>
      hit < 3 ? json(res, hit === 1 ? 503 : 502, {}) : json(res, 200, { id: 'x', count: 1 });
    const { http } = client();
    const response = await http.request({ area: 'accounts', method: 'GET', url: `${base}/x`, schema: thing });
    expect(response.data).toEqual({ id: 'x', count: 1 });
    expect(hits).toHaveLength(3);
  });

  it('gives up after maxRetries and maps the last 504 body to a retryable UpstreamError', async () => {
    script = (_req, res) =>
      json(res, 504, { errors: [{ status: '504', code: 'gateway-timeout', detail: 'upstream timed out' }] });
    const { http } = client();
    const error = await rejectionOf(
      http.request({ area: 'card-interface', method: 'DELETE', url: `${base}/y` }),
    );
    expect(hits).toHaveLength(3);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      area: 'card-interface',
      status: 504,
      code: 'gateway-timeout',
      retryable: true,
      detail: 'upstream timed out',
    });
  });

  it('never retries a POST, even on 503', async () => {
    script = (_req, res) => json(res, 503, { errors: [{ status: '503', code: 'service-unavailable' }] });
    const { http } = client();
    const error = await rejectionOf(
      http.request({ area: 'account-updater', method: 'POST', url: `${base}/cards`, body: '{}' }),
    );
    expect(hits).toEqual([{ method: 'POST', path: '/cards' }]);
    expect(error).toMatchObject({ status: 503, code: 'service-unavailable', retryable: true });
  });

  it('does not retry a GET on 500 or 404', async () => {
    script = (_req, res) => json(res, 500, { errors: [{ status: '500', code: 'server-error' }] });
    const { http } = client();
    await expect(http.request({ area: 'accounts', method: 'GET', url: `${base}/a` })).rejects.toMatchObject({
      status: 500,
      code: 'server-error',
      retryable: true,
    });
    expect(hits).toHaveLength(1);
    script = (_req, res) => json(res, 404, { errors: [{ status: '404', code: 'card-not-found' }] });
    await expect(http.request({ area: 'accounts', method: 'GET', url: `${base}/b` })).rejects.toMatchObject({
      status: 404,
      code: 'card-not-found',
      retryable: false,
    });
    expect(hits).toHaveLength(2);
  });

  it('retries a GET whose connection was reset and fails a reset POST as connection-failed', async () => {
    script = (req, res, hit) => (hit === 1 ? req.socket.destroy() : json(res, 200, { id: 'r', count: 0 }));
    const { http } = client();
    await expect(
      http.request({ area: 'accounts', method: 'GET', url: `${base}/r`, schema: thing }),
    ).resolves.toEqual({
      status: 200,
      data: { id: 'r', count: 0 },
    });
    expect(hits).toHaveLength(2);

    hits.length = 0;
    script = (req) => req.socket.destroy();
    const error = await rejectionOf(
      http.request({ area: 'accounts', method: 'POST', url: `${base}/p`, body: '{}' }),
    );
    expect(hits).toHaveLength(1);
    expect(error).toMatchObject({ code: 'connection-failed', retryable: true, status: undefined });
  });

  it('maps a 400 with source.pointer and redacts PAN-like digits in detail and message', async () => {
    script = (_req, res) =>
      json(res, 400, {
        errors: [
          {
            status: '400',
            code: 'bad-request',
            detail: 'number 4000210000593001 is invalid',
            source: { pointer: '/number' },
          },
        ],
      });
    const { http } = client();
    const error = (await rejectionOf(
      http.request({ area: 'account-updater', method: 'POST', url: `${base}/card-check`, body: '{}' }),
    )) as UpstreamError;
    expect(error).toMatchObject({
      status: 400,
      code: 'bad-request',
      pointer: '/number',
      retryable: false,
      detail: 'number 400021******3001 is invalid',
    });
    expect(error.message).toBe(
      'upstream account-updater POST /card-check failed: 400 bad-request (number 400021******3001 is invalid)',
    );
  });

  it('reads the RFC 6749 error form of the token endpoint', async () => {
    script = (_req, res) =>
      json(res, 401, { error: 'invalid_client', error_description: 'client authentication failed' });
    const { http } = client();
    await expect(
      http.request({
        area: 'oauth',
        method: 'POST',
        url: `${base}/oauth/token`,
        body: 'grant_type=client_credentials',
      }),
    ).rejects.toMatchObject({ area: 'oauth', status: 401, code: 'invalid_client', retryable: false });
  });

  it('derives the code from the status when the error body is not contract §3', async () => {
    const { http } = client();
    const answers: [Script, { status: number; code: string; retryable: boolean }][] = [
      [
        (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>'),
        { status: 502, code: 'bad-gateway', retryable: true },
      ],
      [(_req, res) => res.writeHead(429).end(), { status: 429, code: 'rate-limited', retryable: true }],
    ];
    for (const [answer, expected] of answers) {
      script = answer;
      await expect(
        http.request({ area: 'card-attributes', method: 'POST', url: `${base}/z` }),
      ).rejects.toMatchObject(expected);
    }
  });

  it('refuses a body failing the schema as invalid-response and logs issue paths, never values', async () => {
    script = (_req, res) => json(res, 200, { id: 5100260000193001, count: 'many' });
    const { http, lines } = client();
    const error = await rejectionOf(
      http.request({ area: 'card-interface', method: 'GET', url: `${base}/cards/CRD1`, schema: thing }),
    );
    expect(error).toMatchObject({ status: 200, code: 'invalid-response', retryable: false });
    const [entry] = logEntries(lines, 'upstream response failed validation');
    expect(entry?.issues).toEqual([
      { path: '/id', code: 'invalid_type' },
      { path: '/count', code: 'invalid_type' },
    ]);
    expect(lines.join('\n')).not.toContain('5100260000193001');
    expect(lines.join('\n')).not.toContain('many');
  });

  it('refuses a non-JSON success body and an unexpected success status as invalid-response', async () => {
    script = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{not json');
    const { http } = client();
    await expect(
      http.request({ area: 'accounts', method: 'GET', url: `${base}/j`, schema: thing }),
    ).rejects.toMatchObject({ status: 200, code: 'invalid-response' });
    script = (_req, res) => json(res, 200, { id: 'a', count: 1 });
    await expect(
      http.request({
        area: 'accounts',
        method: 'POST',
        url: `${base}/j`,
        expectStatus: [201],
        schema: thing,
      }),
    ).rejects.toMatchObject({ status: 200, code: 'invalid-response' });
  });

  it('times out when the headers do not arrive within timeoutMs, without retrying', async () => {
    script = () => undefined;
    const { http, lines } = client(150);
    const started = Date.now();
    const error = await rejectionOf(http.request({ area: 'accounts', method: 'GET', url: `${base}/slow` }));
    // undici checks header timeouts on a timer of about 1 s resolution.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(hits).toHaveLength(1);
    expect(error).toMatchObject({ code: 'upstream-timeout', status: undefined, retryable: true });
    expect(logEntries(lines, 'upstream call failed')[0]).toMatchObject({
      level: 40,
      code: 'upstream-timeout',
    });
  });

  it('ends a trickling body at the total deadline, not per chunk, with the retryable upstream-timeout', async () => {
    const trickles: NodeJS.Timeout[] = [];
    script = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      trickles.push(setInterval(() => res.write(' '), 50));
    };
    const { http } = client(400);
    const started = Date.now();
    const error = await rejectionOf(
      http.request({ area: 'accounts', method: 'GET', url: `${base}/trickle`, schema: thing }),
    );
    for (const timer of trickles) clearInterval(timer);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'upstream-timeout', status: undefined, retryable: true });
    expect(hits).toHaveLength(1);
  });

  it('aborts calls in flight with client-closed when asked to (bounded shutdown)', async () => {
    script = () => undefined;
    const { http } = client(10_000);
    const pending = rejectionOf(http.request({ area: 'accounts', method: 'GET', url: `${base}/hang` }));
    await expect.poll(() => hits.length).toBe(1);
    http.abortInFlight();
    expect(await pending).toMatchObject({ code: 'client-closed', retryable: false });
  });

  it('fails with connection-failed when nothing listens', async () => {
    const { http } = client();
    await expect(
      http.request({ area: 'accounts', method: 'POST', url: 'http://127.0.0.1:1/nothing' }),
    ).rejects.toMatchObject({ code: 'connection-failed', retryable: true, status: undefined });
  });
});
