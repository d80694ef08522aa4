import { AppError, Problems, invalidRequest } from '@wallet/platform';
import { COMPANY_ID_PATTERN } from '../domain/accounts.js';
import { MAX_SAFE_CENTS } from '../domain/money.js';
import { DETAIL_FIELDS, type MovementDetails } from '../domain/movements.js';

/** The request-problem collector (one implementation, in services/platform). */
export { Problems };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: string): boolean => UUID.test(v);

export const MAX_IDEMPOTENCY_KEY = 200;
export const MAX_REFERENCE = 100;
export const MAX_DESCRIPTION = 255;
export const MAX_DETAIL = 255;
export const MAX_ERROR_MESSAGE = 1000;
/** Items of one batch RPC (ReserveBatch, ComputeFeesBatch). */
export const MAX_BATCH_ITEMS = 10_000;
/** A batch's request problems listed at most (the error travels in gRPC trailers). */
export const MAX_LISTED_PROBLEMS = 50;

/** The company the caller acts for, from `x-company-id` metadata only (ARCHITECTURE rule 5). */
export function requireCompany(companyId: string | undefined): string {
  if (!companyId) throw new AppError('AUTH_REQUIRED', 'Falta la empresa de la llamada (metadato x-company-id).');
  if (!COMPANY_ID_PATTERN.test(companyId)) throw invalidRequest([{ path: 'x-company-id', message: 'is not a valid company id' }]);
  return companyId;
}

export function checkIdempotencyKey(p: Problems, key: string): void {
  if (!key) p.add('idempotencyKey', 'is required');
  else if (key.length > MAX_IDEMPOTENCY_KEY) p.add('idempotencyKey', `must be at most ${MAX_IDEMPOTENCY_KEY} characters`);
}

/** > 0 and, where the amount reaches a JSON client as a number, at most 2^53 − 1. */
export function checkPositive(p: Problems, path: string, v: bigint, max: bigint = MAX_SAFE_CENTS): void {
  if (v <= 0n) p.add(path, 'must be greater than 0');
  else if (v > max) p.add(path, `must be at most ${max}`);
}

export function checkText(p: Problems, path: string, v: string | null | undefined, max: number): void {
  if (v != null && [...v].length > max) p.add(path, `must be at most ${max} characters`);
}

export function checkDetails(p: Problems, path: string, d: MovementDetails | undefined): void {
  if (!d) return;
  for (const f of DETAIL_FIELDS) {
    const max = f === 'description' ? MAX_DESCRIPTION : f === 'errorMessage' ? MAX_ERROR_MESSAGE : MAX_DETAIL;
    checkText(p, `${path}.${f}`, d[f], max);
  }
}

/** Empty strings mean "not given": proto3 cannot tell them apart on every client. */
export function orNull(v: string | null | undefined): string | null {
  return v == null || v === '' ? null : v;
}
