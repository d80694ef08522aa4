import { bogotaDaySql, centsFromDb, type Database } from '@wallet/platform';
import type { InboundSettlement, InboundSettlementReader, ReturnCursor } from '../app/settlements.js';

/** As migration 0004's index `payments_settlements_idx` has them: (received day, provider id collate "C"). */
const DAY = bogotaDaySql('received_at');
/** As migration 0007's index `payments_returns_idx`: (returned day, provider id collate "C"). */
const RETURN_DAY = bogotaDaySql('returned_at');
/**
 * The payment leg (IN): final on our side ASSIGNED, or UNASSIGNED (held; also while and after it is
 * returned: it was received and held); a money step owed, parked or refused: PENDING (never settled).
 */
const IN_STATUS = `case when status = 'ASSIGNED' then 'ASSIGNED' when status in ('UNASSIGNED', 'RETURNING', 'RETURNED') then 'UNASSIGNED' else 'PENDING' end`;
const COLS = `deposit_id, provider_transfer_id, null::text as return_id, ${IN_STATUS} as status, 'IN' as direction, amount::text as amount, company_id,
  received_at as settled_at, traceparent`;
const SETTLED = `status in ('ASSIGNED', 'UNASSIGNED', 'RETURNING', 'RETURNED')`;
/**
 * The return leg (OUT) of a held payment returned to the payer in full (its one return, whose id at
 * the network is the deposit id), settled at the network's return time.
 */
const RETURN_COLS = `deposit_id, provider_transfer_id, deposit_id as return_id, 'RETURNED' as status, 'OUT' as direction, amount::text as amount, company_id,
  returned_at as settled_at, traceparent`;
/** As migration 0010's index `payment_returns_settled_idx`: (returned day, provider id collate "C", id collate "C") where RETURNED. */
const PART_DAY = bogotaDaySql('returned_at');
/**
 * A return of a credited payment (all or part of it; `payment_returns`, id `ret_…`, the network's
 * returnId): RETURNED, settled at the network's return time.
 */
const PART_COLS = `deposit_id, provider_transfer_id, id as return_id, 'RETURNED' as status, 'OUT' as direction, amount::text as amount, company_id,
  returned_at as settled_at, traceparent`;

/** One keyset page of a day: ($1 date, [$2 last provider id,] limit). Exported for the index test (EXPLAIN). */
export function settledPageSql(after: boolean): string {
  return after
    ? `select ${COLS} from collect_key.payments where ${DAY} = $1::date and provider_transfer_id collate "C" > $2 and ${SETTLED} order by provider_transfer_id collate "C" limit $3`
    : `select ${COLS} from collect_key.payments where ${DAY} = $1::date and ${SETTLED} order by provider_transfer_id collate "C" limit $2`;
}

/**
 * The day's return legs after ($2 provider id, $3 return id), in (provider id, return id) collate "C"
 * order: ($1 date, [$2, $3,] limit). Both kinds, each a keyset range scan of its own index (the held
 * payments' full returns on migration 0007's, the returns of credited payments on 0010's), limited,
 * then merged (Merge Append): one page reads at most twice `limit` rows. A held payment's return id
 * is its deposit id, and it has one return: (provider id, deposit id) is its order.
 */
export function returnsPageSql(after: boolean): string {
  const held = `returned_at is not null and ${RETURN_DAY} = $1::date and status = 'RETURNED'`;
  const parts = `status = 'RETURNED' and ${PART_DAY} = $1::date`;
  const limit = after ? '$4' : '$2';
  const heldAfter = after ? ` and (provider_transfer_id collate "C", deposit_id collate "C") > ($2::text, $3::text)` : '';
  const partsAfter = after ? ` and (provider_transfer_id collate "C", id collate "C") > ($2::text, $3::text)` : '';
  return `select * from (
      (select ${RETURN_COLS} from collect_key.payments where ${held}${heldAfter}
        order by provider_transfer_id collate "C", deposit_id collate "C" limit ${limit})
      union all
      (select ${PART_COLS} from collect_key.payment_returns where ${parts}${partsAfter}
        order by provider_transfer_id collate "C", id collate "C" limit ${limit})
    ) legs order by provider_transfer_id collate "C", return_id collate "C" limit ${limit}`;
}

interface Row {
  deposit_id: string;
  provider_transfer_id: string;
  return_id: string | null;
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
  ...(r.direction === 'OUT' && r.return_id ? { returnId: r.return_id } : {}),
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
/** The same for a return of a credited payment: an exception about the return, or about its payment. */
const RETURN_CASE_COLS = `(select e.id from collect_key.money_exceptions e where e.status <> 'RESOLVED'
    and e.resource_id in (payment_returns.id, payment_returns.deposit_id) order by e.opened_at limit 1) as open_exception_id`;

export class SqlInboundSettlementReader implements InboundSettlementReader {
  constructor(private readonly db: Database) {}

  async settledPage(date: string, afterId: string | null, limit: number): Promise<InboundSettlement[]> {
    const rows =
      afterId === null
        ? await this.db.prepared<Row>(settledPageSql(false), [date, limit])
        : await this.db.prepared<Row>(settledPageSql(true), [date, afterId, limit]);
    return rows.map(toSettlement);
  }

  async returnsPage(date: string, after: ReturnCursor | null, limit: number): Promise<InboundSettlement[]> {
    const rows =
      after === null
        ? await this.db.prepared<Row>(returnsPageSql(false), [date, limit])
        : await this.db.prepared<Row>(returnsPageSql(true), [date, after.providerTransferId, after.returnId, limit]);
    return rows.map(toSettlement);
  }

  async find(providerIds: readonly string[]): Promise<InboundSettlement[]> {
    // A return in flight is a PENDING return leg with a step owed: its line in the network's report is a
    // status break until the books follow. A held payment's full return RETURNING (the network returned
    // it, the ledger's step is owed); a return of a credited payment SENDING (the network's return, then
    // the commit, owed) or RELEASING (its hold being released: the network did not take it). One still
    // RESERVING never reached the network, one FAILED never will: no leg.
    const rows = await this.db.prepared<Row>(
      `
      select * from (
        select ${COLS}, ${CASE_COLS}, status in ('CREDITING', 'HOLDING') as step_owed from collect_key.payments where provider_transfer_id = any($1::text[])
        union all
        select ${RETURN_COLS}, ${CASE_COLS}, false as step_owed from collect_key.payments where provider_transfer_id = any($1::text[]) and status = 'RETURNED'
        union all
        select deposit_id, provider_transfer_id, deposit_id as return_id, 'PENDING' as status, 'OUT' as direction, amount::text as amount, company_id,
          received_at as settled_at, traceparent, ${CASE_COLS}, true as step_owed
          from collect_key.payments where provider_transfer_id = any($1::text[]) and status = 'RETURNING'
        union all
        select ${PART_COLS}, ${RETURN_CASE_COLS}, false as step_owed
          from collect_key.payment_returns where provider_transfer_id = any($1::text[]) and status = 'RETURNED'
        union all
        select deposit_id, provider_transfer_id, id as return_id, 'PENDING' as status, 'OUT' as direction, amount::text as amount, company_id,
          created_at as settled_at, traceparent, ${RETURN_CASE_COLS}, true as step_owed
          from collect_key.payment_returns where provider_transfer_id = any($1::text[]) and status in ('SENDING', 'RELEASING')) legs
      order by provider_transfer_id collate "C", direction, return_id collate "C"`,
      [providerIds],
    );
    return rows.map(toSettlement);
  }
}
