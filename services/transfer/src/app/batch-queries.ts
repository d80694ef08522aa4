import { AppError } from '@wallet/platform';
import { BATCH_STATES, type BatchItemRecord, type BatchRecord, type BatchState, type BatchSummary, type ItemStatus } from '../domain/batch.js';
import type { BatchDeps } from './deps.js';
import { Problems, decodeTimeCursor, encodeTimeCursor, isUuid, orNull, requireCompany } from './validation.js';

/** Who asks: the calling company and, for a client, its API key. */
export interface CallerOf {
  companyId?: string | undefined;
  apiKeyId?: string | undefined;
}

/** The states a batch shows (FUNDING reads as EXECUTING). */
const STATES: readonly string[] = BATCH_STATES.filter((st) => st !== 'FUNDING');
const ITEM_STATUSES: readonly string[] = [
  'VALID',
  'INVALID',
  'REJECTED',
  'NOT_EXECUTED',
  'PENDING',
  'AWAITING_APPROVAL',
  'EXECUTING',
  'COMPLETED',
  'FAILED',
  'EXPIRED',
];

/** The caller's batch, or BATCH_NOT_FOUND (another company's, or a malformed id). */
export async function ownBatch(deps: BatchDeps, caller: string | undefined, id: string): Promise<BatchRecord> {
  const companyId = requireCompany(caller);
  if (!isUuid(id)) throw new AppError('BATCH_NOT_FOUND');
  const b = await deps.batches.get(companyId, id.toLowerCase());
  if (!b) throw new AppError('BATCH_NOT_FOUND');
  return b;
}

/** GET /transfers/batches, /transfers/batches/{id}, …/items and …/results.csv (docs/batches.md §4). */
export class BatchQueries {
  constructor(private readonly deps: BatchDeps) {}

  async get(caller: string | undefined, id: string): Promise<BatchSummary> {
    const b = await ownBatch(this.deps, caller, id);
    return (await this.deps.batches.summaries([b]))[0]!;
  }

  async list(
    caller: string | undefined,
    q: { state?: string | undefined; limit?: number; cursor?: string | undefined },
  ): Promise<{ items: BatchSummary[]; nextCursor: string | null }> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    const state = orNull(q.state ?? null)?.toUpperCase() ?? null;
    if (state && !STATES.includes(state)) p.add('status', `Debe ser uno de ${STATES.join(', ')}.`);
    const limit = q.limit && q.limit > 0 ? q.limit : 50;
    if (limit > 100) p.add('limit', 'Debe ser a lo sumo 100.');
    const cursor = q.cursor ? (decodeTimeCursor(p, q.cursor, isUuid) ?? null) : null;
    p.throwIfAny();
    const rows = await this.deps.batches.list(companyId, state as BatchState | null, limit + 1, cursor);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: await this.deps.batches.summaries(page),
      nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null,
    };
  }

  async items(
    caller: string | undefined,
    q: { batchId: string; status?: string | undefined; limit?: number; cursor?: string | undefined },
  ): Promise<{ items: BatchItemRecord[]; nextCursor: string | null }> {
    const b = await ownBatch(this.deps, caller, q.batchId);
    const p = new Problems();
    const status = orNull(q.status ?? null)?.toUpperCase() ?? null;
    if (status && !ITEM_STATUSES.includes(status)) p.add('status', `Debe ser uno de ${ITEM_STATUSES.join(', ')}.`);
    const limit = q.limit && q.limit > 0 ? q.limit : 100;
    if (limit > 1000) p.add('limit', 'Debe ser a lo sumo 1000.');
    let after = 0;
    if (q.cursor) {
      after = Number(Buffer.from(q.cursor, 'base64url').toString('utf8'));
      if (!Number.isInteger(after) || after < 0) p.add('cursor', 'No es un cursor de este listado.');
    }
    p.throwIfAny();
    const rows = await this.deps.batches.items(b.id, status as ItemStatus | null, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page, nextCursor: rows.length > limit && last ? Buffer.from(String(last.seq)).toString('base64url') : null };
  }

  /** Every item in order, in pages (results.csv). */
  async *stream(caller: string | undefined, batchId: string, pageSize = 1_000): AsyncGenerator<BatchItemRecord[]> {
    const b = await ownBatch(this.deps, caller, batchId);
    for (let after = 0; ;) {
      const page = await this.deps.batches.items(b.id, null, after, pageSize);
      if (page.length > 0) yield page;
      if (page.length < pageSize) return;
      after = page[page.length - 1]!.seq;
    }
  }
}
