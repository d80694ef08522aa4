import { AppError, checkFindIds, checkSettlementDate, settlementBatchSize } from '@wallet/platform';

/**
 * The reconciliation's read of our inbound Bre-B payments (docs/reconciliation.md, `OurRecords`,
 * rail breb-inbound): one record per payment, keyed by the network's transfer id (the network has
 * no id of ours), ASSIGNED (to a live key) or UNASSIGNED, settled at `received_at` (the network's
 * reception time, from its notification). A payment whose ledger step (credit or hold) is still in
 * flight is already settled at the network, so it is a record of its day like the others: the
 * money step is the saga's concern, not the report's. There is no PENDING here: a payment exists
 * for us only once the network told us it happened.
 */
export interface InboundSettlement {
  depositId: string;
  providerTransferId: string;
  status: 'ASSIGNED' | 'UNASSIGNED';
  amountCents: bigint;
  receivedAt: Date;
  companyId: string;
}

export interface InboundSettlementReader {
  /** The day's payments with provider id > `afterId` (collate "C"), in that order, at most `limit`. */
  settledPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]>;
  /** Payments of any day with these provider ids. */
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
