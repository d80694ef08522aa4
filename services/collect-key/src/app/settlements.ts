import { AppError, checkFindIds, checkSettlementDate, settlementBatchSize } from '@wallet/platform';

/**
 * The reconciliation's read of our inbound Bre-B payments (docs/reconciliation.md, `OurRecords`,
 * rail breb-inbound): one record per payment, keyed by the network's transfer id (the network has
 * no id of ours), ASSIGNED (to a live key) or UNASSIGNED, settled at `received_at` (the network's
 * reception time, from its notification). A payment that is not final on our side (its credit or
 * hold still owed, parked for an operator, or refused by the ledger: CREDITING, HOLDING,
 * CREDIT_REFUSED) is PENDING: never listed as a settled record of its day, and `find` returns it
 * PENDING without a settlement time, so the network's line for it is a status break until it is final.
 */
export interface InboundSettlement {
  depositId: string;
  providerTransferId: string;
  status: 'ASSIGNED' | 'UNASSIGNED' | 'PENDING';
  amountCents: bigint;
  receivedAt: Date;
  companyId: string;
}

export interface InboundSettlementReader {
  /** The day's settled (final) payments with provider id > `afterId` (collate "C"), in that order, at most `limit`. */
  settledPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]>;
  /** Payments of any day with these provider ids (PENDING ones included). */
  find(providerIds: readonly string[]): Promise<InboundSettlement[]>;
}

function checkRail(rail: string): void {
  if (rail !== 'breb-inbound') throw new AppError('INVALID_REQUEST', `rail ${JSON.stringify(rail)}: collect-key serves breb-inbound`);
}

export class InboundSettlements {
  constructor(private readonly reader: InboundSettlementReader) {}

  /** The day's payments in key order, `batchSize` per batch: keyset pages, one in memory at a time. */
  async *list(rail: string, date: string, batchSize = 0): AsyncGenerator<InboundSettlement[]> {
    checkRail(rail);
    checkSettlementDate(date);
    const limit = settlementBatchSize(batchSize);
    let after: string | null = null;
    for (;;) {
      const page = await this.reader.settledPage(date, after, limit);
      if (page.length > 0) yield page;
      if (page.length < limit) return;
      after = page[page.length - 1]!.providerTransferId;
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
