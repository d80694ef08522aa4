import { AppError, checkFindIds, checkSettlementDate, settlementBatchSize } from '@wallet/platform';
import type { Rail } from '../domain/rails.js';

/**
 * The reconciliation's read of our settled transfers (docs/reconciliation.md, `OurRecords`): one
 * record per transfer the rail settled, in the engine's key order (the id in byte order, which for
 * our lowercase uuids is PostgreSQL's uuid order and `collate "C"` alike).
 *
 * When a transfer settled: COMPLETED at `completed_at` (the ledger's commit of the rail's
 * completion), FAILED at `finished_at` (when the rail's failure was applied: we store no separate
 * provider time). A FAILED transfer the rail never took (no provider id: refused at dispatch,
 * abandoned before it) has no line at the provider and is not in a day's records. Every state
 * before an outcome is PENDING (only `find` returns those). REJECTED and EXPIRED never reached the
 * rail: neither returns them.
 */
export interface SettlementRecord {
  ourId: string;
  providerId: string | null;
  status: 'COMPLETED' | 'FAILED' | 'PENDING';
  amountCents: bigint;
  /** Null only for PENDING. */
  settledAt: Date | null;
  companyId: string;
  /** find only: the money exception still open about it (docs/reconciliation.md). */
  openExceptionId?: string;
  /** The trace context stored with the transfer (the reconciliation links its spans to it). */
  traceparent?: string;
}

export interface SettlementReader {
  /** The day's settled records of `rail` with id > `afterId`, in id order, at most `limit`. */
  settledPage(rail: Rail, date: string, afterId: string | null, limit: number): Promise<SettlementRecord[]>;
  /** Records of any day (and PENDING ones) with these ids. */
  find(rail: Rail, ids: readonly string[]): Promise<SettlementRecord[]>;
}

const RAILS: Record<string, Rail> = { breb: 'BREB', ach: 'ACH' };

function railOf(rail: string): Rail {
  const r = RAILS[rail];
  if (!r) throw new AppError('INVALID_REQUEST', `rail ${JSON.stringify(rail)}: transfer serves breb and ach`);
  return r;
}

export class TransferSettlements {
  constructor(private readonly reader: SettlementReader) {}

  /** The day's records in key order, `batchSize` per batch: keyset pages, one page in memory at a time. */
  async *list(rail: string, date: string, batchSize = 0): AsyncGenerator<SettlementRecord[]> {
    const r = railOf(rail);
    checkSettlementDate(date);
    const limit = settlementBatchSize(batchSize);
    let after: string | null = null;
    for (;;) {
      const page = await this.reader.settledPage(r, date, after, limit);
      if (page.length > 0) yield page;
      if (page.length < limit) return;
      after = page[page.length - 1]!.ourId;
    }
  }

  async find(rail: string, ids: readonly string[]): Promise<SettlementRecord[]> {
    const r = railOf(rail);
    checkFindIds(ids);
    // Only ours can match: a report's id that is not a transfer id (not a uuid) has no record.
    const uuids = [...new Set(ids.map((id) => id.toLowerCase()))].filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id));
    if (uuids.length === 0) return [];
    return this.reader.find(r, uuids);
  }
}
