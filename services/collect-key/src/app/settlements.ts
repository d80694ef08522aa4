import { AppError, checkFindIds, checkSettlementDate, settlementBatchSize } from '@wallet/platform';

/**
 * The reconciliation's read of our inbound Bre-B payments (docs/reconciliation.md, `OurRecords`,
 * rail breb-inbound): one record per payment, keyed by the network's transfer id (the network has
 * no id of ours), ASSIGNED (to a live key) or UNASSIGNED, settled at `received_at` (the network's
 * reception time, from its notification). A payment that is not final on our side (its credit or
 * hold still owed, parked for an operator, or refused by the ledger: CREDITING, HOLDING,
 * CREDIT_REFUSED) is PENDING: never listed as a settled record of its day, and `find` returns it
 * PENDING without a settlement time, so the network's line for it is a status break until it is final.
 * A payment returned to the payer has a second record, its return leg (RETURNED, OUT), on the day of
 * the return (the network's report has a RETURNED line for it); the reconciliation keys it apart.
 */
export interface InboundSettlement {
  depositId: string;
  providerTransferId: string;
  /** IN (the payment): ASSIGNED, UNASSIGNED or PENDING; OUT (its return to the payer): RETURNED. */
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

export interface InboundSettlementReader {
  /** The day's settled (final) payments with provider id > `afterId` (collate "C"), in that order, at most `limit`. */
  settledPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]>;
  /** The day's return legs, the same shape. */
  returnsPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]>;
  /** Payments of any day with these provider ids (PENDING ones included), each with its return leg if any. */
  find(providerIds: readonly string[]): Promise<InboundSettlement[]>;
}

/** `x` sorts before `y` in the reconciliation's key order (provider id, then IN before OUT). */
function before(x: InboundSettlement, y: InboundSettlement): boolean {
  if (x.providerTransferId !== y.providerTransferId) return x.providerTransferId < y.providerTransferId;
  return x.direction === 'IN' && y.direction === 'OUT';
}

function checkRail(rail: string): void {
  if (rail !== 'breb-inbound') throw new AppError('INVALID_REQUEST', `rail ${JSON.stringify(rail)}: collect-key serves breb-inbound`);
}

export class InboundSettlements {
  constructor(private readonly reader: InboundSettlementReader) {}

  /**
   * The day's records in the reconciliation's key order (provider id in code-unit order = collate "C";
   * a payment's IN leg before its OUT leg), `batchSize` per batch: two keyset streams (payments
   * received that day, returns made that day) merged, one page of each in memory at a time.
   */
  async *list(rail: string, date: string, batchSize = 0): AsyncGenerator<InboundSettlement[]> {
    checkRail(rail);
    checkSettlementDate(date);
    const limit = settlementBatchSize(batchSize);
    const ins = this.pages((after) => this.reader.settledPage(date, after, limit), limit);
    const outs = this.pages((after) => this.reader.returnsPage(date, after, limit), limit);
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

  private async *pages(page: (after: string | null) => Promise<InboundSettlement[]>, limit: number): AsyncGenerator<InboundSettlement> {
    let after: string | null = null;
    for (;;) {
      const rows = await page(after);
      yield* rows;
      if (rows.length < limit) return;
      after = rows[rows.length - 1]!.providerTransferId;
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
