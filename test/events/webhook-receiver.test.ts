import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CardEvent } from '../../src/events/card-event.ts';
import type { CardEventBus } from '../../src/events/card-event-bus.ts';
import { bodyDigestId } from '../../src/events/unmapped-notification.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import {
  CARD_INTERFACE_TEST_CARD_IDS,
  DOCUMENTED_V1_DETAILS,
  documentedV1Notification,
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

  it('reads the body as JSON whatever media type is declared (the signature authenticates it)', async () => {
    for (const contentType of [
      'text/plain',
      'application/json; charset=latin1',
      'Application/JSON; charset=UTF-8',
    ]) {
      const { notification, response } = postNotification({}, { contentType });
      const { status, text } = await response;
      expect(status).toBe(200);
      expect(JSON.parse(text)).toEqual({ data: { id: notification.id, status: 'accepted' } });
    }
    expect(published).toHaveLength(3);
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
    expect(published).toEqual([]);
  });

  it('keeps a signed body that is not UTF-8 as redacted bytes (base64), unattributed, and answers 200', async () => {
    // Latin-1 JSON: `é` is 0xe9, no UTF-8; a PAN and a security code inside.
    const latin1 = Buffer.from(
      '{"id":"nu-1","tenant":"tntsandbox1","summary":"caf\u00e9 4111111111111111","cvc":"737"}',
      'latin1',
    );
    const invalid = Buffer.concat([Buffer.from([0x7b, 0xff]), Buffer.from(' 4111111111111111}')]);
    const answers = [await post(latin1), await post(invalid), await post(latin1)];
    expect(answers.map(({ status, text }) => [status, JSON.parse(text).data.status])).toEqual([
      [200, 'unmapped'],
      [200, 'unmapped'],
      [200, 'duplicate'],
    ]);
    expect(receiver.unmapped).toEqual([
      {
        id: bodyDigestId(latin1),
        tenant: '',
        type: 'not-utf8',
        reason: 'not-utf8',
        timestamp: new Date(NOW_MS).toISOString(),
        body: Buffer.from(
          '{"id":"nu-1","tenant":"tntsandbox1","summary":"caf\u00e9 411111******1111","cvc":"[redacted]"}',
          'latin1',
        ).toString('base64'),
        truncated: false,
        bodyBytes: latin1.length,
        bodyEncoding: 'base64',
      },
      {
        id: bodyDigestId(invalid),
        tenant: '',
        type: 'not-utf8',
        reason: 'not-utf8',
        timestamp: new Date(NOW_MS).toISOString(),
        body: Buffer.from([0x7b, 0xff, ...Buffer.from(' 411111******1111}')]).toString('base64'),
        truncated: false,
        bodyBytes: invalid.length,
        bodyEncoding: 'base64',
      },
    ]);
    expect(published).toEqual([]);
    expect(logLines.join('\n')).not.toContain('4111111111111111');
  });

  it('accepts the documented v1 per-event subsets and cmp_au_card.* with a 52-character card id', async () => {
    const live = inner.subscribe({ tenants: ['tntsandbox1'] });
    try {
      const sent = [
        ...Object.keys(DOCUMENTED_V1_DETAILS).map((event) => documentedV1Notification(event)),
        notification({
          event: 'cmp_au_card.updated',
          cardId: CARD_INTERFACE_TEST_CARD_IDS['5100260000069201'],
        }),
        notification({
          event: 'cmp_au_card.enrollment_failed',
          cardId: CARD_INTERFACE_TEST_CARD_IDS['5100260000079200'],
          details: { reason_code: 'card-brand-not-supported' },
        }),
      ];
      for (const body of sent) {
        const { status, text } = await post(JSON.stringify(body));
        expect([status, JSON.parse(text)]).toEqual([200, { data: { id: body.id, status: 'accepted' } }]);
      }
      const received: CardEvent[] = [];
      for (const _ of sent) received.push((await live.next()).value as CardEvent);
      expect(received.map((event) => [event.id, event.type])).toEqual(
        sent.map((body) => [body.id, String(body.event).replace('cmp_au_card.', 'au_card.')]),
      );
      expect(received.at(-1)).toMatchObject({
        source: 'card_management',
        cardId: CARD_INTERFACE_TEST_CARD_IDS['5100260000079200'],
        failureReason: 'card-brand-not-supported',
      });
    } finally {
      await live.return?.();
    }
  });

  it('accepts members of any shape, keeps an unknown event kind and delivers it to its tenant', async () => {
    const live = inner.subscribe({ tenants: ['tntsandbox1'] });
    try {
      const { notification, response } = postNotification({
        event: 'au_card.reissued',
        timestamp: '2024-12-12T09:59:44.667670',
        envelope: {
          description: 'x'.repeat(2000),
          org_id: 'ACsandbox0000000000000012',
          unknown: [1, { a: null }],
        },
        details: { card_id: 'CRDshort', exp_month: 'December' },
      });
      const { status, text } = await response;
      expect([status, JSON.parse(text)]).toEqual([
        200,
        { data: { id: notification.id, status: 'accepted' } },
      ]);
      expect((await live.next()).value).toMatchObject({
        id: notification.id,
        type: 'other',
        event: 'au_card.reissued',
        cardId: 'CRDshort',
        timestamp: '2024-12-12T09:59:44.667670Z',
        orgId: 'ACsandbox0000000000000012',
      });
      expect(published[0]!.description).toHaveLength(1024);
      expect(published[0]).not.toHaveProperty('expMonth');
    } finally {
      await live.return?.();
    }
  });

  it('stores a notification it cannot map (no vault, not an object) redacted, answered 200 unmapped', async () => {
    const pan = '5100260000391001';
    const noTenant = notification({
      envelope: { tenant: undefined, summary: `card ${pan}`, cvv: '123' },
      details: { new_account_number: pan },
    });
    const first = await post(JSON.stringify(noTenant));
    expect([first.status, JSON.parse(first.text)]).toEqual([
      200,
      { data: { id: noTenant.id, status: 'unmapped' } },
    ]);
    const again = await post(JSON.stringify(noTenant), { timestampS: NOW_S + 1 });
    expect(JSON.parse(again.text)).toEqual({ data: { id: noTenant.id, status: 'duplicate' } });

    const array = `[${pan}, "not an object"]`;
    const second = await post(array);
    expect(second.status).toBe(200);
    const { id } = JSON.parse(second.text).data;
    expect(id).toMatch(/^body-sha256:[a-p]{64}$/);

    expect(receiver.unmapped).toHaveLength(2);
    expect(receiver.unmapped[0]).toMatchObject({
      id: noTenant.id,
      tenant: '',
      reason: 'no-tenant',
      event: 'au_card.updated',
      timestamp: new Date(NOW_MS).toISOString(),
      truncated: false,
    });
    expect(receiver.unmapped[1]).toMatchObject({
      id,
      tenant: '',
      reason: 'not-an-object',
      body: '["510026******1001","not an object"]',
    });
    const stored = JSON.parse(receiver.unmapped[0]!.body);
    expect(stored.cvv).toBe('[redacted]');
    expect(stored.summary).toBe('card 510026******1001');
    for (const text of [JSON.stringify(receiver.unmapped), first.text, second.text, logLines.join('\n')]) {
      expect(text).not.toContain(pan);
    }
    const warned = logLines.map((line) => JSON.parse(line)).find((entry) => entry.reason === 'no-tenant');
    expect(warned).toMatchObject({ level: 40, id: noTenant.id, outcome: 'unmapped' });
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

  it('answers 503 with Retry-After and publishes nothing when the event log cannot append', async () => {
    const failure = () => Promise.reject(new Error('OOM command not allowed when used memory > maxmemory'));
    const failing = leftover(
      await startWebhookReceiver({
        secrets: [CURRENT_SECRET],
        nowMs: NOW_MS,
        logLevel: 'silent',
        bus: { publish: failure, subscribe: (filter, signal) => inner.subscribe(filter, signal) },
        unmapped: { record: failure },
      }),
      (r) => r.close(),
    );
    for (const body of [JSON.stringify(notification()), '"not an object"']) {
      const response = await request(failing.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'vgs-signature': signWebhookBody(body, CURRENT_SECRET, NOW_S),
        },
        body,
      });
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
      expect(await response.body.json()).toEqual({
        errors: [
          {
            status: '503',
            code: 'service-unavailable',
            detail: 'The notification could not be stored; retry later',
          },
        ],
      });
    }
    expect(failing.published).toEqual([]);
  });
});
