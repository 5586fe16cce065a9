import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CARD_EVENT_TYPES } from '../../src/events/card-event.ts';
import { createInMemoryCardEventBus } from '../../src/events/card-event-bus.ts';
import {
  isNetworkTokenNotification,
  NETWORK_TOKEN_EVENT_TYPES,
  type NetworkTokenEvent,
  parseNetworkTokenNotification,
} from '../../src/events/network-token-event.ts';
import {
  CARD_EVENTS_WEBHOOK_PATH,
  createWebhookReceiver,
  type NetworkTokenEventSink,
} from '../../src/events/webhook-receiver.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import { integrationIdOf } from '../../src/sandbox/webhooks.ts';
import { type NetworkTokenNotificationOverrides, networkTokenNotification } from '../support/fixtures.ts';

const TOK_ALIAS = 'tok_sandbox_AbCdEfGhIjKlMnOpQrStUv';
const CREATED_AT_MS = Date.UTC(2026, 10, 21, 5, 1, 2, 345);
const OCCURRED_AT_MS = Date.UTC(2026, 10, 21, 5, 1, 3, 456);
// A sandbox test card (contract §5.5), which must never reach an issue, a log line or an answer.
const PAN = '5100260000895001';

/** A network token notification exactly as the embedded sandbox sends it, at fixed instants, then overridden. */
const tokenNotification = (overrides: NetworkTokenNotificationOverrides = {}) =>
  networkTokenNotification({
    panAlias: TOK_ALIAS,
    createdAtMs: CREATED_AT_MS,
    occurredAtMs: OCCURRED_AT_MS,
    ...overrides,
  });

function issuesOf(body: unknown) {
  const result = parseNetworkTokenNotification(body);
  if (result.ok) throw new Error('expected the notification to be refused');
  return result.issues;
}

/** The issues of a table of JSON pointer → message, as `{ path, message }` in the table's order. */
const issuesAt = (messages: Record<string, string>) =>
  Object.entries(messages).map(([path, message]) => ({ path, message }));

const PAN_ALIAS_MESSAGE =
  'details.pan_alias must be a PAN alias (tok_ followed by up to 124 letters, digits or underscores, or a format-preserving alias), never a card number';

describe('parseNetworkTokenNotification', () => {
  it('maps the sandbox notification of an ACTIVE token to a frozen NetworkTokenEvent', () => {
    const body = tokenNotification();
    const result = parseNetworkTokenNotification(body);
    expect(result).toEqual({
      ok: true,
      event: {
        id: body.id as string,
        type: 'network_token.active',
        tenant: 'tntsandbox1',
        panAlias: TOK_ALIAS,
        state: 'ACTIVE',
        networkTokenLast4: '4821',
        expiresAt: '2030-12',
        occurredAt: '2026-11-21T05:01:03.456Z',
        createdAt: '2026-11-21T05:01:02Z',
        timestamp: '2026-11-21T05:01:03.456Z',
        fingerprint: body.fingerprint as string,
        grouping: 'every_single',
        occurrence: 1,
        orgId: 'ACsandbox000000000000001',
        integrationId: integrationIdOf('tntsandbox1'),
        summary: `Network token ${TOK_ALIAS} network_token.active`,
        description: 'Network token state change sent',
      } satisfies NetworkTokenEvent,
    });
    if (result.ok) expect(Object.isFrozen(result.event)).toBe(true);
  });

  it('maps network_token.suspended and accepts a format-preserving alias', () => {
    const result = parseNetworkTokenNotification(
      tokenNotification({ state: 'SUSPENDED', details: { pan_alias: '510026Ab3x9Kq5002' } }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event).toMatchObject({
      type: 'network_token.suspended',
      state: 'SUSPENDED',
      panAlias: '510026Ab3x9Kq5002',
    });
  });

  it('leaves out optional members that are absent or null and ignores unknown ones (a card_id included)', () => {
    const result = parseNetworkTokenNotification(
      tokenNotification({
        envelope: { description: undefined, summary: null, producer: undefined, extra: 1 },
        details: { occurred_at: null, card_id: 'CRDabcdefghijklmnopqrstuv' },
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect('description' in result.event).toBe(false);
    expect('summary' in result.event).toBe(false);
    expect('occurredAt' in result.event).toBe(false);
    expect('cardId' in result.event).toBe(false);
  });

  it('reports missing members as required', () => {
    expect(issuesOf(tokenNotification({ envelope: { fingerprint: undefined } }))).toEqual([
      { path: '/fingerprint', message: 'fingerprint is required' },
    ]);
    expect(issuesOf(tokenNotification({ details: { pan_alias: undefined, state: null } }))).toEqual([
      { path: '/details/pan_alias', message: 'details.pan_alias is required' },
      { path: '/details/state', message: 'details.state is required' },
    ]);
    expect(issuesOf(tokenNotification({ envelope: { details: undefined } }))).toEqual([
      { path: '/details', message: 'details is required' },
    ]);
  });

  it('refuses the card kinds and unknown network token kinds', () => {
    for (const event of ['network_token.deleted', 'network_token.', CARD_EVENT_TYPES[0]]) {
      expect(issuesOf(tokenNotification({ envelope: { event } }))).toEqual([
        { path: '/event', message: `event must be one of ${NETWORK_TOKEN_EVENT_TYPES.join(', ')}` },
      ]);
    }
  });

  it('checks the envelope as for card notifications, with the same pointers and messages', () => {
    expect(
      issuesOf(
        tokenNotification({
          envelope: {
            id: '1234',
            timestamp: '2026-11-21T05:01:03Z',
            description: 'Network token state change',
            fingerprint: 'A'.repeat(64),
            grouping: 'sometimes',
            integration_id: 'short',
            occurrence: 0,
            org_id: 'ACsandbox',
            producer: { application_protocol: 'tcp' },
            scope: 'card',
            tenant: 'tntsandbox10',
          },
        }),
      ),
    ).toEqual(
      issuesAt({
        '/id': 'id must be a UUID of 36 characters',
        '/timestamp': 'timestamp must be an ISO 8601 timestamp of 24 to 26 characters',
        '/description': 'description must be a string of exactly 31 characters',
        '/fingerprint': 'fingerprint must be a SHA-256 hash of 64 lowercase hexadecimal characters',
        '/grouping': 'grouping must be one of exp_repeat, every_single, high_rate',
        '/integration_id': 'integration_id must be a Base62 string of 24 characters',
        '/occurrence': 'occurrence must be an integer from 1 to 9',
        '/org_id': 'org_id must be a string of 24 characters',
        '/producer/application_protocol':
          'producer.application_protocol must be a string of 4 to 5 characters',
        '/scope': 'scope must be a string of 5 characters',
        '/tenant': 'tenant must be a vault id of 11 letters or digits',
      }),
    );
  });

  it('reports each malformed details member with its pointer', () => {
    expect(
      issuesOf(
        tokenNotification({
          details: {
            state: 'DELETED',
            network_token_last4: '48a1',
            expires_at: '2030-13',
            occurred_at: 'yesterday',
            created_at: '2026-11-21T05:01:02.345Z',
          },
        }),
      ),
    ).toEqual(
      issuesAt({
        '/details/state': 'details.state must be one of ACTIVE, SUSPENDED',
        '/details/network_token_last4': 'details.network_token_last4 must be a string of 4 digits',
        '/details/expires_at': 'details.expires_at must be a YYYY-MM token expiry with a month from 01 to 12',
        '/details/occurred_at': 'details.occurred_at must be an ISO 8601 timestamp of 24 to 26 characters',
        '/details/created_at':
          'details.created_at must be a UTC timestamp of 20 characters (YYYY-MM-DDTHH:mm:ssZ)',
      }),
    );
    for (const last4 of ['482', '48211', 4821]) {
      expect(issuesOf(tokenNotification({ details: { network_token_last4: last4 } }))).toEqual([
        {
          path: '/details/network_token_last4',
          message: 'details.network_token_last4 must be a string of 4 digits',
        },
      ]);
    }
    for (const expiresAt of ['12/30', '2030-1', '203012']) {
      expect(issuesOf(tokenNotification({ details: { expires_at: expiresAt } })).map((i) => i.path)).toEqual([
        '/details/expires_at',
      ]);
    }
  });

  it('refuses a state other than the one the event names', () => {
    expect(issuesOf(tokenNotification({ details: { state: 'SUSPENDED' } }))).toEqual([
      {
        path: '/details/state',
        message: 'details.state must be ACTIVE, the state event network_token.active reports',
      },
    ]);
    expect(issuesOf(tokenNotification({ state: 'SUSPENDED', details: { state: 'ACTIVE' } }))).toEqual([
      {
        path: '/details/state',
        message: 'details.state must be SUSPENDED, the state event network_token.suspended reports',
      },
    ]);
  });

  it('refuses a plain card number or any other non-alias as pan_alias without echoing it', () => {
    const values = [
      PAN, // a plain PAN
      '510026******5001', // a masked number
      '5100260000895', // digits only, no letter
      'tok_', // nothing after the prefix
      `tok_${'a'.repeat(125)}`, // too long
      'tok_sandbox_abc-def', // not an alias character
      '',
    ];
    for (const value of values) {
      const issues = issuesOf(tokenNotification({ details: { pan_alias: value } }));
      expect(issues).toEqual([{ path: '/details/pan_alias', message: PAN_ALIAS_MESSAGE }]);
      // '' and 'tok_' are substrings of any message; every other value must not appear.
      if (value.length > 4) expect(JSON.stringify(issues)).not.toContain(value);
      expect(JSON.stringify(issues)).not.toContain('0089');
    }
    expect(issuesOf(tokenNotification({ details: { pan_alias: Number(PAN) } }))).toEqual([
      { path: '/details/pan_alias', message: PAN_ALIAS_MESSAGE },
    ]);
  });

  it('refuses details that are not a JSON object string without quoting them', () => {
    for (const details of [`{"pan_alias": ${PAN}`, '[1,2]', '"text"', { pan_alias: TOK_ALIAS }]) {
      const issues = issuesOf(tokenNotification({ envelope: { details } }));
      expect(issues).toEqual([{ path: '/details', message: 'details must be a JSON-encoded object string' }]);
      expect(JSON.stringify(issues)).not.toContain(PAN);
    }
  });

  it('refuses a body that is not an object', () => {
    for (const body of [null, 42, 'text', [1]]) {
      expect(issuesOf(body)).toEqual([{ path: '', message: 'the notification must be a JSON object' }]);
    }
  });
});

describe('isNetworkTokenNotification', () => {
  it('is true for an object whose event starts with network_token.', () => {
    expect(isNetworkTokenNotification(tokenNotification())).toBe(true);
    expect(isNetworkTokenNotification({ event: 'network_token.anything' })).toBe(true);
    expect(isNetworkTokenNotification({ event: 'au_card.updated' })).toBe(false);
    expect(isNetworkTokenNotification({ event: 42 })).toBe(false);
    expect(isNetworkTokenNotification([{ event: 'network_token.active' }])).toBe(false);
    expect(isNetworkTokenNotification(null)).toBe(false);
  });
});

describe('webhook receiver dispatch of network token notifications', () => {
  const SECRET = 'whsec_current_secret_0123456789';
  const NOW_MS = OCCURRED_AT_MS + 1_000;
  const logLines: string[] = [];
  const published: NetworkTokenEvent[] = [];
  const cardBus = createInMemoryCardEventBus();
  let failNext = false;
  const sink: NetworkTokenEventSink = {
    async publish(event) {
      if (failNext) {
        failNext = false;
        throw new Error('hub unavailable');
      }
      if (published.some((seen) => seen.id === event.id)) return 'duplicate';
      published.push(event);
      return 'published';
    },
  };
  const servers: Server[] = [];
  let withHub: string;
  let withoutHub: string;

  async function listen(networkTokens?: NetworkTokenEventSink): Promise<string> {
    const receiver = createWebhookReceiver({
      secrets: [SECRET],
      toleranceS: 300,
      logger: createLogger({
        level: 'info',
        name: 'test',
        destination: { write: (line: string) => logLines.push(line) },
      }),
      bus: cardBus,
      ...(networkTokens ? { networkTokens } : {}),
      now: () => NOW_MS,
    });
    const server = createServer((req, res) => void receiver(req, res));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}${CARD_EVENTS_WEBHOOK_PATH}`;
  }

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
    return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    withHub = await listen(sink);
    withoutHub = await listen();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });

  it('publishes a valid notification to networkTokens once, acknowledging a redelivery as duplicate', async () => {
    const body = tokenNotification();
    expect(await post(withHub, body)).toEqual({
      status: 200,
      body: { data: { id: body.id, status: 'accepted' } },
    });
    expect(await post(withHub, body)).toEqual({
      status: 200,
      body: { data: { id: body.id, status: 'duplicate' } },
    });
    expect(published.map((event) => event.id)).toEqual([body.id]);
    const accepted = logLines.map((line) => JSON.parse(line)).find((l) => l.id === body.id);
    expect(accepted).toMatchObject({
      msg: 'network token notification accepted',
      tenant: 'tntsandbox1',
      type: 'network_token.active',
      panAlias: TOK_ALIAS,
    });
  });

  it('refuses an invalid network token notification with 400 invalid-notification, never echoing a PAN', async () => {
    const count = published.length;
    const answer = await post(withHub, tokenNotification({ details: { pan_alias: PAN } }));
    expect(answer).toEqual({
      status: 400,
      body: {
        errors: [
          {
            status: '400',
            code: 'invalid-notification',
            detail: PAN_ALIAS_MESSAGE,
            source: { pointer: '/details/pan_alias' },
          },
        ],
      },
    });
    expect(published).toHaveLength(count);
    expect(logLines.join('\n')).not.toContain(PAN);
  });

  it('answers 500 server-error when publishing fails, so the sender retries', async () => {
    failNext = true;
    const answer = await post(withHub, tokenNotification());
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({
      errors: [
        {
          status: '500',
          code: 'server-error',
          detail: 'The notification could not be processed; retry later',
        },
      ],
    });
  });

  it('without networkTokens refuses network token notifications as invalid card notifications', async () => {
    const answer = await post(withoutHub, tokenNotification());
    expect(answer.status).toBe(400);
    const errors = answer.body.errors as { code: string; source: { pointer: string } }[];
    expect(errors.every((e) => e.code === 'invalid-notification')).toBe(true);
    expect(errors.map((e) => e.source.pointer)).toContain('/event');
    expect(errors.map((e) => e.source.pointer)).toContain('/details/card_id');
  });
});
