import fc from 'fast-check';
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { CardNotFoundError } from '../../src/errors.ts';
import { encodeCursor } from '../../src/events/event-log.ts';
import { maskNotificationValue } from '../../src/events/notification-envelope.ts';
import { bodyDigestId } from '../../src/events/unmapped-notification.ts';
import { logTextOf } from '../../src/lib/logger.ts';
import {
  isSecurityCodeName,
  REDACTED,
  redactCardData,
  redactCardText,
  redactGraphQLError,
  redactLogLine,
} from '../../src/lib/redaction.ts';
import {
  captureLogger,
  cvcSpellingArbitrary,
  digitsOf,
  holdsPan,
  panSpellingArbitrary,
  splitPanArbitrary,
} from '../support/fixtures.ts';

/**
 * Property tests of the one card-data masker (src/lib/pan.ts `redactPans`, src/lib/redaction.ts):
 * PANs written with any separators, group sizes and Unicode digits, split over array items and
 * sibling members, inside JSON-encoded strings at any depth; security codes under any spelling of
 * their name and in name/value pairs. Each spelling is checked in free text, structured values,
 * stored notification bodies, log lines and error messages; a miss fails the property. The
 * detector of the tests is independent of the masker: every digit of the output, in any script,
 * read in order with everything else dropped ({@link holdsPan}).
 */

/** Wraps `value` in `depth` levels of JSON-encoded `details` strings, as the provider may send them. */
function encodedAt(value: unknown, depth: number): unknown {
  let wrapped = value;
  for (let level = 0; level < depth; level++) wrapped = { details: JSON.stringify(wrapped) };
  return wrapped;
}

describe('the card-data masker finds every spelling of a PAN', () => {
  it('property: in free text, error messages and GraphQL errors', () => {
    fc.assert(
      fc.property(panSpellingArbitrary(), ({ pan, spelling }) => {
        const text = `Card ${spelling} was updated`;
        expect(holdsPan(redactCardText(text), pan), JSON.stringify(text)).toBe(false);
        expect(holdsPan(new CardNotFoundError(`no card ${spelling}`).message, pan)).toBe(false);
        expect(holdsPan(redactGraphQLError(new GraphQLError(`bad ${spelling}`)).message, pan)).toBe(false);
        expect(holdsPan(logTextOf(new Error(spelling)), pan)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('property: in JSON-encoded strings at any depth, as member values and names', () => {
    fc.assert(
      fc.property(panSpellingArbitrary(), fc.integer({ min: 0, max: 4 }), ({ pan, spelling }, depth) => {
        const value = encodedAt({ reason: spelling, [`k ${spelling}`]: 1, list: [`x ${spelling}`] }, depth);
        const masked = JSON.stringify(redactCardData(value));
        expect(holdsPan(masked, pan), masked).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('property: split over array items (strings or numbers), and over sibling members of a stored body', () => {
    fc.assert(
      fc.property(splitPanArbitrary(), fc.integer({ min: 0, max: 2 }), ({ pan, parts }, depth) => {
        const asArray = JSON.stringify(redactCardData(encodedAt({ digits: parts }, depth)));
        expect(holdsPan(asArray, pan), asArray).toBe(false);
        const members = Object.fromEntries(
          parts.map((part, index) => [`part${'abcdefgh'[index]}`, String(part)]),
        );
        const asMembers = JSON.stringify(maskNotificationValue(encodedAt(members, depth)));
        expect(holdsPan(asMembers, pan), asMembers).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('property: in log lines, as message, member and nested value', () => {
    fc.assert(
      fc.property(panSpellingArbitrary(), splitPanArbitrary(), (spelled, split) => {
        const { logger, lines } = captureLogger();
        logger.warn(
          { reason: spelled.spelling, nested: { parts: split.parts } },
          `refused ${spelled.spelling}`,
        );
        logger.error({ err: new Error(`card ${spelled.spelling}`) }, 'failed');
        const text = lines.join('');
        expect(holdsPan(text, spelled.pan), text).toBe(false);
        expect(holdsPan(text, split.pan), text).toBe(false);
        expect(holdsPan(redactLogLine(`not json ${spelled.spelling}\n`), spelled.pan)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('masks the spellings of the issue exactly to BIN and last four', () => {
    expect(redactCardText('4000  0566\t5566\n5556')).toBe('4000  05**\t****\n5556');
    expect(redactCardText('4000,0566:5566;5556')).toBe('4000,05**:****;5556');
    expect(redactCardText('4000\u00a00566\u200b5566\u200b5556')).toBe('4000\u00a005**\u200b****\u200b5556');
    expect(redactCardText('40 00 05 66 55 66 55 56')).toBe('40 00 05 ** ** ** 55 56');
    expect(redactCardText('４０００ ０５６６ ５５６６ ５５５６')).toBe('４０００ ０５** **** ５５５６');
    expect(redactCardText('٤٠٠٠٠٥٦٦٥٥٦٦٥٥٥٦')).toBe('٤٠٠٠٠٥******٥٥٥٦');
    expect(redactCardText('CRD4000056655665556')).toBe('CRD400005******5556');
    expect(redactCardData(['4000', '0566', '5566', '5556'])).toEqual(['4000', '05**', '****', '5556']);
    expect(redactCardData([4111, 1111, 1111, 1111])).toEqual([4111, '11**', '****', 1111]);
    expect(maskNotificationValue({ a: '4000', b: '0566', c: '5566', d: '5556' })).toEqual({
      a: '4000',
      b: '05**',
      c: '****',
      d: '5556',
    });
  });
});

describe('the card-data masker finds every spelling of a security code', () => {
  it('property: members named like a CVC, in any case, separators, prefixes and suffixes', () => {
    fc.assert(
      fc.property(cvcSpellingArbitrary(), fc.integer({ min: 0, max: 3 }), ({ name, code }, depth) => {
        expect(isSecurityCodeName(name), name).toBe(true);
        const masked = redactCardData(encodedAt({ [name]: code, other: 'kept' }, depth));
        expect(JSON.stringify(masked)).not.toMatch(new RegExp(`(?<!\\d)${code}(?!\\d)`));
        if (depth === 0) expect(masked).toEqual({ [name]: REDACTED, other: 'kept' });
      }),
      { numRuns: 500 },
    );
  });

  it('property: name/value pairs, as objects and as arrays', () => {
    fc.assert(
      fc.property(
        cvcSpellingArbitrary(),
        fc.constantFrom('name', 'key', 'field', 'type', 'label'),
        fc.constantFrom('value', 'val', 'data', 'text'),
        ({ name, code }, nameKey, valueKey) => {
          const pairs = { fields: [{ [nameKey]: name, [valueKey]: code }], flat: [name, code] };
          expect(redactCardData(pairs)).toEqual({
            fields: [{ [nameKey]: name, [valueKey]: REDACTED }],
            flat: [name, REDACTED],
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('property: written after its name in text, log lines and error messages', () => {
    fc.assert(
      fc.property(
        cvcSpellingArbitrary(),
        fc.constantFrom(': ', '=', ' ', ' is ', '":"', '\\":\\"', ' - ', ':\t'),
        ({ name, code }, gap) => {
          const standalone = new RegExp(`(?<!\\d)${code}(?!\\d)`);
          const text = `sent ${name}${gap}${code} by mistake`;
          expect(redactCardText(text), text).not.toMatch(standalone);
          expect(new CardNotFoundError(text).message).not.toMatch(standalone);
          const { logger, lines } = captureLogger();
          logger.warn({ detail: text }, text);
          expect(lines.join('').replace(/"(?:time|pid)":\d+/g, '')).not.toMatch(standalone);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('does not take other member names for a security code', () => {
    for (const name of [
      'docId',
      'specId',
      'acid',
      'cidr',
      'card_id',
      'decided',
      'cardId',
      'incident',
      'code',
    ]) {
      expect(isSecurityCodeName(name), name).toBe(false);
    }
  });
});

describe('the card-data masker keeps what is not card data', () => {
  it('keeps pino times, request ids, hashes, cursors, card ids and body digests', () => {
    const line = `{"level":30,"time":${Date.now()},"pid":4242,"reqId":"550e8400-e29b-41d4-a716-446655440000","msg":"ok"}\n`;
    expect(redactLogLine(line)).toBe(line);
    const kept = [
      '550e8400-e29b-41d4-a716-446655440000',
      'a8b1e7c2-91d4-4f3a-a8b1-457178578416',
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      encodeCursor({ position: 4000056655665556n, timestampMs: 1_764_305_352_000 }),
      'CRDabcdefghijklmnopqrstuv',
      bodyDigestId(Buffer.from('{"id":"4000056655665556"}')),
      '2026-11-21T05:01:02.123456Z',
      '510026******1001',
    ];
    for (const value of kept) expect(redactCardText(value), value).toBe(value);
  });

  it('property: cursors are kept', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        (position, timestampMs) => {
          const cursor = encodeCursor({ position, timestampMs });
          expect(redactCardText(cursor)).toBe(cursor);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('property: masking only turns digits into `*`, and a masked text holds no PAN when masked again', () => {
    fc.assert(
      fc.property(panSpellingArbitrary(), fc.string(), ({ pan, spelling }, noise) => {
        const text = `${noise} ${spelling} ${noise}`;
        const once = redactCardText(text);
        // A masked digit reads as a separator, so masking again may hide more digits, never fewer.
        const twice = redactCardText(once);
        for (const [before, after] of [
          [text, once],
          [once, twice],
        ] as const) {
          expect(after.length).toBe(before.length);
          for (let k = 0; k < before.length; k++) {
            if (after[k] !== before[k]) expect(after[k]).toBe('*');
          }
        }
        expect(holdsPan(twice, pan)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps digits without a Luhn-valid window, and the tests read digits of any script', () => {
    expect(redactCardText('1000 0000 0000 0000 1')).toBe('1000 0000 0000 0000 1');
    expect(digitsOf('٤٠ ４a\\u0035')).toBe('4045');
  });
});
