import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CardEvent, parseCardNotification } from '../../src/events/card-event.ts';
import type { UnmappedNotification } from '../../src/events/unmapped-notification.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import {
  luhnWindows,
  NOTIFICATION_DETAILS_MEMBERS,
  NOTIFICATION_ENVELOPE_MEMBERS,
  notification,
  panArbitrary,
  startWebhookReceiver,
  type TestWebhookReceiver,
} from '../support/fixtures.ts';

/**
 * Property tests of the webhook receiver: random mutations of a valid signed notification (members
 * replaced, removed or added, free text with card numbers, bytes flipped after signing) are never
 * refused for their shape (issue 19 item 3: every signed JSON body is answered 200, published when
 * it can be mapped, else stored as unmapped), never let an exception escape, and never let a PAN
 * into a published event, a stored unmapped notification, an answer or a log line.
 */

const SECRET = 'whsec_property_secret_0123456789';
const NOW_MS = Date.UTC(2026, 10, 21, 5, 1, 4);
const NOW_S = Math.floor(NOW_MS / 1000);

let receiver: TestWebhookReceiver;
let url: string;
let published: CardEvent[];
let unmapped: UnmappedNotification[];
let logLines: string[];

beforeAll(async () => {
  receiver = await startWebhookReceiver({ secrets: [SECRET], nowMs: NOW_MS, logLevel: 'debug' });
  ({ url, published, unmapped, logLines } = receiver);
});
afterAll(() => receiver.close());
beforeEach(() => receiver.reset());

/** Free text with a PAN glued somewhere in it. */
const textWithPan = fc
  .tuple(
    fc.string({ maxLength: 10 }),
    fc.constantFrom('', 'PAN', 'CRD', 'tok_', '0'),
    panArbitrary('4'),
    fc.string({ maxLength: 10 }),
  )
  .map((parts) => parts.join(''));

const ENVELOPE_MEMBERS = NOTIFICATION_ENVELOPE_MEMBERS;

const DETAILS_MEMBERS = NOTIFICATION_DETAILS_MEMBERS;

type Body = Record<string, unknown>;

/** One mutation of a notification (before it is signed). */
const mutationArbitrary: fc.Arbitrary<(body: Body) => void> = fc.oneof(
  // Replace an envelope member by any JSON value (or a string with a PAN).
  fc
    .tuple(fc.constantFrom(...ENVELOPE_MEMBERS), fc.oneof(fc.jsonValue(), textWithPan))
    .map(([member, value]) => (body: Body) => {
      body[member] = value;
    }),
  // Remove an envelope member.
  fc.constantFrom(...ENVELOPE_MEMBERS).map((member) => (body: Body) => {
    delete body[member];
  }),
  // Replace or remove a details member.
  fc
    .tuple(
      fc.constantFrom(...DETAILS_MEMBERS),
      fc.option(fc.oneof(fc.jsonValue(), textWithPan), { nil: undefined }),
    )
    .map(([member, value]) => (body: Body) => {
      let details: Body;
      try {
        details = JSON.parse(String(body.details)) as Body;
      } catch {
        return; // an earlier mutation replaced details
      }
      if (details === null || typeof details !== 'object') return;
      if (value === undefined) delete details[member];
      else details[member] = value;
      body.details = JSON.stringify(details);
    }),
  // Free text with a PAN where the specification allows free text.
  textWithPan.map((summary) => (body: Body) => {
    body.summary = summary;
  }),
  panArbitrary('4').map((pan) => (body: Body) => {
    body.description = `Card ${pan} updated now!!!!!!!!!!`.slice(0, 31);
  }),
  // Unknown members are ignored, whatever they hold.
  fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), textWithPan).map(([member, value]) => (body: Body) => {
    if (!(ENVELOPE_MEMBERS as readonly string[]).includes(member)) body[member] = value;
  }),
);

/** Posts `raw` signed as `signedBody` (the same bytes unless a test tampers after signing). */
async function post(raw: string | Buffer, signedBody: string | Buffer = raw) {
  const response = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'vgs-signature': signWebhookBody(signedBody, SECRET, NOW_S),
    },
    body: raw,
  });
  return { status: response.statusCode, text: await response.body.text() };
}

describe('webhook receiver under random mutations', () => {
  it('property: a re-signed mutated notification is answered 200, published when mappable, else stored unmapped, without card data', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutationArbitrary, { minLength: 1, maxLength: 3 }), async (mutations) => {
        published.length = 0;
        unmapped.length = 0;
        logLines.length = 0;
        const body = notification();
        for (const mutate of mutations) mutate(body);
        const raw = JSON.stringify(body);
        const { status, text } = await post(raw);
        const verdict = parseCardNotification(JSON.parse(raw));
        expect(status).toBe(200);
        const answer = JSON.parse(text).data as { id: string; status: string };
        // A mutated id may repeat one an earlier run sent (e.g. "a"): then it is a redelivery.
        const duplicate = answer.status === 'duplicate';
        if (verdict.ok) {
          expect(answer).toEqual({ id: verdict.event.id, status: duplicate ? 'duplicate' : 'accepted' });
          expect(published.map((event) => event.id)).toEqual(duplicate ? [] : [verdict.event.id]);
          expect(unmapped).toEqual([]);
        } else {
          if (!duplicate) expect(answer.status).toBe('unmapped');
          expect(unmapped.map((entry) => entry.reason)).toEqual(duplicate ? [] : [verdict.reason]);
          expect(published).toEqual([]);
        }
        // No PAN in what was published or stored (but the identifiers the gateway looks cards up by,
        // which it keeps as the provider sent them), answered or logged.
        const publishedText = JSON.stringify(published.map(({ id: _id, cardId: _cardId, ...rest }) => rest));
        expect(luhnWindows(publishedText, false), publishedText).toEqual([]);
        const storedText = JSON.stringify(unmapped.map(({ id: _id, ...rest }) => rest));
        expect(luhnWindows(storedText, false), storedText).toEqual([]);
        expect(luhnWindows(text.replace(/"id":"[^"]*"/, ''), false)).toEqual([]);
        expect(luhnWindows(logLines.join('').replace(/"time":\d+/g, ''), false)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('property: bytes changed after signing are refused with 401 and nothing is published', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.boolean(),
        async (position, xor, truncate) => {
          published.length = 0;
          const signed = Buffer.from(JSON.stringify(notification()));
          const tampered = Buffer.from(signed);
          const at = position % tampered.length;
          const raw = truncate ? tampered.subarray(0, at) : tampered;
          if (!truncate) tampered[at] = tampered[at]! ^ xor;
          const { status, text } = await post(raw, signed);
          expect(status).toBe(401);
          expect(JSON.parse(text).errors[0].code).toBe('bad-signature');
          expect(published).toEqual([]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('masks card numbers in summary and description before publishing', async () => {
    const body = notification({
      envelope: {
        summary: 'Card tok_4111111111111111 updated',
        description: 'PAN 5105105105105100 changed...',
      },
    });
    const { status } = await post(JSON.stringify(body));
    expect(status).toBe(200);
    expect(published).toHaveLength(1);
    expect(published[0]!.summary).toBe('Card tok_411111******1111 updated');
    expect(published[0]!.description).toBe('PAN 510510******5100 changed...');
  });
});
