import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { canonicalJson, invalidRequest, type ErrorCode } from '@wallet/platform';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** 1-255 visible ASCII characters (0x21-0x7E): no spaces, no controls, nothing a proxy could rewrite. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` of a request: undefined when absent, else the key; 400 INVALID_REQUEST
 * (`details.fields[{ path: 'Idempotency-Key' }]`) when malformed. Node joins a repeated header
 * with ", ", so sending it twice is refused too (the space is not allowed).
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(', ') : header;
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) {
    const message = value.length === 0 || value.length > 255 ? 'Debe tener entre 1 y 255 caracteres.' : 'Solo admite caracteres ASCII visibles (sin espacios).';
    throw invalidRequest([{ path: IDEMPOTENCY_KEY_HEADER, message }]);
  }
  return value;
}

export interface IdempotentRequest {
  method: string;
  /** The route template (OpenAPI form), so the same key on another route never matches. */
  routeTemplate: string;
  params: Record<string, string> | undefined;
  /** The parsed JSON body (before schema defaults): whitespace and key order do not change the hash. */
  body: unknown;
}

/**
 * SHA-256 (hex) of method, route template, path parameters and the canonical body (default
 * canonical JSON: engine key order, undefined dropped, no body → ''). Stored: never change it.
 */
export function idempotencyRequestHash(req: IdempotentRequest): string {
  return createHash('sha256')
    .update(req.method.toUpperCase())
    .update('\n')
    .update(req.routeTemplate)
    .update('\n')
    .update(canonicalJson(req.params ?? {}))
    .update('\n')
    .update(canonicalJson(req.body))
    .digest('hex');
}

/**
 * What is stored of a request hash: HMAC-SHA256 under a key derived (HKDF) from GATEWAY_ENCRYPTION_KEY,
 * `hm1:` + hex. The hash covers bodies holding account numbers and documents; unkeyed, and with the
 * rest of such a body guessable, it could be brute-forced back to the number.
 */
export function requestFingerprinter(encryptionKey: string): (requestHash: string) => string {
  const key = Buffer.from(hkdfSync('sha256', encryptionKey, 'wallet/gateway', 'idempotency-fingerprint/v1', 32));
  return (requestHash) => `hm1:${createHmac('sha256', key).update(requestHash, 'utf8').digest('hex')}`;
}

/** Answers that a retry could change: not stored, the claim is dropped so a retry runs normally. */
const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['IDEMPOTENCY_KEY_IN_USE', 'RATE_LIMIT_EXCEEDED']);

/**
 * Whether an answer is final and so stored for replay: 2xx, and 4xx that are business decisions
 * (e.g. 422 INSUFFICIENT_BALANCE, 404 KEY_NOT_FOUND). Not 5xx (the work may not have happened),
 * 408, 429, or transient 409s.
 */
export function isStorableAnswer(status: number, code?: ErrorCode): boolean {
  if (status >= 200 && status < 300) return true;
  if (status < 400 || status >= 500) return false;
  if (status === 408 || status === 429) return false;
  return code === undefined || !TRANSIENT_CODES.has(code);
}

/** Response headers worth replaying; the rest (rate limits, request id, caching) belong to each answer. */
export const REPLAYED_HEADERS = ['location', 'content-type'] as const;

export function replayableHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if ((REPLAYED_HEADERS as readonly string[]).includes(k.toLowerCase())) out[k] = v;
  }
  return out;
}
