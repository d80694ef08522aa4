import { AppError, Problems, invalidRequest, type FieldProblem } from '@wallet/platform';
import { COMPANY_ID_PATTERN } from '../domain/accounts.js';
import { MAX_SAFE_CENTS } from '../domain/money.js';
import { DETAIL_FIELDS, type MovementDetails } from '../domain/movements.js';

/** The request-problem collector (one implementation, in services/platform). */
export { Problems };

/** Records an item's problems under `items.<i>.` into a batch's list. */
class ItemProblems extends Problems {
  constructor(
    private readonly sink: FieldProblem[],
    private readonly prefix: string,
  ) {
    super();
  }
  override add(path: string, message: string): this {
    this.sink.push({ path: `${this.prefix}${path}`, message });
    return this;
  }
}

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

/**
 * A batch command's items (ReserveBatch, CommitBatch): 1 to MAX_BATCH_ITEMS, each checked by `check`
 * with its problems named `items.<i>.<field>`, and the values `unique` names (keys, ids) never twice
 * in the batch; INVALID_REQUEST lists at most MAX_LISTED_PROBLEMS problems.
 */
export function checkBatchItems<T>(items: readonly T[], check: (p: Problems, item: T) => void, unique: Record<string, (item: T) => string | undefined>): void {
  if (items.length === 0 || items.length > MAX_BATCH_ITEMS) {
    throw invalidRequest([{ path: 'items', message: `must have 1 to ${MAX_BATCH_ITEMS} items` }]);
  }
  const problems: FieldProblem[] = [];
  const seen = new Map(Object.keys(unique).map((path) => [path, new Map<string, number>()]));
  for (let i = 0; i < items.length && problems.length <= MAX_LISTED_PROBLEMS; i++) {
    const item = items[i]!;
    const p = new ItemProblems(problems, `items.${i}.`);
    check(p, item);
    for (const [path, valueOf] of Object.entries(unique)) {
      const v = valueOf(item);
      if (!v) continue;
      const first = seen.get(path)!.get(v);
      if (first !== undefined) p.add(path, `repeats item ${first}`);
      else seen.get(path)!.set(v, i);
    }
  }
  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    if (problems.length > MAX_LISTED_PROBLEMS) listed.push({ path: 'items', message: `only the first ${MAX_LISTED_PROBLEMS} problems are listed` });
    throw invalidRequest(listed);
  }
}
