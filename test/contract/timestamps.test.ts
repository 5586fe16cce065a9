import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/contracts/common.ts';

/**
 * src/contracts/common.ts `isoTimestamp`: upstream timestamps read as ISO 8601 UTC with milliseconds
 * (docs/gap-decisions.md "Common"); each form read twice, the second time from the normalised forms
 * already read (issue 21 item 3), with the same answer.
 */
describe('isoTimestamp', () => {
  it.each([
    ['2019-05-15T12:30:45Z', '2019-05-15T12:30:45.000Z'],
    ['2026-11-21T05:01:02.123Z', '2026-11-21T05:01:02.123Z'],
    ['2026-11-21T05:01:02.123000', '2026-11-21T05:01:02.123Z'],
    ['2026-11-21T05:01:02.5+02:00', '2026-11-21T03:01:02.500Z'],
    ['2026-11-21T05:01:02.123456789-01:30', '2026-11-21T06:31:02.123Z'],
  ])('reads %s as %s, again from memory', (text, normalised) => {
    expect(isoTimestamp.parse(text)).toBe(normalised);
    expect(isoTimestamp.parse(text)).toBe(normalised);
  });

  it.each(['2026-11-21', '2026-13-45T99:00:00Z', '2026-11-21T05:01:02.123Zjunk', ''])(
    'refuses %j every time',
    (text) => {
      expect(isoTimestamp.safeParse(text).success).toBe(false);
      expect(isoTimestamp.safeParse(text).success).toBe(false);
    },
  );
});
