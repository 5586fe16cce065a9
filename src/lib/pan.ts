/**
 * PAN helpers shared by the gateway and the embedded sandbox: Luhn check, card brand by IIN range,
 * and masking. Nothing here logs or stores a PAN.
 */

/** Card brand families named by the specification (Card check request, `number`). */
export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'diners' | 'jcb';

/**
 * Luhn (mod 10) check of a digit string.
 * @param digits PAN digits only, no separators.
 * @returns true when the check digit is valid; false for an empty or non-digit string.
 */
export function isLuhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Computes the Luhn check digit for a PAN prefix (all digits but the last).
 * @returns one character, '0' to '9'.
 */
export function luhnCheckDigit(prefix: string): string {
  for (let d = 0; d <= 9; d++) {
    if (isLuhnValid(`${prefix}${d}`)) return String(d);
  }
  throw new Error('unreachable: a Luhn check digit always exists');
}

/**
 * Card brand family of a PAN by its IIN prefix, or undefined when no family matches.
 * Ranges: Visa 4; Mastercard 51-55, 2221-2720; Amex 34, 37; Discover 6011, 644-649, 65;
 * Diners Club 300-305, 36, 38-39; JCB 3528-3589.
 */
export function cardBrandOf(pan: string): CardBrand | undefined {
  const p2 = Number(pan.slice(0, 2));
  const p3 = Number(pan.slice(0, 3));
  const p4 = Number(pan.slice(0, 4));
  if (pan.startsWith('4')) return 'visa';
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return 'mastercard';
  if (p2 === 34 || p2 === 37) return 'amex';
  if (p4 === 6011 || (p3 >= 644 && p3 <= 649) || p2 === 65) return 'discover';
  if (p4 >= 3528 && p4 <= 3589) return 'jcb';
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) return 'diners';
  return undefined;
}

/** True for 13 to 19 digits passing Luhn: the shape of a plain PAN. */
export function isPlainPan(value: string): boolean {
  return /^\d{13,19}$/.test(value) && isLuhnValid(value);
}

/**
 * Masks a PAN to its BIN (first six digits) and last four, padded with `*` to 16 characters
 * (the notification table's masked-number length), e.g. `510026******1001`.
 * @param pan 13 to 19 digits.
 */
export function maskPan(pan: string): string {
  const digits = pan.replace(/\D/g, '');
  const middle = Math.max(16 - 10, digits.length - 10);
  return `${digits.slice(0, 6)}${'*'.repeat(middle)}${digits.slice(-4)}`;
}

/**
 * A card number as an upstream answer carries it (digits as a string, or a JSON number read as its
 * source text so no digit is lost), masked at once with {@link maskPan}: the one rule of every
 * upstream client that receives a plain PAN (the card interface check's `pan` values, the v1 card
 * check's `number`; sandbox contract §8).
 * @returns the masked number (`510026******3001`), or undefined when `value` is not 12 to 19 digits
 *   (a JSON number beyond 2^53 that was not read as source text is refused: its digits are lost).
 */
export function maskedPanOf(value: string | number): string | undefined {
  const digits = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value;
  return /^\d{12,19}$/.test(digits) ? maskPan(digits) : undefined;
}

/**
 * A digit run: groups of at least three digits joined by one separator character of
 * {@link PAN_GROUP_SEPARATORS} (card numbers as written or smuggled: `4111 1111 1111 1111`,
 * `3782-822463-10005`, `4000.0566.5566.5556`, `Pan_4111_1111_1111_1111`, `4111x1111x1111x1111`,
 * `4111/1111/1111/1111`; issue 20 item 8), or plain consecutive digits. A shorter group is not
 * joined, so identifiers such as UUIDs (`…-a8b1-457178578416`) are not read as card numbers.
 */
const DIGIT_RUN = /\d{3,}(?:[ \-_.x/]\d{3,})+|\d+/g;

/**
 * The characters that may stand, one at a time, between the digit groups of a written card number:
 * space, `-`, `_`, `.`, `x` and `/` (issue 20 item 8). {@link redactPans} joins groups across any of
 * them; the log fast path (src/lib/redaction.ts) uses the same set.
 */
export const PAN_GROUP_SEPARATORS = ' -_.x/';

/** True for the char code of one of {@link PAN_GROUP_SEPARATORS}. */
function isGroupSeparator(c: number): boolean {
  return c === 32 || c === 45 || c === 95 || c === 46 || c === 120 || c === 47;
}

/**
 * Masks card numbers anywhere in free text, the one masking rule of everything that leaves the
 * process (see src/lib/redaction.ts). A digit run is a maximal sequence of digits, or of groups of at
 * least three digits separated by one of {@link PAN_GROUP_SEPARATORS}; it may be glued to letters or underscores
 * (`CRD5105105105105100`, `tok_3714…`). Within a run:
 * - every window of 13 to 19 consecutive digits that starts with 1-9 (no card number starts with 0)
 *   and passes the Luhn check is masked to its first six and last four digits (the digits between
 *   become `*`); windows are taken at every offset, so a PAN inside a longer run of digits is found;
 * Separators and the text's length are kept, and the result has no Luhn-valid 13 to 19 digit window
 * starting with 1-9 left: masking only turns digits into `*`, so any digit window of the result was a window of the
 * input, and each Luhn-valid one lost its middle digits.
 * Cost: linear in the text (at most 7 windows of at most 19 digits per digit).
 * @param text any string; returned unchanged (same instance) when nothing needs masking.
 */
export function redactPans(text: string): string {
  if (text.length < 13) return text;
  // A digit run is made of digits and group separators only, so it lies within a stretch of such
  // characters: when no stretch holds 13 digits, no run does and nothing is masked. This one pass
  // returns most text (summaries, hex fingerprints, ids of letters) without the digit-run scan.
  let stretchDigits = 0;
  for (let i = 0; i < text.length && stretchDigits < 13; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) stretchDigits++;
    else if (!isGroupSeparator(c)) stretchDigits = 0;
  }
  if (stretchDigits < 13) return text;
  let out: string[] | undefined;
  // Only Luhn-valid windows: identifiers (UUIDs, SHA-256 hex, epoch ms) often hold 13+ digit runs.
  // exec on the one global pattern, not matchAll (which clones the pattern on every call); nothing in
  // the loop uses DIGIT_RUN, so its lastIndex is this scan's alone.
  DIGIT_RUN.lastIndex = 0;
  for (let match = DIGIT_RUN.exec(text); match !== null; match = DIGIT_RUN.exec(text)) {
    const run = match[0];
    if (run.length < 13) continue;
    // Offsets (in `text`) of the run's digits, and the digits themselves.
    const offsets: number[] = [];
    let digits = '';
    for (let i = 0; i < run.length; i++) {
      const c = run.charCodeAt(i);
      if (c >= 48 && c <= 57) {
        offsets.push(match.index + i);
        digits += run[i];
      }
    }
    const n = digits.length;
    if (n < 13) continue;
    const hide = new Uint8Array(n);
    let found = false;
    for (let start = 0; start + 13 <= n; start++) {
      // No card number starts with 0 (ISO/IEC 7812 major industry identifier); zero-padded ids do.
      if (digits.charCodeAt(start) === 48) continue;
      for (let length = 13; length <= 19 && start + length <= n; length++) {
        if (isLuhnValid(digits.slice(start, start + length))) {
          hide.fill(1, start + 6, start + length - 4);
          found = true;
        }
      }
    }
    if (!found) continue;
    out ??= text.split('');
    for (let k = 0; k < n; k++) if (hide[k]) out[offsets[k]!] = '*';
  }
  return out ? out.join('') : text;
}
