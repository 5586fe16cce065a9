import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  isNetworkTokenNotification,
  type NetworkTokenEvent,
  parseNetworkTokenNotification,
} from '../../src/events/network-token-event.ts';
import type { NetworkTokenEventSink } from '../../src/events/webhook-receiver.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import { integrationIdOf } from '../../src/sandbox/webhooks.ts';
import {
  documentedNetworkTokenNotification,
  luhnWindows,
  type NetworkTokenNotificationOverrides,
  networkTokenNotification,
  startWebhookReceiver,
  type TestWebhookReceiver,
} from '../support/fixtures.ts';

const TOK_ALIAS = 'tok_sandbox_AbCdEfGhIjKlMnOpQrStUv';
const CREATED_AT_MS = Date.UTC(2026, 10, 21, 5, 1, 2, 345);
const OCCURRED_AT_MS = Date.UTC(2026, 10, 21, 5, 1, 3, 456);
// A sandbox test card (contract §5.5), which must never reach an event, a log line or an answer.
const PAN = '5100260000895001';

/** A network token notification exactly as the embedded sandbox sends it, at fixed instants, then overridden. */
const tokenNotification = (overrides: NetworkTokenNotificationOverrides = {}) =>
  networkTokenNotification({
    panAlias: TOK_ALIAS,
    createdAtMs: CREATED_AT_MS,
    occurredAtMs: OCCURRED_AT_MS,
    ...overrides,
  });

function eventOf(body: unknown): NetworkTokenEvent {
  const result = parseNetworkTokenNotification(body);
  if (!result.ok) throw new Error(`expected the notification to map, got ${result.reason}`);
  return result.event;
}

describe('parseNetworkTokenNotification', () => {
  it("maps the provider's documented network_token.updated example literally (details an object)", () => {
    const body = documentedNetworkTokenNotification();
    const event = eventOf(body);
    expect(event).toEqual({
      id: 'd82e56a0-3b6e-417a-a7cb-674f84d806e3',
      type: 'network_token.updated',
      event: 'network_token.updated',
      source: 'network_tokens',
      tenant: 'tntt0fzksdr',
      panAlias: '5114103XX3542293',
      state: 'CARD_UPDATED',
      networkTokenId: '0e28d9f6-d8a3-43ca-9bd8-b99c477c2b4c',
      networkTokenLast4: '5022',
      expiresAt: '2027-10',
      cardBin: '511410',
      cardLast4: '2293',
      cardExpMonth: 12,
      cardExpYear: 2025,
      timestamp: '2024-12-16T18:30:25.383Z',
      createdAt: '2024-12-12T09:59:44.667670Z',
      updatedAt: '2024-12-12T09:59:44.667670Z',
      fingerprint: '2c365dba9f2bffbc16b2a487d6e95be8f693c3de5c049bbc3f87b4fdc2ab5f24',
      grouping: 'every_single',
      occurrence: 1,
      orgId: 'ACgzdqxQb4RyPyWsw97DVDDD',
      integrationId: 'INcBi2ziCXeweqC6VvDx6keX',
      summary: 'A Network Token for 5114103XX3542293 pan alias has been updated in vault tntt0fzksdr',
      description: 'Network Token updated',
    });
    expect(Object.isFrozen(event)).toBe(true);
  });

  it('reads the vault from details.tenant_id when the envelope names none, and cmp_network_token.updated', () => {
    const event = eventOf(
      documentedNetworkTokenNotification({ tenant: undefined, event: 'cmp_network_token.updated' }),
    );
    expect([event.tenant, event.type, event.source]).toEqual([
      'tntt0fzksdr',
      'network_token.updated',
      'card_management',
    ]);
    expect(isNetworkTokenNotification({ event: 'cmp_network_token.updated' })).toBe(true);
  });

  it("maps the specification reading's network_token.active (details a JSON string) as before", () => {
    const body = tokenNotification();
    expect(eventOf(body)).toEqual({
      id: body.id,
      type: 'network_token.active',
      event: 'network_token.active',
      source: 'network_tokens',
      tenant: 'tntsandbox1',
      panAlias: TOK_ALIAS,
      state: 'ACTIVE',
      networkTokenLast4: '4821',
      expiresAt: '2030-12',
      occurredAt: '2026-11-21T05:01:03.456Z',
      createdAt: '2026-11-21T05:01:02Z',
      timestamp: '2026-11-21T05:01:03.456Z',
      fingerprint: body.fingerprint,
      grouping: 'every_single',
      occurrence: 1,
      orgId: body.org_id,
      integrationId: integrationIdOf('tntsandbox1'),
      summary: `Network token ${TOK_ALIAS} network_token.active`,
      description: 'Network token state change sent',
    });
    expect(eventOf(tokenNotification({ state: 'SUSPENDED' })).type).toBe('network_token.suspended');
  });

  it('keeps unknown kinds and states, and maps the sandbox documented form', () => {
    const used = eventOf(documentedNetworkTokenNotification({ event: 'network_token.used' }));
    expect([used.type, used.event]).toEqual(['other', 'network_token.used']);
    const sandbox = eventOf(tokenNotification({ wire: 'documented' }));
    expect([sandbox.type, sandbox.state, sandbox.panAlias, sandbox.expiresAt, sandbox.cardBin]).toEqual([
      'network_token.updated',
      'ACTIVE',
      TOK_ALIAS,
      '2030-12',
      '510026',
    ]);
  });

  it('never keeps the token number or a card number, and leaves out members it cannot use', () => {
    const body = documentedNetworkTokenNotification({
      details: {
        ...(documentedNetworkTokenNotification().details as Record<string, unknown>),
        network_token: PAN,
        pan_alias: PAN,
        card_bin: 'abc',
        state: { nested: true },
        created_at: 'not a time',
      },
    });
    const event = eventOf(body);
    expect(JSON.stringify(event)).not.toContain(PAN);
    expect(luhnWindows(JSON.stringify(event), false)).toEqual([]);
    expect(event.panAlias).toBe('510026******5001');
    expect(event).not.toHaveProperty('cardBin');
    expect(event).not.toHaveProperty('state');
    expect(event).not.toHaveProperty('createdAt');
  });

  it('cannot map a body without a vault or an id', () => {
    expect(
      parseNetworkTokenNotification(documentedNetworkTokenNotification({ tenant: undefined, details: {} })),
    ).toEqual({
      ok: false,
      reason: 'no-tenant',
    });
    expect(parseNetworkTokenNotification(documentedNetworkTokenNotification({ id: 7 }))).toEqual({
      ok: false,
      reason: 'no-id',
    });
    expect(isNetworkTokenNotification([{ event: 'network_token.active' }])).toBe(false);
    expect(isNetworkTokenNotification({ event: 'au_card.updated' })).toBe(false);
  });
});

describe('webhook receiver dispatch of network token notifications', () => {
  const SECRET = 'whsec_current_secret_0123456789';
  const NOW_MS = OCCURRED_AT_MS + 1_000;
  let receiver: TestWebhookReceiver;
  let failing: TestWebhookReceiver;

  async function post(url: string, body: unknown) {
    const text = JSON.stringify(body);
    const response = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'vgs-signature': signWebhookBody(text, SECRET, Math.floor(NOW_MS / 1000)),
      },
      body: text,
    });
    return {
      status: response.statusCode,
      retryAfter: response.headers['retry-after'],
      body: (await response.body.json()) as Record<string, unknown>,
    };
  }

  const failingSink: NetworkTokenEventSink = {
    publish: () => Promise.reject(new Error('redis: OOM command not allowed')),
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver({ secrets: [SECRET], nowMs: NOW_MS });
    failing = await startWebhookReceiver({ secrets: [SECRET], nowMs: NOW_MS, networkTokens: failingSink });
  });
  beforeEach(() => receiver.reset());
  afterAll(async () => {
    await receiver.close();
    await failing.close();
  });

  it('publishes the documented example to networkTokens once, a redelivery answered duplicate', async () => {
    const body = documentedNetworkTokenNotification({ tenant: 'tntsandbox1' });
    const live = receiver.networkTokenBus.subscribe({ tenants: ['tntsandbox1'] });
    try {
      expect(await post(receiver.url, body)).toEqual({
        status: 200,
        retryAfter: undefined,
        body: { data: { id: body.id, status: 'accepted' } },
      });
      const received = await live.next();
      expect(received.value).toEqual(
        expect.objectContaining({ id: body.id, state: 'CARD_UPDATED', tenant: 'tntsandbox1' }),
      );
      expect((await post(receiver.url, body)).body).toEqual({ data: { id: body.id, status: 'duplicate' } });
      expect(receiver.networkTokenEvents.map((event) => event.id)).toEqual([body.id]);
      expect(receiver.published).toEqual([]);
    } finally {
      await live.return?.();
    }
  });

  it('answers 503 with Retry-After when the log cannot append, so the sender retries', async () => {
    const body = tokenNotification({ details: { pan_alias: `${PAN}` } });
    const answer = await post(failing.url, body);
    expect(answer).toEqual({
      status: 503,
      retryAfter: '5',
      body: {
        errors: [
          {
            status: '503',
            code: 'service-unavailable',
            detail: 'The notification could not be stored; retry later',
          },
        ],
      },
    });
    expect(failing.logLines.join('')).toContain('"reason":"store-failed"');
    expect(luhnWindows(failing.logLines.join('').replace(/"time":\d+/g, ''), false)).toEqual([]);
  });
});
