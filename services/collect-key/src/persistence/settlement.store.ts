import { bogotaDaySql, centsFromDb, type Database } from '@wallet/platform';
import type { InboundSettlement, InboundSettlementReader } from '../app/settlements.js';

/** As migration 0004's index `payments_settlements_idx` has them: (received day, provider id collate "C"). */
const DAY = bogotaDaySql('received_at');
/** As migration 0007's index `payments_returns_idx`: (returned day, provider id collate "C"). */
const RETURN_DAY = bogotaDaySql('returned_at');
/**
 * The payment leg (IN): final on our side ASSIGNED, or UNASSIGNED (held; also while and after it is
 * returned: it was received and held); a money step owed, parked or refused: PENDING (never settled).
 */
const IN_STATUS = `case when status = 'ASSIGNED' then 'ASSIGNED' when status in ('UNASSIGNED', 'RETURNING', 'RETURNED') then 'UNASSIGNED' else 'PENDING' end`;
const COLS = `deposit_id, provider_transfer_id, ${IN_STATUS} as status, 'IN' as direction, amount::text as amount, company_id, received_at as settled_at, traceparent`;
const SETTLED = `status in ('ASSIGNED', 'UNASSIGNED', 'RETURNING', 'RETURNED')`;
/** The return leg (OUT) of a payment returned to the payer, settled at the network's return time. */
const RETURN_COLS = `deposit_id, provider_transfer_id, 'RETURNED' as status, 'OUT' as direction, amount::text as amount, company_id, returned_at as settled_at, traceparent`;

/** One keyset page of a day: ($1 date, [$2 last provider id,] limit). Exported for the index test (EXPLAIN). */
export function settledPageSql(after: boolean): string {
  return after
    ? `select ${COLS} from collect_key.payments where ${DAY} = $1::date and provider_transfer_id collate "C" > $2 and ${SETTLED} order by provider_transfer_id collate "C" limit $3`
    : `select ${COLS} from collect_key.payments where ${DAY} = $1::date and ${SETTLED} order by provider_transfer_id collate "C" limit $2`;
}

/** The day's return legs, the same keyset shape over migration 0007's index. */
export function returnsPageSql(after: boolean): string {
  const where = `returned_at is not null and ${RETURN_DAY} = $1::date and status = 'RETURNED'`;
  return after
    ? `select ${RETURN_COLS} from collect_key.payments where ${where} and provider_transfer_id collate "C" > $2 order by provider_transfer_id collate "C" limit $3`
    : `select ${RETURN_COLS} from collect_key.payments where ${where} order by provider_transfer_id collate "C" limit $2`;
}

interface Row {
  deposit_id: string;
  provider_transfer_id: string;
  status: InboundSettlement['status'];
  direction: 'IN' | 'OUT';
  amount: string;
  company_id: string;
  settled_at: Date | string;
  open_exception_id?: string | null;
  step_owed?: boolean;
  traceparent: string | null;
}

const toSettlement = (r: Row): InboundSettlement => ({
  depositId: r.deposit_id,
  providerTransferId: r.provider_transfer_id,
  status: r.status,
  direction: r.direction,
  amountCents: centsFromDb(r.amount),
  settledAt: new Date(r.settled_at),
  companyId: r.company_id,
  ...(r.open_exception_id ? { openExceptionId: r.open_exception_id } : {}),
  ...(r.step_owed ? { stepOwed: true } : {}),
  ...(r.traceparent ? { traceparent: r.traceparent } : {}),
});

/** find only (accept_provider waits for the owner): the money exception still open about the payment, and whether a money step of the leg is owed. */
const CASE_COLS = `(select e.id from collect_key.money_exceptions e where e.status <> 'RESOLVED' and e.resource_id = payments.deposit_id order by e.opened_at limit 1) as open_exception_id`;

export class SqlInboundSettlementReader implements InboundSettlementReader {
  constructor(private readonly db: Database) {}

  async settledPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]> {
    const rows =
      afterId === null
        ? await this.db.prepared<Row>(settledPageSql(false), [date, limit])
        : await this.db.prepared<Row>(settledPageSql(true), [date, afterId, limit]);
    return rows.map(toSettlement);
  }

  async returnsPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]> {
    const rows =
      afterId === null
        ? await this.db.prepared<Row>(returnsPageSql(false), [date, limit])
        : await this.db.prepared<Row>(returnsPageSql(true), [date, afterId, limit]);
    return rows.map(toSettlement);
  }

  async find(providerIds: readonly string[]): Promise<InboundSettlement[]> {
    // A return in flight (RETURNING: the network returned it, the ledger's step is owed) is a PENDING
    // return leg: its line in the network's report is a status break until the books follow.
    const rows = await this.db.prepared<Row>(
      `
      select * from (
        select ${COLS}, ${CASE_COLS}, status in ('CREDITING', 'HOLDING') as step_owed from collect_key.payments where provider_transfer_id = any($1::text[])
        union all
        select ${RETURN_COLS}, ${CASE_COLS}, false as step_owed from collect_key.payments where provider_transfer_id = any($1::text[]) and status = 'RETURNED'
        union all
        select deposit_id, provider_transfer_id, 'PENDING' as status, 'OUT' as direction, amount::text as amount, company_id, received_at as settled_at, traceparent,
          ${CASE_COLS}, true as step_owed
          from collect_key.payments where provider_transfer_id = any($1::text[]) and status = 'RETURNING') legs
      order by provider_transfer_id collate "C", direction`,
      [providerIds],
    );
    return rows.map(toSettlement);
  }
}
