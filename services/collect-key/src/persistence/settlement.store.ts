import { bogotaDaySql, centsFromDb, type Database } from '@wallet/platform';
import type { InboundSettlement, InboundSettlementReader } from '../app/settlements.js';

/** As migration 0004's index `payments_settlements_idx` has them: (received day, provider id collate "C"). */
const DAY = bogotaDaySql('received_at');
/** Final on our side: ASSIGNED / UNASSIGNED as they are; a money step owed, parked or refused: PENDING (never settled). */
const COLS = `deposit_id, provider_transfer_id, case when status in ('ASSIGNED', 'UNASSIGNED') then status else 'PENDING' end as status,
  amount::text as amount, company_id, received_at`;
const SETTLED = `status in ('ASSIGNED', 'UNASSIGNED')`;

/** One keyset page of a day: ($1 date, [$2 last provider id,] limit). Exported for the index test (EXPLAIN). */
export function settledPageSql(after: boolean): string {
  return after
    ? `select ${COLS} from collect_key.payments where ${DAY} = $1::date and provider_transfer_id collate "C" > $2 and ${SETTLED} order by provider_transfer_id collate "C" limit $3`
    : `select ${COLS} from collect_key.payments where ${DAY} = $1::date and ${SETTLED} order by provider_transfer_id collate "C" limit $2`;
}

interface Row { deposit_id: string; provider_transfer_id: string; status: 'ASSIGNED' | 'UNASSIGNED' | 'PENDING'; amount: string; company_id: string; received_at: Date | string }

const toSettlement = (r: Row): InboundSettlement => ({
  depositId: r.deposit_id, providerTransferId: r.provider_transfer_id, status: r.status, amountCents: centsFromDb(r.amount),
  receivedAt: new Date(r.received_at), companyId: r.company_id,
});

export class SqlInboundSettlementReader implements InboundSettlementReader {
  constructor(private readonly db: Database) {}

  async settledPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]> {
    const rows = afterId === null
      ? await this.db.prepared<Row>(settledPageSql(false), [date, limit])
      : await this.db.prepared<Row>(settledPageSql(true), [date, afterId, limit]);
    return rows.map(toSettlement);
  }

  async find(providerIds: readonly string[]): Promise<InboundSettlement[]> {
    const rows = await this.db.prepared<Row>(`select ${COLS} from collect_key.payments where provider_transfer_id = any($1::text[])
      order by provider_transfer_id collate "C"`, [providerIds]);
    return rows.map(toSettlement);
  }
}
