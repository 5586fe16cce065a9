import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CardEvent } from '../../src/events/card-event.ts';
import type { CardEventBus } from '../../src/events/card-event-bus.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import {
  leftover,
  type NotificationOverrides,
  notification,
  startWebhookReceiver,
  type TestWebhookReceiver,
} from '../support/fixtures.ts';

const CURRENT_SECRET = 'whsec_current_secret_0123456789';
const PREVIOUS_SECRET = 'whsec_previous_secret_012345678';
const TOLERANCE_S = 300;
const NOW_MS = Date.UTC(2026, 10, 21, 5, 1, 4);
const NOW_S = Math.floor(NOW_MS / 1000);

let receiver: TestWebhookReceiver;
let url: string;
let inner: CardEventBus;
let published: CardEvent[];
let logLines: string[];

beforeAll(async () => {
  receiver = await startWebhookReceiver({
    secrets: [CURRENT_SECRET, PREVIOUS_SECRET],
    toleranceS: TOLERANCE_S,
    nowMs: NOW_MS,
  });
  ({ url, inner, published, logLines } = receiver);
});
afterAll(() => receiver.close());
beforeEach(() => receiver.reset());

interface PostOptions {
  secret?: string;
  timestampS?: number;
  signature?: string | null;
  contentType?: string;
}

async function post(body: string | Buffer, options: PostOptions = {}) {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  const signature =
    options.signature === undefined
      ? signWebhookBody(body, options.secret ?? CURRENT_SECRET, options.timestampS ?? NOW_S)
      : options.signature;
  if (signature !== null) headers['vgs-signature'] = signature;
  const response = await request(url, { method: 'POST', headers, body });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

function postNotification(overrides: NotificationOverrides = {}, options: PostOptions = {}) {
  const body = notification(overrides);
  return { notification: body, response: post(JSON.stringify(body), options) };
}

/** The receiver's answer member for an invalid notification: `detail` names the rule, `pointer` the member. */
const invalidNotification = (detail: string, pointer: string) => ({
  status: '400',
  code: 'invalid-notification',
  detail,
  source: { pointer },
});

describe('POST /webhooks/card-events', () => {
  it('accepts a signed notification and publishes it to subscribers of its tenant only', async () => {
    const sandbox1 = inner.subscribe({ tenants: ['tntsandbox1'] });
    const sandbox2 = inner.subscribe({ tenants: ['tntsandbox2'] });
    try {
      const { notification, response } = postNotification();
      const { status, headers, text } = await response;
      expect(status).toBe(200);
      expect(headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(text)).toEqual({ data: { id: notification.id, status: 'accepted' } });

      const received = await sandbox1.next();
      expect(received.value).toMatchObject({
        id: notification.id,
        tenant: 'tntsandbox1',
        type: 'au_card.updated',
        cardId: 'CRDabcdefghijklmnopqrstuv',
        newAccountNumber: '510026******1001',
      });
      expect(published).toHaveLength(1);

      // The next event sandbox2 sees is its own tenant's, not the one above.
      const second = postNotification({ tenant: 'tntsandbox2' });
      expect((await second.response).status).toBe(200);
      expect((await sandbox2.next()).value?.id).toBe(second.notification.id);

      const accepted = logLines.map((line) => JSON.parse(line)).find((entry) => entry.outcome === 'accepted');
      expect(accepted).toMatchObject({
        level: 30,
        id: notification.id,
        tenant: 'tntsandbox1',
        type: 'au_card.updated',
      });
      expect(logLines.join('\n')).not.toContain('510026******1001');
      expect(logLines.join('\n')).not.toContain('details');
    } finally {
      await sandbox1.return?.();
      await sandbox2.return?.();
    }
  });

  it('publishes a repeated notification id once and answers duplicate', async () => {
    const body = JSON.stringify(notification());
    const id = JSON.parse(body).id;
    const first = await post(body);
    const second = await post(body, { timestampS: NOW_S + 1 });
    expect(JSON.parse(first.text)).toEqual({ data: { id, status: 'accepted' } });
    expect(second.status).toBe(200);
    expect(JSON.parse(second.text)).toEqual({ data: { id, status: 'duplicate' } });
    expect(published.map((event) => event.id)).toEqual([id]);
  });

  it('accepts a notification signed with a previous (rotated) secret', async () => {
    const { notification, response } = postNotification({}, { secret: PREVIOUS_SECRET });
    const { status, text } = await response;
    expect(status).toBe(200);
    expect(JSON.parse(text)).toEqual({ data: { id: notification.id, status: 'accepted' } });
  });

  it.each([
    ['bad-signature', { secret: 'whsec_unknown_secret_0123456789' }],
    ['bad-signature', { signature: `t=${NOW_S},v0=${'0'.repeat(64)}` }],
    ['missing-signature', { signature: null }],
    ['malformed-signature', { signature: 'v0=abc' }],
    ['malformed-signature', { signature: `t=now,v0=${'0'.repeat(64)}` }],
    ['stale-timestamp', { timestampS: NOW_S - TOLERANCE_S - 1 }],
    ['stale-timestamp', { timestampS: NOW_S + TOLERANCE_S + 1 }],
  ] as const)('refuses %s with 401 and publishes nothing (%o)', async (code, options) => {
    const { status, text } = await postNotification({}, options).response;
    expect(status).toBe(401);
    expect(JSON.parse(text).errors).toEqual([{ status: '401', code, detail: expect.any(String) }]);
    expect(published).toEqual([]);
    expect(logLines.map((line) => JSON.parse(line))).toMatchObject([
      { level: 40, reason: code, status: 401 },
    ]);
  });

  it('accepts timestamps exactly at the tolerance in both directions', async () => {
    expect((await postNotification({}, { timestampS: NOW_S - TOLERANCE_S }).response).status).toBe(200);
    expect((await postNotification({}, { timestampS: NOW_S + TOLERANCE_S }).response).status).toBe(200);
    expect(published).toHaveLength(2);
  });

  it('refuses a body that is not a signed notification of the same bytes', async () => {
    const body = JSON.stringify(notification());
    const signature = signWebhookBody(body, CURRENT_SECRET, NOW_S);
    const { status, text } = await post(body.replace('tntsandbox1', 'tntsandbox2'), { signature });
    expect(status).toBe(401);
    expect(JSON.parse(text).errors[0].code).toBe('bad-signature');
    expect(published).toEqual([]);
  });

  it('refuses a content type other than application/json with 415', async () => {
    const { status, text } = await postNotification({}, { contentType: 'text/plain' }).response;
    expect(status).toBe(415);
    expect(JSON.parse(text)).toEqual({
      errors: [
        {
          status: '415',
          code: 'unsupported-media-type',
          detail: 'The body must be sent as application/json',
        },
      ],
    });
    expect(
      (await postNotification({}, { contentType: 'application/json; charset=latin1' }).response).status,
    ).toBe(415);
    expect(published).toEqual([]);
    expect(
      (await postNotification({}, { contentType: 'Application/JSON; charset=UTF-8' }).response).status,
    ).toBe(200);
  });

  it('refuses a body over 64 KiB with 413, by Content-Length and while streaming', async () => {
    const big = JSON.stringify({ ...notification(), summary: 'x'.repeat(64 * 1024) });
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.text)).toEqual({
      errors: [{ status: '413', code: 'payload-too-large', detail: 'The body exceeds 65536 bytes' }],
    });

    const chunks = Array.from({ length: 20 }, () => Buffer.alloc(8 * 1024, 'x'));
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'vgs-signature': `t=${NOW_S},v0=${'0'.repeat(64)}` },
      body: Readable.from(chunks),
    });
    expect(response.statusCode).toBe(413);
    expect(response.headers['content-length']).toBeDefined();
    await response.body.text();
    expect(published).toEqual([]);
  });

  it('refuses malformed JSON with 400 without quoting it', async () => {
    const body = '{"id": "x", "details": "4111111111111111",';
    const { status, text } = await post(body);
    expect(status).toBe(400);
    expect(JSON.parse(text)).toEqual({
      errors: [{ status: '400', code: 'malformed-json', detail: 'The body is not valid UTF-8 JSON' }],
    });
    expect(text).not.toContain('4111');
    expect(logLines.join('\n')).not.toContain('4111');
    expect((await post(Buffer.from([0x7b, 0xff, 0x7d]))).status).toBe(400);
    expect(published).toEqual([]);
  });

  it('refuses a notification with a missing member', async () => {
    const { status, text } = await postNotification({ envelope: { tenant: undefined } }).response;
    expect(status).toBe(400);
    expect(JSON.parse(text)).toEqual({
      errors: [invalidNotification('tenant is required', '/tenant')],
    });
    expect(published).toEqual([]);
  });

  it('refuses members of the wrong length', async () => {
    const { status, text } = await postNotification({
      envelope: { description: 'Card account updater event', org_id: 'ACsandbox0000000000000012' },
      details: { card_id: 'CRDshort' },
    }).response;
    expect(status).toBe(400);
    expect(JSON.parse(text)).toEqual({
      errors: [
        invalidNotification('description must be a string of exactly 31 characters', '/description'),
        invalidNotification(
          'details.card_id must be a card id of 25 characters starting with CRD',
          '/details/card_id',
        ),
        invalidNotification('org_id must be a string of 24 characters', '/org_id'),
      ],
    });
    expect(published).toEqual([]);
  });

  it('refuses an unknown event kind', async () => {
    const { notification, response } = postNotification({ event: 'au_card.reissued' });
    const { status, text } = await response;
    expect(status).toBe(400);
    expect(JSON.parse(text).errors).toEqual([
      invalidNotification(
        'event must be one of au_card.updated, au_card.expired, au_card.closed, au_card.contact_cardholder_advice, au_card.non_participating, au_card.unknown, au_card.enrolled, au_card.opt_out',
        '/event',
      ),
    ]);
    const refused = JSON.parse(logLines[0]!);
    expect(refused).toMatchObject({
      level: 40,
      reason: 'invalid-notification',
      id: notification.id,
      tenant: 'tntsandbox1',
      type: 'au_card.reissued',
      paths: ['/event'],
    });
    expect(published).toEqual([]);
  });

  it('refuses an unmasked account number without echoing its digits', async () => {
    const pan = '5100260000391001';
    const { status, text } = await postNotification({ details: { new_account_number: pan } }).response;
    expect(status).toBe(400);
    expect(JSON.parse(text).errors).toEqual([
      invalidNotification(
        'details.new_account_number must be a masked account number of 16 characters showing at most the first six and last four digits',
        '/details/new_account_number',
      ),
    ]);
    expect(text).not.toContain(pan);
    expect(text).not.toContain('0000391');
    expect(logLines.join('\n')).not.toContain(pan);
    expect(logLines.join('\n')).not.toContain('0000391');
    expect(published).toEqual([]);
  });

  it('answers 405 to other methods', async () => {
    const response = await request(url, { method: 'GET' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(await response.body.json()).toEqual({
      errors: [{ status: '405', code: 'method-not-allowed', detail: 'Only POST is accepted here' }],
    });
  });

  it('answers 500 and publishes nothing when the bus fails, so the sender retries', async () => {
    const failing = leftover(
      await startWebhookReceiver({
        secrets: [CURRENT_SECRET],
        nowMs: NOW_MS,
        logLevel: 'silent',
        bus: {
          publish: () => Promise.reject(new Error('store unavailable')),
          subscribe: (filter, signal) => inner.subscribe(filter, signal),
        },
      }),
      (r) => r.close(),
    );
    const body = JSON.stringify(notification());
    const response = await request(failing.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'vgs-signature': signWebhookBody(body, CURRENT_SECRET, NOW_S),
      },
      body,
    });
    expect(response.statusCode).toBe(500);
    expect(await response.body.json()).toEqual({
      errors: [
        {
          status: '500',
          code: 'server-error',
          detail: 'The notification could not be processed; retry later',
        },
      ],
    });
  });
});
