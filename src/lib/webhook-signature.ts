import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signature scheme of the sandbox contract §4: header
 * `vgs-signature: t=<unix seconds>,v0=<lowercase hex>`, the hex being HMAC-SHA256 keyed with the
 * endpoint secret over the bytes `<t>.<raw body>`.
 */
export const SIGNATURE_HEADER = 'vgs-signature';

/**
 * Signs a raw webhook body.
 * @param body the exact bytes that will be sent.
 * @param secret the endpoint secret.
 * @param timestampS unix time in seconds.
 * @returns the header value `t=…,v0=…`.
 */
export function signWebhookBody(body: Buffer | string, secret: string, timestampS: number): string {
  return `t=${timestampS},v0=${hmacHex(body, secret, String(timestampS)).toString('hex')}`;
}

function hmacHex(body: Buffer | string, secret: string, t: string): Buffer {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest();
}

/** Why a signature was refused; each maps to one HTTP 4xx answer of the receiver. */
export type SignatureFailure =
  | 'missing-signature'
  | 'malformed-signature'
  | 'stale-timestamp'
  | 'bad-signature';

/**
 * Verifies a `vgs-signature` header against the raw body, in constant time, accepting any of the
 * configured secrets (rotation).
 * @param header the header value, or undefined when absent.
 * @param body the raw request bytes, unparsed.
 * @param secrets one or more endpoint secrets; the first match wins.
 * @param toleranceS maximum distance in seconds between `t` and `nowS`, either direction.
 * @param nowS current unix time in seconds.
 * @returns `{ ok: true, timestampS }` or `{ ok: false, reason }`.
 */
export function verifyWebhookSignature(
  header: string | undefined,
  body: Buffer,
  secrets: readonly string[],
  toleranceS: number,
  nowS: number,
): { ok: true; timestampS: number } | { ok: false; reason: SignatureFailure } {
  if (!header) return { ok: false, reason: 'missing-signature' };
  let t: string | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') t = value;
    else if (key === 'v0') candidates.push(value);
  }
  if (!t || !/^\d{1,12}$/.test(t) || candidates.length === 0)
    return { ok: false, reason: 'malformed-signature' };
  const timestampS = Number(t);
  if (Math.abs(nowS - timestampS) > toleranceS) return { ok: false, reason: 'stale-timestamp' };
  for (const secret of secrets) {
    const expected = hmacHex(body, secret, t);
    for (const candidate of candidates) {
      if (!/^[0-9a-f]{64}$/.test(candidate)) continue;
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) return { ok: true, timestampS };
    }
  }
  return { ok: false, reason: 'bad-signature' };
}
