import { AppError, checkFindIds, checkSettlementDate, settlementBatchSize } from '@wallet/platform';

/**
 * The reconciliation's read of our inbound Bre-B payments (docs/reconciliation.md, `OurRecords`,
 * rail breb-inbound): one record per payment, keyed by the network's transfer id (the network has
 * no id of ours), ASSIGNED (to a live key) or UNASSIGNED, settled at `received_at` (the network's
 * reception time, from its notification). A payment that is not final on our side (its credit or
 * hold still owed, parked for an operator, or refused by the ledger: CREDITING, HOLDING,
 * CREDIT_REFUSED) is PENDING: never listed as a settled record of its day, and `find` returns it
 * PENDING without a settlement time, so the network's line for it is a status break until it is final.
 * Each return of a payment to its payer is a record of its own, a return leg (RETURNED, OUT), on the
 * day of the return (the network's report has one RETURNED line per return, its our_id the return's
 * id): the full return of a held payment (`payments.returned_at`, its return id the deposit id), and
 * the returns of a credited payment, all or part of it, any number of them (`payment_returns`, id
 * `ret_…`). The reconciliation keys each apart by (provider id, OUT, return id).
 */
export interface InboundSettlement {
  depositId: string;
  providerTransferId: string;
  /**
   * OUT legs only: the return's id, as the network echoes it (the report line's our_id): the deposit
   * id for the full return of a held payment, `ret_…` for a return of a credited payment. The
   * settlements contract's `our_id` of an OUT leg on breb-inbound carries it (grpc mapping).
   */
  returnId?: string;
  /** IN (the payment): ASSIGNED, UNASSIGNED or PENDING; OUT (a return to the payer): RETURNED, or PENDING while in flight (find only). */
  status: 'ASSIGNED' | 'UNASSIGNED' | 'PENDING' | 'RETURNED';
  direction: 'IN' | 'OUT';
  amountCents: bigint;
  /** The network's time of the leg: its reception (IN), its return (OUT). */
  settledAt: Date;
  companyId: string;
  /** find only (accept_provider waits for the owner): the money exception still open about it, and a money step of this leg owed. */
  openExceptionId?: string;
  stepOwed?: boolean;
  /** The trace context stored with the payment (the reconciliation links its spans to it). */
  traceparent?: string;
}

/** Where a page of return legs starts: after this (provider id, return id), collate "C". */
export interface ReturnCursor {
  providerTransferId: string;
  returnId: string;
}

export interface InboundSettlementReader {
  /** The day's settled (final) payments with provider id > `afterId` (collate "C"), in that order, at most `limit`. */
  settledPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]>;
  /**
   * The day's return legs (RETURNED: both kinds of return) after `after`, in (provider id, return id)
   * collate "C" order, at most `limit`; each with its `returnId`.
   */
  returnsPage(date: string, after: ReturnCursor | null, limit: number): Promise<InboundSettlement[]>;
  /**
   * Payments of any day with these provider ids (PENDING ones included), each with its return legs:
   * the returned ones, and those in flight at the network (PENDING OUT, a step owed).
   */
  find(providerIds: readonly string[]): Promise<InboundSettlement[]>;
}

/**
 * `x` sorts before `y` in the reconciliation's key order: provider id, then IN before OUT, then the
 * return id (code units: collate "C" for these ASCII ids).
 */
function before(x: InboundSettlement, y: InboundSettlement): boolean {
  if (x.providerTransferId !== y.providerTransferId) return x.providerTransferId < y.providerTransferId;
  if (x.direction !== y.direction) return x.direction === 'IN';
  return (x.returnId ?? '') < (y.returnId ?? '');
}

function checkRail(rail: string): void {
  if (rail !== 'breb-inbound') throw new AppError('INVALID_REQUEST', `rail ${JSON.stringify(rail)}: collect-key serves breb-inbound`);
}

export class InboundSettlements {
  constructor(private readonly reader: InboundSettlementReader) {}

  /**
   * The day's records in the reconciliation's key order (provider id in code-unit order = collate "C";
   * a payment's IN leg before its OUT legs, these by return id), `batchSize` per batch: two keyset
   * streams (payments received that day, returns made that day) merged, one page of each in memory at a time.
   */
  async *list(rail: string, date: string, batchSize = 0): AsyncGenerator<InboundSettlement[]> {
    checkRail(rail);
    checkSettlementDate(date);
    const limit = settlementBatchSize(batchSize);
    const ins = this.pages((last) => this.reader.settledPage(date, last?.providerTransferId ?? null, limit), limit);
    const outs = this.pages(
      (last) => this.reader.returnsPage(date, last ? { providerTransferId: last.providerTransferId, returnId: last.returnId ?? '' } : null, limit),
      limit,
    );
    let a = await ins.next();
    let b = await outs.next();
    let batch: InboundSettlement[] = [];
    while (!a.done || !b.done) {
      const takeIn = b.done || (!a.done && !before(b.value, a.value));
      if (takeIn) {
        batch.push(a.value as InboundSettlement);
        a = await ins.next();
      } else {
        batch.push(b.value as InboundSettlement);
        b = await outs.next();
      }
      if (batch.length === limit) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** A keyset stream: each page starts after the last record of the one before. */
  private async *pages(page: (last: InboundSettlement | null) => Promise<InboundSettlement[]>, limit: number): AsyncGenerator<InboundSettlement> {
    let last: InboundSettlement | null = null;
    for (;;) {
      const rows = await page(last);
      yield* rows;
      if (rows.length < limit) return;
      last = rows[rows.length - 1]!;
    }
  }

  /** By the network's ids (the key on this rail). */
  async find(rail: string, providerIds: readonly string[]): Promise<InboundSettlement[]> {
    checkRail(rail);
    const unique = [...new Set(checkFindIds(providerIds))].filter((id) => id.length > 0);
    if (unique.length === 0) return [];
    return this.reader.find(unique);
  }
}
