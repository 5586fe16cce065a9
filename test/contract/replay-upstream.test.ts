import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadProviderExamples,
  REPLAY_AREA_BASES,
  REPLAY_CLIENT,
  REPLAY_TOKEN_PATH,
  type ReplayUpstream,
  startReplayUpstream,
} from '../support/replay-upstream.ts';

/**
 * The replay upstream of the provider-docs contract tests (test/support/replay-upstream.ts) answers
 * what the documentation shows, byte for byte as JSON, and nothing it does not show.
 */

const EXAMPLES = loadProviderExamples();

/** Examples that are REST calls with a documented status and body, served as they are. */
const SERVED_AS_DOCUMENTED = EXAMPLES.filter(
  (e) =>
    e.path.startsWith('/') &&
    e.status !== null &&
    e.response !== null &&
    !(e.area === 'card-interface' && e.path === '/cards'),
);

describe('replay upstream', () => {
  let replay: ReplayUpstream;
  let token: string;

  async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${replay.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...headers },
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      json: text ? JSON.parse(text) : undefined,
    };
  }

  beforeAll(async () => {
    replay = await startReplayUpstream(EXAMPLES);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: REPLAY_CLIENT.clientId,
      client_secret: REPLAY_CLIENT.clientSecret,
    });
    const answer = await fetch(`${replay.url}${REPLAY_TOKEN_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(answer.status).toBe(200);
    const issued = (await answer.json()) as Record<string, unknown>;
    expect(issued).toMatchObject({ token_type: 'Bearer', expires_in: 1200 });
    token = issued.access_token as string;
  });
  afterAll(() => replay?.close());

  it.each(SERVED_AS_DOCUMENTED.map((e) => [`${e.method} ${e.path} (${e.area})`, e] as const))(
    'answers %s with the documented status and body',
    async (_name, example) => {
      replay.answerWith(example);
      const path = `${REPLAY_AREA_BASES[example.area]}${example.path.replace('{card_id}', 'CRDecqZp3xRgXU3TFmtcDdzQs')}`;
      const answer = await call(example.method, path, example.method === 'GET' ? undefined : '{}');
      expect(answer.status).toBe(example.status);
      expect(answer.json).toEqual(example.response);
    },
  );

  it('answers the card interface creation as shown, with the expiry of the request (the copy is cut there)', async () => {
    const created = EXAMPLES.find((e) => e.area === 'card-interface' && e.path === '/cards')!;
    const answer = await call('POST', '/card-interface/cards', '{}');
    expect(answer.status).toBe(201);
    expect(answer.type).toBe('application/vnd.api+json');
    const shown = (created.response as { data: { attributes: object } }).data;
    expect(answer.json).toEqual({
      data: { ...shown, attributes: { ...shown.attributes, exp_month: 4, exp_year: 28 } },
    });
  });

  it('answers 204 with no body where the documentation shows none', async () => {
    const answer = await call(
      'DELETE',
      '/card-interface/cards/CRDecqZp3xRgXU3TFmtcDdzQs/card-update-subscriptions',
    );
    expect(answer).toEqual({ status: 204, type: null, json: undefined });
  });

  it('answers 401 without a token it issued, 404 for what no example shows', async () => {
    const unauthorized = await call(
      'GET',
      '/accounts/organizations/ACsUNAGQN3Lv875yyqZiLQ2s/members',
      undefined,
      {
        authorization: 'Bearer not-issued',
      },
    );
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.json.errors[0]).toMatchObject({ status: '401', code: 'unauthorized' });
    const unknown = await call('GET', '/account-updater/network-tokens/5573495XKjDP28V7312');
    expect(unknown.status).toBe(404);
    expect(unknown.json.errors[0]).toMatchObject({ status: '404', code: 'not-found' });
  });

  it('refuses a token request with other credentials (invalid_client)', async () => {
    const answer = await fetch(`${replay.url}${REPLAY_TOKEN_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=someone&client_secret=else',
    });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toEqual({ error: 'invalid_client' });
  });

  it('records every request with its method, path, query, headers and body', () => {
    const tokenRequest = replay.requestsTo('POST', REPLAY_TOKEN_PATH)[0]!;
    expect(Object.fromEntries(new URLSearchParams(tokenRequest.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: REPLAY_CLIENT.clientId,
      client_secret: REPLAY_CLIENT.clientSecret,
    });
    expect(tokenRequest.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(replay.requests.length).toBe(SERVED_AS_DOCUMENTED.length + 6);
  });
});
