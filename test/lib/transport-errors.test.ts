import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { GraphQLError } from 'graphql';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  errorsAnswer,
  INTERNAL_ERROR_CODE,
  internalError,
  isWellCasedCode,
  PROTOCOL_CODES,
  REFUSALS,
  type RequestBody,
  readRequestBody,
  refusal,
  sendJson,
  writeJsonAnswer,
} from '../../src/lib/transport-errors.ts';
import { closeNow, listen } from '../../src/server/listen.ts';

describe('transport error model (src/lib/transport-errors.ts)', () => {
  it('holds every refusal code to the casing rule: kebab-case or a protocol code', () => {
    for (const code of Object.keys(REFUSALS))
      expect({ code, ok: isWellCasedCode(code) }).toEqual({ code, ok: true });
    expect(isWellCasedCode(INTERNAL_ERROR_CODE)).toBe(true);
    for (const code of PROTOCOL_CODES) expect(code).toMatch(/^[A-Z]+(?:_[A-Z]+)*$/);
    expect(isWellCasedCode('INTERNAL_SERVER_ERROR')).toBe(false);
    expect(isWellCasedCode('tooManyIds')).toBe(false);
    expect(isWellCasedCode('too_many_ids')).toBe(false);
    expect(isWellCasedCode('-lead')).toBe(false);
  });

  it('answers a refusal with its status, code and headers, and never sends the http extension', () => {
    const answer = errorsAnswer([refusal('too-many-connections', 'Too many', { 'Retry-After': '1' })]);
    expect(answer).toEqual({
      status: 429,
      statusText: 'Too Many Requests',
      headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' },
      body: '{"errors":[{"message":"Too many","extensions":{"code":"too-many-connections"}}]}',
    });
  });

  it('answers the internal error (and anything not a GraphQLError) 500 internal-error, the highest status otherwise', () => {
    expect(errorsAnswer([internalError()])).toMatchObject({
      status: 500,
      body: '{"errors":[{"message":"Unexpected error.","extensions":{"code":"internal-error"}}]}',
    });
    expect(errorsAnswer([new Error('db password is hunter2')])).toMatchObject({
      status: 500,
      body: '{"errors":[{"message":"Unexpected error.","extensions":{"code":"internal-error"}}]}',
    });
    expect(errorsAnswer([refusal('BAD_REQUEST', 'a'), refusal('REQUEST_ENTITY_TOO_LARGE', 'b')]).status).toBe(
      413,
    );
    expect(errorsAnswer([new GraphQLError('no status')]).status).toBe(400);
  });

  describe('over HTTP', () => {
    let server: Server | undefined;
    afterEach(async () => {
      if (server) await closeNow(server);
      server = undefined;
    });

    /** A server answering each request with what {@link readRequestBody} read (limit 16 bytes). */
    async function echoServer(): Promise<{ url: string; reads: RequestBody[]; started: () => number }> {
      const reads: RequestBody[] = [];
      let started = 0;
      server = createServer(async (req, res) => {
        started++;
        const read = await readRequestBody(req, 16);
        reads.push(read);
        if (read.ok) sendJson(res, 200, { text: read.body.toString('utf8') });
        else
          writeJsonAnswer(res, errorsAnswer([refusal('REQUEST_ENTITY_TOO_LARGE', 'Request body too large')]));
      });
      return { url: await listen(server, 0, '127.0.0.1'), reads, started: () => started };
    }

    it('reads a body within the limit and writes JSON with its length, never cached', async () => {
      const { url } = await echoServer();
      const response = await request(url, { method: 'POST', body: '{"a":1}' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['content-length']).toBe('20');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(await response.body.text()).toBe('{"text":"{\\"a\\":1}"}');
    });

    it('refuses a declared and a streamed body over the limit with 413', async () => {
      const { url, reads } = await echoServer();
      const declared = await request(url, { method: 'POST', body: 'x'.repeat(17) });
      expect(declared.statusCode).toBe(413);
      expect(await declared.body.json()).toEqual({
        errors: [{ message: 'Request body too large', extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' } }],
      });
      const streamed = await request(url, {
        method: 'POST',
        body: Readable.from(Array.from({ length: 4 }, () => Buffer.from('xxxxxxxx'))),
      });
      expect(streamed.statusCode).toBe(413);
      await streamed.body.dump();
      expect(reads).toEqual([
        { ok: false, reason: 'too-large' },
        { ok: false, reason: 'too-large' },
      ]);
    });

    it('reports a client that goes away mid-body as aborted', async () => {
      const { url, reads, started } = await echoServer();
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
      await expect.poll(started).toBe(1);
      socket.destroy();
      await expect.poll(() => reads).toEqual([{ ok: false, reason: 'aborted' }]);
    });
  });
});
