import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  sandboxError,
  startReceiver,
  startSandbox,
  type TestSandbox,
  type Vault,
  verifiedBody,
  WAIT,
} from '../support/fixtures.ts';

const ENDPOINTS = '/sandbox/webhook-endpoints';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let t: TestSandbox;
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
beforeAll(async () => {
  t = await startSandbox({ webhookDelayMs: 10, retryScheduleMs: [0, 150, 300] });
});
afterAll(async () => {
  await t.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(answer?: (n: number) => number) {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

const enrol = (vault: Vault, pan?: string) => t.enrol(vault, pan);

describe('webhook endpoint registry over HTTP', () => {
  it('adds an endpoint with a generated secret shown once, lists and gets it without the secret', async () => {
    const target = await receiver();
    const token = await t.token('tntsandbox1');
    const created = await t.call('POST', ENDPOINTS, { token, body: { url: target.url } });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/json');
    const { id, url, createdAt, secret } = created.body.data;
    expect(Object.keys(created.body.data).sort()).toEqual(['createdAt', 'id', 'secret', 'url']);
    expect(id).toMatch(/^whe_[0-9A-Za-z]{22}$/);
    expect(url).toBe(target.url);
    expect(createdAt).toMatch(ISO_MS);
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(created.headers.get('location')).toBe(`${ENDPOINTS}/${id}`);

    const listed = await t.call('GET', ENDPOINTS, { token });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toContainEqual({ id, url, createdAt });
    expect(listed.text).not.toContain(secret);

    const one = await t.call('GET', `${ENDPOINTS}/${id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ data: { id, url, createdAt } });

    // The generated secret signs the notifications sent to the endpoint.
    const cardId = await enrol('tntsandbox1');
    const request = await target.arrival((details) => details.card_id === cardId);
    verifiedBody(request, secret);
  });

  it('keeps a given secret and signs with it; deliveries are listed per endpoint and per vault', async () => {
    const target = await receiver();
    const secret = 'my_own_secret_0123456789';
    const token = await t.token('tntsandbox2');
    const created = await t.call('POST', ENDPOINTS, { token, body: { url: target.url, secret } });
    expect(created.status).toBe(201);
    expect(created.body.data.secret).toBe(secret);
    const endpointId = created.body.data.id;

    const cardId = await enrol('tntsandbox2');
    const request = await target.arrival();
    expect(JSON.parse(JSON.parse(request.body.toString()).details).card_id).toBe(cardId);
    verifiedBody(request, secret);

    await expect.poll(() => t.sandbox.deliveries().map((d) => d.endpointId), WAIT).toContain(endpointId);
    const mine = await t.call('GET', `${ENDPOINTS}/${endpointId}/deliveries`, { token });
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual([
      {
        notificationId: JSON.parse(request.body.toString()).id,
        endpointId,
        vault: 'tntsandbox2',
        event: 'au_card.enrolled',
        attempt: 1,
        status: 200,
        at: expect.stringMatching(ISO_MS),
        outcome: 'delivered',
      },
    ]);

    const vaultListing = await t.call('GET', '/sandbox/webhook-deliveries', { token });
    expect(vaultListing.status).toBe(200);
    expect(vaultListing.body.data.length).toBeGreaterThan(0);
    expect(vaultListing.body.data.every((d: { vault: string }) => d.vault === 'tntsandbox2')).toBe(true);

    const adminListing = await t.call('GET', '/sandbox/webhook-deliveries');
    const vaults = new Set(adminListing.body.data.map((d: { vault: string }) => d.vault));
    expect(vaults).toEqual(new Set(['tntsandbox1', 'tntsandbox2']));
    expect(adminListing.body.data).toEqual(t.sandbox.deliveries());
  });

  it('shows endpoints registered in process, never their secret, and can remove them', async () => {
    const target = await receiver();
    const { id } = t.sandbox.registerWebhookEndpoint('tntsandbox1', {
      url: target.url,
      secret: 'in_process_secret_0123456789',
    });
    const token = await t.token('tntsandbox1');
    const listed = await t.call('GET', ENDPOINTS, { token });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(id);
    expect(listed.text).not.toContain('in_process_secret_0123456789');
    expect((await t.call('DELETE', `${ENDPOINTS}/${id}`, { token })).status).toBe(204);
  });

  it('keeps vaults apart: another vault sees 404 webhook-endpoint-not-found', async () => {
    const target = await receiver();
    const created = await t.call('POST', ENDPOINTS, {
      token: await t.token('tntsandbox1'),
      body: { url: target.url },
    });
    const id = created.body.data.id;
    const other = await t.token('tntsandbox2');
    for (const [method, path] of [
      ['GET', `${ENDPOINTS}/${id}`],
      ['DELETE', `${ENDPOINTS}/${id}`],
      ['GET', `${ENDPOINTS}/${id}/deliveries`],
    ] as const) {
      const response = await t.call(method, path, { token: other });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({
        errors: [
          sandboxError(404, 'webhook-endpoint-not-found', 'no webhook endpoint with this id in the vault'),
        ],
      });
    }
    const otherList = await t.call('GET', ENDPOINTS, { token: other });
    expect(otherList.body.data.map((e: { id: string }) => e.id)).not.toContain(id);
  });

  it('removes an endpoint: 204, then 404; its pending retry ends failed and nothing more is sent', async () => {
    const target = await receiver(() => 500);
    const token = await t.token('tntsandbox1');
    const created = await t.call('POST', ENDPOINTS, { token, body: { url: target.url } });
    const id = created.body.data.id;
    await enrol('tntsandbox1', '4000210000692001');
    await expect.poll(() => t.sandbox.deliveries().map((d) => d.endpointId), WAIT).toContain(id);

    const removed = await t.call('DELETE', `${ENDPOINTS}/${id}`, { token });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await t.call('DELETE', `${ENDPOINTS}/${id}`, { token })).status).toBe(404);
    expect((await t.call('GET', `${ENDPOINTS}/${id}`, { token })).status).toBe(404);
    const listed = await t.call('GET', ENDPOINTS, { token });
    expect(listed.body.data.map((e: { id: string }) => e.id)).not.toContain(id);

    // Quiet window: the removed endpoint's retry was due 150 ms after the first attempt (retry schedule
    // [0, 150, 300]); nothing can announce that a request did not come, so 400 ms later none may have.
    await sleep(400);
    expect(target.received).toHaveLength(1);
    const records = t.sandbox.deliveries().filter((d) => d.endpointId === id);
    expect(records.map((r) => [r.attempt, r.status, r.error, r.outcome])).toEqual([
      [1, 500, undefined, 'retrying'],
      [2, undefined, 'endpoint-removed', 'failed'],
    ]);
    const vaultListing = await t.call('GET', '/sandbox/webhook-deliveries', { token });
    expect(vaultListing.body.data.filter((d: { endpointId: string }) => d.endpointId === id)).toEqual(
      records,
    );
  });

  it('refuses a URL already registered in the vault with 409 conflict', async () => {
    const target = await receiver();
    const token = await t.token('tntsandbox1');
    expect((await t.call('POST', ENDPOINTS, { token, body: { url: target.url } })).status).toBe(201);
    const again = await t.call('POST', ENDPOINTS, { token, body: { url: target.url } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      errors: [
        sandboxError(409, 'conflict', 'an endpoint with this url is already registered in the vault', '/url'),
      ],
    });
    // Another vault may register the same URL.
    const other = await t.call('POST', ENDPOINTS, {
      token: await t.token('tntsandbox2'),
      body: { url: target.url },
    });
    expect(other.status).toBe(201);
  });
});

describe('webhook endpoint registry errors', () => {
  it.each([
    [{}, '/url'],
    [{ url: 'ftp://example.com/hook' }, '/url'],
    [{ url: '/relative/hook' }, '/url'],
    [{ url: 'https://user:pass@example.com/hook' }, '/url'],
    [{ url: 'https://example.com/hook#part' }, '/url'],
    [{ url: 42 }, '/url'],
    [{ url: 'https://example.com/hook', secret: 'short' }, '/secret'],
    [{ url: 'https://example.com/hook', secret: 'has spaces in the secret' }, '/secret'],
  ])('400 bad-request for %j at %s', async (body, pointer) => {
    const response = await t.call('POST', ENDPOINTS, { token: await t.token('tntsandbox1'), body });
    expect(response.status).toBe(400);
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors[0]).toMatchObject({
      status: '400',
      code: 'bad-request',
      source: { pointer },
    });
  });

  it('415 for another media type, 401 without a token, 403 without the scope', async () => {
    const token = await t.token('tntsandbox1');
    const wrongType = await t.call('POST', ENDPOINTS, {
      token,
      body: 'url=https://example.com',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.errors[0].code).toBe('unsupported-media-type');

    const anonymous = await t.call('GET', ENDPOINTS);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="sandbox"');

    const readOnly = await t.token('tntsandbox1', 'cards:read');
    const forbidden = await t.call('POST', ENDPOINTS, {
      token: readOnly,
      body: { url: 'https://example.com/h' },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.errors[0].detail).toBe('the access token lacks the scope cards:write');
    expect((await t.call('GET', ENDPOINTS, { token: readOnly })).status).toBe(200);

    const attributesOnly = await t.token('tntsandbox1', 'card-attributes:basic');
    expect((await t.call('GET', '/sandbox/webhook-deliveries', { token: attributesOnly })).status).toBe(403);
    const bad = await t.call('GET', '/sandbox/webhook-deliveries', { token: 'not-a-token' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});
