import { createHash } from 'node:crypto';
import { canonicalJson } from '@wallet/platform';

/**
 * sha256 of a canonical JSON of the request: keys sorted, bigint as decimal strings, undefined
 * dropped. Stored with the idempotency key; a replay with another hash is a REFERENCE_CONFLICT.
 * The company id and the posting kind are part of the hashed value.
 */
export function requestHash(kind: string, companyId: string, request: unknown): string {
  return createHash('sha256').update(canonicalJson({ kind, companyId, request })).digest('hex');
}
