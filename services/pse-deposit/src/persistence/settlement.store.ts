import { bogotaDaySql, centsFromDb, type Database } from '@wallet/platform';
import type { PseLeg, PseSettlementReader } from '../app/settlements.js';

/**
 * The PSE legs as migration 0005's indexes have them (`deposits_payment_leg_idx`,
 * `deposits_reversal_leg_idx`): these predicates and expressions must stay exactly the indexes',
 * so each page is one index range scan `(day, id > last)`.
 */
/** Booked by the ledger (only booked legs are settled, docs/reconciliation.md "One case per external movement"): CREDITING still owes the credit, so its payment leg is not settled. */
const PAID_STATES = `('ASSIGNED', 'REVERSING', 'REVERSED')`;
const PAYMENT_LEG = `source = 'PSE' and (status = 'FAILED' or (status in ${PAID_STATES} and provider_confirmed_at is not null))`;
const PAYMENT_AT = `case status when 'FAILED' then failed_at else provider_confirmed_at end`;
const REVERSAL_LEG = `source = 'PSE' and status = 'REVERSED'`;
const COLS = `id, provider_transfer_id, status, amount::text as amount, company_id, provider_confirmed_at, failed_at, reversed_at, traceparent`;

/**
 * The refunds as migration 0011's index has them (`deposit_returns_settled_idx`: the Bogotá day of
 * `returned_at`, then the return id `collate "C"`, where RETURNED). The deposit's provider id is a
 * scalar subquery on its primary key, so the page stays one range scan in index order, unsorted.
 */
const REFUND_LEG = `r.status = 'RETURNED'`;
const REFUND_COLS = `r.id, r.deposit_id, r.status, r.amount::text as amount, r.company_id, r.returned_at, r.traceparent,
  (select d.provider_transfer_id from pse_deposit.deposits d where d.id = r.deposit_id) as provider_transfer_id`;

/** One keyset page of the day's refunds: ($1 date, [$2 last return id,] limit). Exported for the index test (EXPLAIN). */
export function refundPageSql(after: boolean): string {
  const day = `${REFUND_LEG} and ${bogotaDaySql('r.returned_at')} = $1::date`;
  return after
    ? `select ${REFUND_COLS} from pse_deposit.deposit_returns r where ${day} and r.id collate "C" > $2 order by r.id collate "C" limit $3`
    : `select ${REFUND_COLS} from pse_deposit.deposit_returns r where ${day} order by r.id collate "C" limit $2`;
}

interface RefundRow {
  id: string;
  deposit_id: string;
  status: string;
  amount: string;
  company_id: string;
  returned_at: Date | string | null;
  traceparent: string | null;
  provider_transfer_id: string | null;
  open_exception_id?: string | null;
}

function refundLeg(r: RefundRow, status: 'REFUNDED' | 'PENDING', settledAt: Date | null): PseLeg {
  return {
    ourId: r.id,
    providerId: r.provider_transfer_id,
    status,
    direction: 'OUT',
    amountCents: centsFromDb(r.amount),
    settledAt,
    companyId: r.company_id,
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
  };
}

/** One keyset page of a leg's day: ($1 date, [$2 last id,] limit). Exported for the index test (EXPLAIN). */
export function legPageSql(leg: 'payment' | 'reversal', after: boolean): string {
  const day = leg === 'payment' ? `${PAYMENT_LEG} and ${bogotaDaySql(PAYMENT_AT)} = $1::date` : `${REVERSAL_LEG} and ${bogotaDaySql('reversed_at')} = $1::date`;
  return after
    ? `select ${COLS} from pse_deposit.deposits where ${day} and id collate "C" > $2 order by id collate "C" limit $3`
    : `select ${COLS} from pse_deposit.deposits where ${day} order by id collate "C" limit $2`;
}

interface Row {
  id: string;
  provider_transfer_id: string | null;
  status: string;
  amount: string;
  company_id: string;
  provider_confirmed_at: Date | string | null;
  failed_at: Date | string | null;
  reversed_at: Date | string | null;
  open_exception_id?: string | null;
  traceparent: string | null;
}

const at = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));
const PAID = ['ASSIGNED', 'REVERSING', 'REVERSED'];

function leg(r: Row, status: PseLeg['status'], direction: PseLeg['direction'], settledAt: Date | null): PseLeg {
  return {
    ourId: r.id,
    providerId: r.provider_transfer_id,
    status,
    direction,
    amountCents: centsFromDb(r.amount),
    settledAt,
    companyId: r.company_id,
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
  };
}
const paymentLeg = (r: Row) => (r.status === 'FAILED' ? leg(r, 'FAILED', 'IN', at(r.failed_at)) : leg(r, 'ASSIGNED', 'IN', at(r.provider_confirmed_at)));
const reversalLeg = (r: Row) => leg(r, 'REVERSED', 'OUT', at(r.reversed_at));

export class SqlPseSettlementReader implements PseSettlementReader {
  constructor(private readonly db: Database) {}

  async paymentLegs(date: string, afterId: string | null, limit: number): Promise<PseLeg[]> {
    return (await this.page('payment', date, afterId, limit)).map(paymentLeg);
  }

  async reversalLegs(date: string, afterId: string | null, limit: number): Promise<PseLeg[]> {
    return (await this.page('reversal', date, afterId, limit)).map(reversalLeg);
  }

  async refundLegs(date: string, afterId: string | null, limit: number): Promise<PseLeg[]> {
    const rows =
      afterId === null
        ? await this.db.prepared<RefundRow>(refundPageSql(false), [date, limit])
        : await this.db.prepared<RefundRow>(refundPageSql(true), [date, afterId, limit]);
    return rows.map((r) => refundLeg(r, 'REFUNDED', at(r.returned_at)));
  }

  /** One keyset page: ids compared and ordered `collate "C"`, as the index and the engine have them. */
  private page(leg: 'payment' | 'reversal', date: string, afterId: string | null, limit: number): Promise<Row[]> {
    return afterId === null
      ? this.db.prepared<Row>(legPageSql(leg, false), [date, limit])
      : this.db.prepared<Row>(legPageSql(leg, true), [date, afterId, limit]);
  }

  async find(ids: readonly string[]): Promise<PseLeg[]> {
    const depositIds = ids.filter((id) => id.startsWith('dep_'));
    const returnIds = ids.filter((id) => id.startsWith('ret_'));
    return [...(depositIds.length > 0 ? await this.findDeposits(depositIds) : []), ...(returnIds.length > 0 ? await this.findRefunds(returnIds) : [])];
  }

  /**
   * The refunds of these return ids: RETURNED settled (REFUNDED); SENDING or RELEASING a PENDING OUT
   * leg with a money step owed (the provider's refund or the release of its hold: not booked yet);
   * RESERVING (nothing sent yet) and FAILED (nothing refunded) none.
   */
  private async findRefunds(ids: readonly string[]): Promise<PseLeg[]> {
    const rows = await this.db.prepared<RefundRow>(
      `select ${REFUND_COLS},
        (select e.id from pse_deposit.money_exceptions e where e.status <> 'RESOLVED' and e.resource_id = r.id order by e.opened_at limit 1) as open_exception_id
      from pse_deposit.deposit_returns r where r.id = any($1::text[]) and r.status in ('RETURNED', 'SENDING', 'RELEASING')`,
      [ids],
    );
    return rows.map((r): PseLeg => {
      const exc = r.open_exception_id ? { openExceptionId: r.open_exception_id } : {};
      return r.status === 'RETURNED'
        ? { ...refundLeg(r, 'REFUNDED', at(r.returned_at)), ...exc }
        : { ...refundLeg(r, 'PENDING', null), ...exc, stepOwed: true };
    });
  }

  private async findDeposits(ids: readonly string[]): Promise<PseLeg[]> {
    // With the money exception still open about each deposit (a correction waits for it: accept_provider waits for the owner).
    const rows = await this.db.prepared<Row>(
      `select ${COLS},
        (select e.id from pse_deposit.money_exceptions e where e.status <> 'RESOLVED' and e.resource_id = d.id order by e.opened_at limit 1) as open_exception_id
      from pse_deposit.deposits d where id = any($1::text[]) and source = 'PSE'`,
      [ids],
    );
    return rows.flatMap((r): PseLeg[] => {
      const exc = r.open_exception_id ? { openExceptionId: r.open_exception_id } : {};
      // A step owed (CREDITING: the credit; REVERSING: the debit back) is PENDING: not booked yet.
      const owed = { ...exc, stepOwed: true };
      if (r.status === 'PENDING_CONFIRM') return [{ ...leg(r, 'PENDING', 'IN', null), ...exc }];
      if (r.status === 'CREDITING') return [{ ...leg(r, 'PENDING', 'IN', null), ...owed }];
      if (r.status === 'FAILED') return [{ ...paymentLeg(r), ...exc }];
      // An expired link was never paid here: no record, unless an exception says the provider was paid (PAID_AFTER_EXPIRY).
      if (r.status === 'EXPIRED') return r.open_exception_id ? [{ ...leg(r, 'PENDING', 'IN', null), ...exc }] : [];
      const legs: PseLeg[] = [];
      if (PAID.includes(r.status) && r.provider_confirmed_at !== null) legs.push({ ...paymentLeg(r), ...exc });
      if (r.status === 'REVERSING') legs.push({ ...leg(r, 'PENDING', 'OUT', null), ...owed });
      if (r.status === 'REVERSED') legs.push({ ...reversalLeg(r), ...exc });
      return legs;
    });
  }
}
