import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSandboxErrorAnswer, startSandbox, type TestSandbox } from '../support/fixtures.ts';

let clock = Date.now();
let t: TestSandbox;

beforeAll(async () => {
  t = await startSandbox({ now: () => clock });
});
afterAll(() => t.stop());

/** The client credentials grant of sandbox client 1, as form fields. */
const CLIENT_1 = {
  grant_type: 'client_credentials',
  client_id: 'sandbox-client-1',
  client_secret: 'sandbox-secret-1',
};

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });

const ALL_SCOPES =
  'cards:read cards:write network-tokens:read network-tokens:write card-attributes:basic organization-users:read';

describe('POST /oauth/token (contract §2)', () => {
  it('issues a Bearer token with all six scopes when scope is absent', async () => {
    const response = await form(CLIENT_1);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(1200);
    expect(body.scope).toBe(ALL_SCOPES);
    expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('accepts HTTP Basic client credentials and grants only the requested scopes', async () => {
    const basic = Buffer.from('sandbox-client-2:sandbox-secret-2').toString('base64');
    const response = await form(
      { grant_type: 'client_credentials', scope: 'cards:read cards:read network-tokens:read' },
      { authorization: `Basic ${basic}` },
    );
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.scope).toBe('cards:read network-tokens:read');
  });

  it('answers 401 invalid_client for a wrong secret, an unknown id and missing credentials', async () => {
    const attempts: Record<string, string>[] = [
      { ...CLIENT_1, client_secret: 'sandbox-secret-2' },
      { ...CLIENT_1, client_id: 'nobody' },
      { grant_type: 'client_credentials' },
    ];
    for (const fields of attempts) {
      const response = await form(fields);
      expect(response.status).toBe(401);
      expect((await response.json()).error).toBe('invalid_client');
    }
    const basic = Buffer.from('sandbox-client-1:wrong').toString('base64');
    const response = await form({ grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="sandbox"');
    expect((await response.json()).error).toBe('invalid_client');
  });

  it('answers 400 invalid_scope for an unknown scope', async () => {
    const response = await form({ ...CLIENT_1, scope: 'cards:read cards:delete' });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe('invalid_scope');
  });

  it('answers 400 unsupported_grant_type and invalid_request', async () => {
    const unsupported = await form({ ...CLIENT_1, grant_type: 'password', client_secret: 'x' });
    expect(unsupported.status).toBe(400);
    expect((await unsupported.json()).error).toBe('unsupported_grant_type');

    const missing = await form({ client_id: 'sandbox-client-1', client_secret: 'sandbox-secret-1' });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toBe('invalid_request');

    const json = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect(json.status).toBe(400);
    expect((await json.json()).error).toBe('invalid_request');

    const basic = Buffer.from('sandbox-client-1:sandbox-secret-1').toString('base64');
    const both = await form(CLIENT_1, { authorization: `Basic ${basic}` });
    expect(both.status).toBe(400);
    expect((await both.json()).error).toBe('invalid_request');
  });

  it('refuses GET with 405 method-not-allowed', async () => {
    const response = await t.call('GET', '/oauth/token');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(response.body.errors[0].code).toBe('method-not-allowed');
  });
});

describe('bearer authentication (gap decisions, Common)', () => {
  it('answers 401 unauthorized with WWW-Authenticate: Bearer without a token', async () => {
    const response = await t.call('GET', '/account-updater/cards/CRDabc');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(response.body).toEqual({
      errors: [{ status: '401', code: 'unauthorized', detail: 'missing, invalid or expired access token' }],
    });
  });

  it('answers 401 for an unknown token, in the card interface media type there', async () => {
    const response = await t.call('GET', '/card-interface/cards/CRDabc', { token: 'not-a-token' });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json');
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(response.body.errors[0].code).toBe('unauthorized');
  });

  it('answers 403 forbidden for a token without the scope', async () => {
    const readOnly = await t.token('tntsandbox1', 'cards:read');
    const enrol = await t.call('POST', '/account-updater/cards', {
      token: readOnly,
      body: { name: 'A', number: '4111111111111111', exp_month: 1, exp_year: 30 },
    });
    expect(enrol.status).toBe(403);
    expect(enrol.body).toEqual({
      errors: [{ status: '403', code: 'forbidden', detail: 'the access token lacks the scope cards:write' }],
    });
    const writeOnly = await t.token('tntsandbox1', 'cards:write');
    const get = await t.call('GET', '/account-updater/cards/CRDabc', { token: writeOnly });
    expect(get.status).toBe(403);
    expect(get.body.errors[0].code).toBe('forbidden');
    const getCi = await t.call('GET', '/card-interface/cards/CRDabc', { token: writeOnly });
    expect(getCi.status).toBe(403);
  });

  it('expires tokens after 1200 s', async () => {
    const token = await t.token('tntsandbox2', 'cards:read');
    clock += 1_199_000;
    expect((await t.call('GET', '/account-updater/cards/CRDnope', { token })).status).toBe(404);
    clock += 1_000;
    const expired = await t.call('GET', '/account-updater/cards/CRDnope', { token });
    expect(expired.status).toBe(401);
    expect(expired.body.errors[0].code).toBe('unauthorized');
  });
});

describe('common answers', () => {
  it('answers 404 not-found for an unknown path', async () => {
    const response = await t.call('GET', '/nowhere');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      errors: [{ status: '404', code: 'not-found', detail: 'no such resource' }],
    });
  });

  it('answers 413 for a body over 1 MiB and 415 for a wrong media type', async () => {
    const token = await t.token('tntsandbox1');
    const big = await t.call('POST', '/account-updater/card-check', {
      token,
      body: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
    });
    expect(big.status).toBe(413);
    expect(big.body.errors[0].code).toBe('payload-too-large');
    const wrongType = await t.call('POST', '/account-updater/card-check', {
      token,
      body: '{}',
      contentType: 'text/plain',
    });
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.errors[0].code).toBe('unsupported-media-type');
  });

  it('answers 400 bad-request for malformed JSON', async () => {
    const token = await t.token('tntsandbox1');
    const response = await t.call('POST', '/account-updater/card-check', { token, body: '{"number":' });
    expectSandboxErrorAnswer(response, 400, 'bad-request', 'request body is not valid JSON', '');
  });
});
