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
 * Replaces every run of 13 to 19 digits (optionally separated by single spaces or hyphens) in free
 * text with its mask. Used on text that crosses a trust boundary (upstream error details, log
 * messages) as a last line of defence.
 */
export function redactPans(text: string): string {
  return text.replace(/\b\d(?:[ -]?\d){12,18}\b/g, (m) => maskPan(m));
}
