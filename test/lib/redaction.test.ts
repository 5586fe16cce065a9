import fc from 'fast-check';
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { PAN_GROUP_SEPARATORS, redactPans } from '../../src/lib/pan.ts';
import {
  REDACTED,
  redactCardData,
  redactExecutionResult,
  redactGraphQLError,
  redactLogLine,
  withoutEchoedValues,
} from '../../src/lib/redaction.ts';
import { luhnWindows, panArbitrary } from '../support/fixtures.ts';

/**
 * The one redaction mechanism (src/lib/redaction.ts): PANs anywhere in a string, security codes by
 * member name, client values echoed by graphql-js. The property tests feed random text with
 * embedded Luhn-valid PANs and assert that none survives.
 */

/** A PAN as people and systems write it: plain, or grouped by one separator (issue 20 item 8). */
const writtenPanArbitrary = fc
  .tuple(panArbitrary(), fc.constantFrom('', ...PAN_GROUP_SEPARATORS))
  .map(([pan, separator]) => {
    if (!separator) return pan;
    // Groups of four, a tail shorter than three joining the last group (cards are not written
    // `4111 1111 1111 1`).
    const groups = pan.match(/.{1,4}/g) ?? [];
    const tail = groups.at(-1)!;
    if (tail.length < 3 && groups.length > 1) {
      groups.pop();
      groups[groups.length - 1] += tail;
    }
    return groups.join(separator);
  });

/** Text around a PAN: letters, digits, underscores, punctuation, any Unicode. */
const gluedTextArbitrary = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcXYZ_0123456789-: "\'{}[],.') }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('CRD', 'PAN', 'tok_', 'card=', '9', '00', 'x_1'),
);

describe('redactPans', () => {
  it('masks PANs glued to letters, digits and underscores, keeping BIN, last four and length', () => {
    expect(redactPans('CRD5105105105105100')).toBe('CRD510510******5100');
    expect(redactPans('PAN4242424242424242!')).toBe('PAN424242******4242!');
    expect(redactPans('tok_378282246310005_x')).toBe('tok_378282*****0005_x');
    expect(redactPans('card 4111 1111 1111 1111 on file')).toBe('card 4111 11** **** 1111 on file');
    expect(redactPans('4111-1111-1111-1111')).toBe('4111-11**-****-1111');
  });

  it('finds a PAN inside a longer run of digits', () => {
    const masked = redactPans('000004111111111111111100000');
    expect(masked).not.toContain('4111111111111111');
    expect(luhnWindows(masked)).toEqual([]);
  });

  it('leaves identifiers alone: zero-padded ids, UUIDs and runs with no Luhn-valid window', () => {
    expect(redactPans('ACsandbox000000000000001')).toBe('ACsandbox000000000000001');
    expect(redactPans('dc165aee-4904-47a9-a8b1-457178578416')).toBe('dc165aee-4904-47a9-a8b1-457178578416');
    expect(redactPans('1234567890123')).toBe('1234567890123');
  });

  it('leaves text without card numbers unchanged (same instance)', () => {
    const text = 'Card CRDabcdefghijklmnopqrstuv updated at 2026-11-21T05:01:02Z, 123456789012';
    expect(redactPans(text)).toBe(text);
  });

  it('property: no embedded Luhn-valid PAN survives, wherever it stands', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(gluedTextArbitrary, writtenPanArbitrary), { minLength: 1, maxLength: 4 }),
        gluedTextArbitrary,
        (parts, tail) => {
          const text = parts.map(([before, pan]) => before + pan).join('') + tail;
          const masked = redactPans(text);
          expect(masked).toHaveLength(text.length);
          expect(luhnWindows(masked)).toEqual([]);
          for (const [, pan] of parts) {
            expect(masked.replace(/(\d{3})[ \-_.x/](?=\d{3})/g, '$1')).not.toContain(pan.replace(/\D/g, ''));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('masks digit groups joined by any single separator: space, -, _, ., x, / (issue 20 item 8)', () => {
    expect(redactPans('4000.0566.5566.5556')).toBe('4000.05**.****.5556');
    expect(redactPans('Pan_4111_1111_1111_1111')).toBe('Pan_4111_11**_****_1111');
    expect(redactPans('4111x1111x1111x1111')).toBe('4111x11**x****x1111');
    expect(redactPans('id 4111/1111/1111/1111.')).toBe('id 4111/11**/****/1111.');
    expect(redactPans('3782_822463_10005')).toBe('3782_82****_*0005');
    expect(redactPans('5105.1051-0510_5100')).toBe('5105.10**-****_5100');
    // Version numbers, dates and resolutions are not card numbers.
    expect(redactPans('v1.2.3 on 2026-11-27 at 1920x1080 /cards/123')).toBe(
      'v1.2.3 on 2026-11-27 at 1920x1080 /cards/123',
    );
  });

  it('property: a PAN cut into groups of three or more digits, one separator each, is masked', () => {
    fc.assert(
      fc.property(
        panArbitrary(),
        fc.array(fc.integer({ min: 3, max: 8 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.constantFrom(...PAN_GROUP_SEPARATORS), { minLength: 6, maxLength: 6 }),
        gluedTextArbitrary,
        gluedTextArbitrary,
        (pan, sizes, separators, before, after) => {
          const groups: string[] = [];
          let rest = pan;
          for (const size of sizes) {
            if (rest.length < size + 3) break;
            groups.push(rest.slice(0, size));
            rest = rest.slice(size);
          }
          groups.push(rest);
          const written = groups.map((group, i) => (i === 0 ? group : separators[i - 1] + group)).join('');
          const masked = redactPans(before + written + after);
          expect(masked).toHaveLength(before.length + written.length + after.length);
          expect(luhnWindows(masked)).toEqual([]);
          expect(masked.slice(before.length, before.length + written.length).replace(/\D/g, '')).not.toBe(
            pan,
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('property: random strings come out without a Luhn-valid window and are otherwise kept', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789 -a_.x/') }), (text) => {
        const masked = redactPans(text);
        expect(luhnWindows(masked)).toEqual([]);
        // Only digits become '*'.
        for (let i = 0; i < text.length; i++) {
          if (masked[i] !== text[i]) {
            expect(masked[i]).toBe('*');
            expect(text[i]).toMatch(/\d/);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('redactCardData', () => {
  it('masks strings and PAN-like integers at any depth and redacts security code members', () => {
    const value = {
      note: 'customer PAN4242424242424242',
      nested: [{ cvc: '737', CVV2: 1234, security_code: '999', securityCode: null }],
      amount: 4111111111111111,
      '5105105105105100': 'key',
      time: 1_763_900_000_000,
    };
    expect(redactCardData(value)).toEqual({
      note: 'customer PAN424242******4242',
      nested: [{ cvc: REDACTED, CVV2: REDACTED, security_code: REDACTED, securityCode: null }],
      amount: '411111******1111',
      '510510******5100': 'key',
      time: redactCardData(1_763_900_000_000),
    });
  });

  it('returns the same instance when nothing needs masking, and survives cycles', () => {
    const clean = { a: [1, 'b', { c: true }] };
    expect(redactCardData(clean)).toBe(clean);
    const cyclic: Record<string, unknown> = { pan: 'x 4111111111111111' };
    cyclic.self = cyclic;
    expect(redactCardData(cyclic)).toEqual({ pan: 'x 411111******1111', self: REDACTED });
  });

  it('property: no embedded PAN survives in any JSON value', () => {
    const withPans = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.tuple(gluedTextArbitrary, writtenPanArbitrary, gluedTextArbitrary).map((p) => p.join('')),
        fc.string(),
        fc.integer(),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(withPans, (value) => {
        expect(luhnWindows(JSON.stringify(redactCardData(value)) ?? '')).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('redactLogLine', () => {
  it('masks messages and values of a pino line and keeps its time', () => {
    const line = `${JSON.stringify({
      time: 1_763_900_000_001,
      level: 50,
      err: { message: 'bad tok_5105105105105100', stack: 'Error: bad tok_5105105105105100\n at x' },
      body: { cvc: '123' },
      msg: 'failed for PAN4242424242424242',
    })}\n`;
    expect(JSON.parse(redactLogLine(line))).toEqual({
      time: 1_763_900_000_001,
      level: 50,
      err: { message: 'bad tok_510510******5100', stack: 'Error: bad tok_510510******5100\n at x' },
      body: { cvc: REDACTED },
      msg: 'failed for PAN424242******4242',
    });
    const clean = `${JSON.stringify({ time: 1_763_900_000_001, level: 30, msg: 'ok' })}\n`;
    expect(redactLogLine(clean)).toBe(clean);
  });
});

describe('redactGraphQLError', () => {
  it('drops the value a variable coercion error echoes (a CVC) and keeps path and reason', () => {
    const reason = new GraphQLError('String cannot represent a non string value: 737');
    const error = new GraphQLError(
      `Variable "$input" got invalid value 737 at "input.cvc"; ${reason.message}`,
      { originalError: reason },
    );
    const redacted = redactGraphQLError(error);
    expect(redacted.message).toBe(
      'Variable "$input" got invalid value at "input.cvc"; String cannot represent a non string value.',
    );
    // Idempotent: redaction runs at several layers.
    expect(redactGraphQLError(redacted).message).toBe(redacted.message);
  });

  it('drops echoed literals of validation errors and enum values', () => {
    expect(
      withoutEchoedValues(
        'Expected value of type "String", found 737; String cannot represent a non string value: 737',
        'String cannot represent a non string value: 737',
      ),
    ).toBe('Expected value of type "String"; String cannot represent a non string value.');
    expect(withoutEchoedValues('Expected value of type "Brand!", found "x737".')).toBe(
      'Expected value of type "Brand!".',
    );
    expect(withoutEchoedValues('Value "x737" does not exist in "Brand" enum.')).toBe(
      'Value does not exist in "Brand" enum.',
    );
  });

  it('keeps only the name of extensions.originalError and masks every other extension', () => {
    const error = new GraphQLError('POST body sent invalid JSON.', {
      extensions: {
        code: 'BAD_REQUEST',
        originalError: {
          name: 'SyntaxError',
          message: 'Unexpected token in "{"cvc":"737","pan":"4111111111111111"',
        },
        detail: { text: 'PAN4111111111111111' },
      },
    });
    expect(redactGraphQLError(error).toJSON()).toEqual({
      message: 'POST body sent invalid JSON.',
      extensions: {
        code: 'BAD_REQUEST',
        originalError: { name: 'SyntaxError' },
        detail: { text: 'PAN411111******1111' },
      },
    });
  });
});

describe('redactExecutionResult', () => {
  it('redacts the errors and extensions of every entry of a later @defer/@stream part', () => {
    const part = {
      incremental: [
        { data: { brand: 'VISA' }, path: ['card', 'data'] },
        {
          items: [{ last4: '1111' }],
          path: ['cards', 0],
          errors: [
            new GraphQLError('lookup of 4111111111111111 failed', { extensions: { code: 'upstream-error' } }),
          ],
          extensions: { cvc: '737' },
        },
      ],
      hasNext: false,
    };
    const redacted = redactExecutionResult(part as never) as unknown as typeof part;
    expect(redacted.incremental[0]).toBe(part.incremental[0]);
    expect({
      ...redacted.incremental[1],
      errors: redacted.incremental[1]!.errors!.map((error) => error.toJSON()),
    }).toEqual({
      items: [{ last4: '1111' }],
      path: ['cards', 0],
      errors: [{ message: 'lookup of 411111******1111 failed', extensions: { code: 'upstream-error' } }],
      extensions: { cvc: REDACTED },
    });
    expect(redacted.hasNext).toBe(false);
    // Nothing to redact: the same part.
    expect(redactExecutionResult(part.incremental[0] as never)).toBe(part.incremental[0]);
  });
});
