import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Provider callbacks carry `X-Provider-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`
 * (docs/sandbox.md). The MAC is checked over the raw bytes exactly as received, in constant time,
 * and a timestamp further than the tolerance from our clock is refused (replay protection).
 */

export const CALLBACK_TOLERANCE_SECONDS = 300;

export type SignatureVerdict = 'OK' | 'MALFORMED' | 'STALE' | 'BAD_SIGNATURE';

export function parseSignatureHeader(header: string): { t: number; v1: string[] } | null {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === 't') {
      if (!/^\d{1,12}$/.test(v)) return null;
      t = Number(v);
    } else if (k === 'v1') {
      if (/^[0-9a-f]{64}$/i.test(v)) v1.push(v.toLowerCase());
    }
  }
  return t === undefined || v1.length === 0 ? null : { t, v1 };
}

export function signPayload(secret: string, rawBody: Buffer | string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.`).update(rawBody).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export function verifySignature(
  secret: string,
  rawBody: Buffer,
  header: string,
  nowSeconds: number,
  toleranceSeconds = CALLBACK_TOLERANCE_SECONDS,
): SignatureVerdict {
  const parsed = parseSignatureHeader(header);
  if (!parsed) return 'MALFORMED';
  const expected = createHmac('sha256', secret).update(`${parsed.t}.`).update(rawBody).digest();
  // Several v1 values are allowed (secret rotation); one must match.
  const match = parsed.v1.some((v) => timingSafeEqual(expected, Buffer.from(v, 'hex')));
  if (!match) return 'BAD_SIGNATURE';
  if (Math.abs(nowSeconds - parsed.t) > toleranceSeconds) return 'STALE';
  return 'OK';
}
