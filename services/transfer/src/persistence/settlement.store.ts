import { bogotaDaySql, centsFromDb, type Database } from '@wallet/platform';
import type { SettlementReader, SettlementRecord } from '../app/settlements.js';
import type { Rail } from '../domain/rails.js';

/**
 * The settled transfers, as migration 0006's index `transfers_settlements_idx` has them: these
 * expressions must stay exactly those of the index (its predicate and its date), so each page is
 * one index range scan `(rail, day, id > last)`.
 */
const SETTLED = `(state = 'COMPLETED' or (state = 'FAILED' and provider_transfer_id is not null))`;
const SETTLED_AT = `case state when 'COMPLETED' then completed_at else finished_at end`;
const SETTLED_DAY = bogotaDaySql(SETTLED_AT);
const COLS = `id::text as id, provider_transfer_id, state, amount::text as amount, company_id,
  case when state in ('COMPLETED', 'FAILED') then ${SETTLED_AT} end as settled_at, traceparent`;

/**
 * One keyset page of a day: ($1 rail, $2 date, [$3 last id,] limit). Ordered by the uuid column
 * (`transfers.id`: a bare `id` would be the text alias of COLS, a sort instead of the index order; both
 * orders agree, uuid order being its lowercase text's byte order). Exported for the index test (EXPLAIN).
 */
export function settledPageSql(after: boolean): string {
  return after
    ? `select ${COLS} from transfer.transfers where ${SETTLED} and rail = $1 and ${SETTLED_DAY} = $2::date and id > $3::uuid order by transfers.id limit $4`
    : `select ${COLS} from transfer.transfers where ${SETTLED} and rail = $1 and ${SETTLED_DAY} = $2::date order by transfers.id limit $3`;
}

interface Row {
  id: string;
  provider_transfer_id: string | null;
  state: string;
  amount: string;
  company_id: string;
  settled_at: Date | string | null;
  open_exception_id?: string | null;
  traceparent: string | null;
}

function toRecord(r: Row): SettlementRecord {
  const status = r.state === 'COMPLETED' || r.state === 'FAILED' ? r.state : 'PENDING';
  return {
    ourId: r.id,
    providerId: r.provider_transfer_id,
    status,
    amountCents: centsFromDb(r.amount),
    companyId: r.company_id,
    settledAt: status === 'PENDING' || r.settled_at === null ? null : new Date(r.settled_at),
    ...(r.open_exception_id ? { openExceptionId: r.open_exception_id } : {}),
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
  };
}

export class SqlSettlementReader implements SettlementReader {
  constructor(private readonly db: Database) {}

  async settledPage(rail: Rail, date: string, afterId: string | null, limit: number): Promise<SettlementRecord[]> {
    const rows =
      afterId === null
        ? await this.db.prepared<Row>(settledPageSql(false), [rail, date, limit])
        : await this.db.prepared<Row>(settledPageSql(true), [rail, date, afterId, limit]);
    return rows.map(toRecord);
  }

  async find(rail: Rail, ids: readonly string[]): Promise<SettlementRecord[]> {
    // With the money exception still open about each (a correction waits for it: docs/reconciliation.md).
    const rows = await this.db.prepared<Row>(
      `select ${COLS},
        (select e.id from transfer.money_exceptions e where e.status <> 'RESOLVED' and e.resource_id = transfers.id::text order by e.opened_at limit 1) as open_exception_id
      from transfer.transfers
      where id = any($2::uuid[]) and rail = $1 and state not in ('REJECTED', 'EXPIRED') order by id`,
      [rail, ids],
    );
    return rows.map(toRecord);
  }
}
