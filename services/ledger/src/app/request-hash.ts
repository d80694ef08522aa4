import { createHash } from 'node:crypto';

/**
 * sha256 of a canonical JSON of the request: keys sorted, bigint as decimal strings, undefined
 * dropped. Stored with the idempotency key; a replay with another hash is a REFERENCE_CONFLICT.
 * The company id and the posting kind are part of the hashed value.
 */
export function requestHash(kind: string, companyId: string, request: unknown): string {
  return createHash('sha256').update(canonicalJson({ kind, companyId, request })).digest('hex');
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(normalize(value));
}

function normalize(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = normalize(x);
    }
    return out;
  }
  return v;
}
