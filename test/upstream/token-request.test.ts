import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamHttp, type UpstreamHttp } from '../../src/upstream/http.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import { CREDENTIALS, captureLogger, rejectionOf } from '../support/fixtures.ts';

/**
 * The token request as the provider documents it (sandbox contract §8: `client_id`, `client_secret`
 * and `grant_type=client_credentials` form fields, no `scope`; 20-minute tokens) and the token
 * provider's single flight and backoff per vault against a failing token endpoint (issue 20 item 4),
 * on a scripted node:http token endpoint that records what it receives.
 */

interface TokenRequestSeen {
  authorization: string | undefined;
  contentType: string | undefined;
  form: Record<string, string>;
}

let server: Server;
let tokenUrl: string;
const seen: TokenRequestSeen[] = [];
/** 200 with a fresh 1200 s token, or the 503 of a token endpoint that is down. */
let answer: 'token' | 'unavailable' = 'token';

function tokenEndpoint(req: IncomingMessage, res: ServerResponse, body: string) {
  seen.push({
    authorization: req.headers.authorization,
    contentType: req.headers['content-type'],
    form: Object.fromEntries(new URLSearchParams(body)),
  });
  const [status, payload] =
    answer === 'token'
      ? [200, { access_token: `token-${seen.length}`, token_type: 'Bearer', expires_in: 1200 }]
      : [503, { error: 'temporarily_unavailable' }];
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => tokenEndpoint(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

let http: UpstreamHttp | undefined;
afterEach(async () => {
  seen.length = 0;
  answer = 'token';
  await http?.close();
  http = undefined;
});

function provider(options: Partial<ConstructorParameters<typeof AccessTokenProvider>[0]> = {}) {
  http = createUpstreamHttp({ timeoutMs: 2_000, logger: captureLogger().logger });
  return new AccessTokenProvider({ tokenUrl, credentials: CREDENTIALS, http, ...options });
}

describe('the token request', () => {
  it('sends client_id, client_secret and grant_type as form fields, no scope and no Authorization (documented)', async () => {
    const tokens = provider();
    expect(await tokens.getToken('tntsandbox1')).toBe('token-1');
    expect(seen).toEqual([
      {
        authorization: undefined,
        contentType: 'application/x-www-form-urlencoded',
        form: {
          client_id: 'sandbox-client-1',
          client_secret: 'sandbox-secret-1',
          grant_type: 'client_credentials',
        },
      },
    ]);
  });

  it('sends HTTP Basic and only grant_type (and the configured scope) with clientAuth basic', async () => {
    const tokens = provider({ clientAuth: 'basic', scope: 'cards:read network-tokens:read' });
    await tokens.getToken('tntsandbox2');
    expect(seen).toEqual([
      {
        authorization: `Basic ${Buffer.from('sandbox-client-2:sandbox-secret-2').toString('base64')}`,
        contentType: 'application/x-www-form-urlencoded',
        form: { grant_type: 'client_credentials', scope: 'cards:read network-tokens:read' },
      },
    ]);
  });

  it('keeps a 20-minute token for 19 minutes, then asks again', async () => {
    let now = 1_000_000;
    const tokens = provider({ clock: () => now });
    expect(await tokens.getToken('tntsandbox1')).toBe('token-1');
    now += 19 * 60_000 - 1;
    expect(await tokens.getToken('tntsandbox1')).toBe('token-1');
    now += 1;
    expect(await tokens.getToken('tntsandbox1')).toBe('token-2');
    expect(seen).toHaveLength(2);
  });
});

describe('single flight and backoff per vault', () => {
  it('50 concurrent callers share one failing request; the vault then backs off 0.5-1 s, 1-2 s, 2-4 s … up to 30 s', async () => {
    answer = 'unavailable';
    let now = 1_000_000;
    // The jitter's lowest draw: each wait is exactly half its ceiling.
    const tokens = provider({ clock: () => now, random: () => 0 });

    const first = await Promise.all(
      Array.from({ length: 50 }, () => rejectionOf(tokens.getToken('tntsandbox1'))),
    );
    expect(new Set(first).size).toBe(1);
    expect(first[0]).toMatchObject({ area: 'oauth', status: 503, code: 'temporarily_unavailable' });
    expect(seen).toHaveLength(1);

    // Ceilings 1, 2, 4, 8, 16, 30, 30 s: waits of half each with random() = 0.
    const waits = [500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000];
    for (const [index, waitMs] of waits.entries()) {
      now += waitMs - 1;
      const during = await Promise.all(
        Array.from({ length: 50 }, () => rejectionOf(tokens.getToken('tntsandbox1'))),
      );
      expect(during.every((error) => error === during[0])).toBe(true);
      expect(seen).toHaveLength(index + 1);
      now += 1;
      await Promise.all(Array.from({ length: 50 }, () => rejectionOf(tokens.getToken('tntsandbox1'))));
      expect(seen).toHaveLength(index + 2);
    }
    // The other vault has its own state: one request, no wait inherited.
    await rejectionOf(tokens.getToken('tntsandbox2'));
    expect(seen.filter((request) => request.form.client_id === 'sandbox-client-2')).toHaveLength(1);
  });

  it('draws each wait between half the ceiling and the ceiling, and resets after a success', async () => {
    answer = 'unavailable';
    let now = 1_000_000;
    // The jitter's highest draw: each wait is its whole ceiling.
    const tokens = provider({ clock: () => now, random: () => 0.999_999_999, backoff: { initialMs: 200 } });
    await rejectionOf(tokens.getToken('tntsandbox1'));
    now += 199;
    await rejectionOf(tokens.getToken('tntsandbox1'));
    expect(seen).toHaveLength(1);
    now += 1;
    await rejectionOf(tokens.getToken('tntsandbox1'));
    expect(seen).toHaveLength(2);

    answer = 'token';
    now += 400;
    expect(await tokens.getToken('tntsandbox1')).toBe('token-3');
    tokens.invalidate('tntsandbox1', 'token-3');
    answer = 'unavailable';
    // After the success the next failure waits the first ceiling (200 ms) again, not the third (800 ms).
    await rejectionOf(tokens.getToken('tntsandbox1'));
    expect(seen).toHaveLength(4);
    now += 200;
    await rejectionOf(tokens.getToken('tntsandbox1'));
    expect(seen).toHaveLength(5);
  });
});
