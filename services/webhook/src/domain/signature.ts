import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header names of every delivery. */
export const HEADER_ID = 'Webhook-Id';
export const HEADER_TIMESTAMP = 'Webhook-Timestamp';
export const HEADER_SIGNATURE = 'Webhook-Signature';
/** Receivers should refuse signatures older (or newer) than this; the documented default. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** hex HMAC-SHA256 over `${timestamp}.${body}` with the secret (the whole `whsec_…` string as UTF-8) as the key. */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** `t=<unix>,v1=<hex>[,v1=<hex>]`: one v1 per secret that currently signs (two during a rotation overlap). */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${signPayload(s, timestamp, body)}`)].join(',');
}

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: 'malformed' | 'too_old' | 'too_new' | 'mismatch' };

/**
 * What a receiver does (the docs show the same in TypeScript): parse `t` and every `v1`, refuse a
 * timestamp outside the tolerance, recompute the HMAC over `${t}.${rawBody}` and compare in
 * constant time; any one matching v1 is enough.
 */
export function verifySignature(secret: string, header: string, rawBody: string, opts: { toleranceSeconds?: number; now?: number } = {}): VerifyResult {
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const sigs = parts.filter(([k, v]) => k === 'v1' && v).map(([, v]) => v!);
  if (!Number.isInteger(t) || sigs.length === 0) return { ok: false, reason: 'malformed' };
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (now - t > tolerance) return { ok: false, reason: 'too_old' };
  if (t - now > tolerance) return { ok: false, reason: 'too_new' };
  const expected = Buffer.from(signPayload(secret, t, rawBody), 'hex');
  const ok = sigs.some((s) => {
    const got = Buffer.from(s, 'hex');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
  return ok ? { ok: true, timestamp: t } : { ok: false, reason: 'mismatch' };
}
