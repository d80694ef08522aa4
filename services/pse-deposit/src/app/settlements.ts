import { AppError, checkFindIds, checkSettlementDate, settlementBatchSize } from '@wallet/platform';

/**
 * The reconciliation's read of our PSE settlements (docs/reconciliation.md, `OurRecords`, rail
 * `pse`): one record per leg the provider reports, each on the Bogotá day it happened:
 *  - the payment leg (IN): ASSIGNED once the provider's payment was applied (CREDITING, ASSIGNED,
 *    and still after a reversal), at `provider_confirmed_at` (the provider's signed payment time);
 *    or FAILED, at `failed_at` (when the failure was applied; migration 0005);
 *  - the reversal leg (OUT): REVERSED once the provider's reversal was applied (REVERSING,
 *    REVERSED), at `reversed_at` (entering REVERSING);
 *  - one refund leg (OUT) per return of the deposit to its payer (`deposit_returns`, migration 0011):
 *    REFUNDED once RETURNED, at `returned_at` (the provider's refund time), its `ourId` the return id
 *    (`ret_…`: the provider's report echoes it as the REFUNDED line's our_id), its provider id the
 *    deposit's link.
 * A link still waiting (PENDING_CONFIRM) is one PENDING record (only `find` returns it); an EXPIRED
 * link that was never paid has no line and no record; a refund being sent or released (SENDING,
 * RELEASING) is a PENDING OUT record with stepOwed (only `find`), one RESERVING or FAILED none. Key
 * order: the id in byte order (`collate "C"`: deposits' `dep_…` before returns' `ret_…`), then the
 * payment before the reversal.
 */
export interface PseLeg {
  ourId: string;
  providerId: string | null;
  status: 'ASSIGNED' | 'FAILED' | 'REVERSED' | 'REFUNDED' | 'PENDING';
  direction: 'IN' | 'OUT';
  amountCents: bigint;
  settledAt: Date | null;
  companyId: string;
  /** find only (accept_provider waits for the owner): the money exception still open about the deposit, and a money step owed. */
  openExceptionId?: string;
  stepOwed?: boolean;
  /** The trace context stored with the deposit (the reconciliation links its spans to it). */
  traceparent?: string;
}

export interface PseSettlementReader {
  /** The day's payment legs (ASSIGNED or FAILED) with id > `afterId`, in id order, at most `limit`. */
  paymentLegs(date: string, afterId: string | null, limit: number): Promise<PseLeg[]>;
  /** The day's reversal legs with id > `afterId`, in id order, at most `limit`. */
  reversalLegs(date: string, afterId: string | null, limit: number): Promise<PseLeg[]>;
  /** The day's refund legs (RETURNED returns) with return id > `afterId`, in id order, at most `limit`. */
  refundLegs(date: string, afterId: string | null, limit: number): Promise<PseLeg[]>;
  /** Every leg (and PENDING links) of these deposits, and the legs of these returns (refunds), any day. */
  find(ids: readonly string[]): Promise<PseLeg[]>;
}

function checkRail(rail: string): void {
  if (rail !== 'pse') throw new AppError('INVALID_REQUEST', `rail ${JSON.stringify(rail)}: pse-deposit serves pse`);
}

/** Key order of two legs: id in code-unit order (the engine's; ids are ASCII), then IN before OUT. */
export function legOrder(a: PseLeg, b: PseLeg): number {
  if (a.ourId !== b.ourId) return a.ourId < b.ourId ? -1 : 1;
  return a.direction === b.direction ? 0 : a.direction === 'IN' ? -1 : 1;
}

/** Pages through one leg's keyset query, one page in memory. */
async function* pages(read: (after: string | null, limit: number) => Promise<PseLeg[]>, limit: number): AsyncGenerator<PseLeg> {
  let after: string | null = null;
  for (;;) {
    const page = await read(after, limit);
    yield* page;
    if (page.length < limit) return;
    after = page[page.length - 1]!.ourId;
  }
}

export class PseSettlements {
  constructor(private readonly reader: PseSettlementReader) {}

  /** The day's legs in key order, `batchSize` per batch: the three legs' keyset reads (payments, reversals, refunds) merged. */
  async *list(rail: string, date: string, batchSize = 0): AsyncGenerator<PseLeg[]> {
    checkRail(rail);
    checkSettlementDate(date);
    const limit = settlementBatchSize(batchSize);
    const sources = [
      pages((after, n) => this.reader.paymentLegs(date, after, n), limit),
      pages((after, n) => this.reader.reversalLegs(date, after, n), limit),
      pages((after, n) => this.reader.refundLegs(date, after, n), limit),
    ];
    try {
      const heads: Array<IteratorResult<PseLeg>> = [];
      for (const s of sources) heads.push(await s.next());
      let batch: PseLeg[] = [];
      for (;;) {
        // The smallest head in key order (ties: the earlier source, the payment before the reversal).
        let next = -1;
        for (let i = 0; i < heads.length; i++) {
          const h = heads[i]!;
          if (!h.done && (next < 0 || legOrder(h.value, heads[next]!.value as PseLeg) < 0)) next = i;
        }
        if (next < 0) break;
        batch.push(heads[next]!.value as PseLeg);
        heads[next] = await sources[next]!.next();
        if (batch.length >= limit) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      for (const s of sources) await s.return(undefined);
    }
  }

  async find(rail: string, ids: readonly string[]): Promise<PseLeg[]> {
    checkRail(rail);
    // Deposits' ids, and returns' ids (a refund's record, as its REFUNDED line names it).
    const unique = [...new Set(checkFindIds(ids))].filter((id) => /^(?:dep|ret)_[a-z0-9]{24}$/.test(id));
    if (unique.length === 0) return [];
    return (await this.reader.find(unique)).sort(legOrder);
  }
}
