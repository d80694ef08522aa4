import { centsFromDb } from '../money/money.js';
import { currentTraceparent } from '../telemetry/telemetry.js';
import type { Database, PreparedTx } from '../db/database.js';
import { MoneyExceptionsTable, type NewMoneyException } from '../db/money-exceptions.js';
import { LIVE_RETURN_STATES, MAX_RETURNS_PER_PAYMENT, RETURN_EXCEPTION_KIND, type ReturnReason, type ReturnState } from './return-machine.js';
import type { NewReturn, ReturnEventOut, ReturnPatch, ReturnRecord, ReturnRefusal, ReturnStore } from './ports.js';

/**
 * Where an owning service keeps its returns (the same columns in each: collect-key's migration 0010,
 * pse-deposit's 0011) and how its payments table reads, as SQL over the alias `p`.
 */
export interface ReturnsTables {
  /** The service's schema; its outbox is `<schema>.outbox`. */
  schema: string;
  returns: string;
  history: string;
  payments: {
    table: string;
    /** The deposit id column. */
    id: string;
    /** Which rows of the table are this service's payments (others read as not found). */
    scope: string;
    /** A payment that may be returned (credited to the wallet). */
    returnable: string;
    providerId: string;
    payerName: string;
    payerDocument: string;
    payerBank: string;
    /** Given to `NewReturn.inflowKey` (e.g. whether a held payment was assigned later). */
    inflowHint: string;
  };
}

interface ReturnRow {
  id: string;
  deposit_id: string;
  company_id: string;
  provider_transfer_id: string;
  inflow_key: string;
  amount: string;
  reason: ReturnReason;
  description: string | null;
  status: ReturnState;
  hold_id: string | null;
  movement_id: string;
  failure_code: string | null;
  failure_message: string | null;
  requested_by: string;
  returned_at: Date | string | null;
  parked: boolean;
  traceparent: string | null;
  created_at: Date | string;
  deposit_amount: string;
  returned_amount: string;
  payer_name: string | null;
  payer_document: string | null;
  payer_bank: string | null;
}

const toDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

function toReturn(r: ReturnRow): ReturnRecord {
  return {
    id: r.id,
    depositId: r.deposit_id,
    companyId: r.company_id,
    providerTransferId: r.provider_transfer_id,
    inflowKey: r.inflow_key,
    amount: centsFromDb(r.amount),
    reason: r.reason,
    description: r.description,
    status: r.status,
    holdId: r.hold_id,
    movementId: r.movement_id,
    failureCode: r.failure_code,
    failureMessage: r.failure_message,
    requestedBy: r.requested_by,
    returnedAt: r.returned_at === null ? null : toDate(r.returned_at),
    parked: r.parked,
    traceparent: r.traceparent,
    createdAt: toDate(r.created_at),
    depositAmount: centsFromDb(r.deposit_amount),
    returnedAmount: centsFromDb(r.returned_amount),
    payerName: r.payer_name,
    payerDocument: r.payer_document,
    payerBank: r.payer_bank,
  };
}

/**
 * A migration's statement: a RETURN_CLOSE_REFUSED money exception for every return parked before parking opened one
 * (once: one per kind and return), with what the return says (the ledger's refusal itself was only logged then).
 */
export function parkedReturnExceptionsSql(schema: string, returns: string, rail: 'BREB' | 'PSE'): string {
  return `insert into ${schema}.money_exceptions (id, kind, company_id, rail, resource_id, ours, theirs)
    select 'exc_' || replace(gen_random_uuid()::text, '-', ''), '${RETURN_EXCEPTION_KIND}', r.company_id, '${rail}', r.id,
           jsonb_build_object('state', r.status, 'step', case when r.status = 'RELEASING' then 'release' else 'commit' end,
             'railOutcome', case when r.status = 'RELEASING' then 'REFUSED' else 'RETURNED' end, 'depositId', r.deposit_id,
             'providerTransferId', r.provider_transfer_id, 'amount', r.amount::text, 'holdId', r.hold_id, 'movementId', r.movement_id,
             'reason', r.reason, 'requestedBy', r.requested_by),
           jsonb_build_object('source', 'ledger', 'code', null, 'message', 'parked before its exception was recorded (the refusal is in the logs)')
      from ${schema}.${returns} r where r.parked
    on conflict (kind, resource_id) do nothing`;
}

/** The returns of credited payments in an owning service's schema, and their saga's writes (ReturnStore). */
export class SqlReturnStore implements ReturnStore {
  private readonly returns: string;
  private readonly history: string;
  private readonly select: string;

  constructor(
    private readonly db: Database,
    private readonly t: ReturnsTables,
    private readonly eventsWritten: () => void = () => {},
  ) {
    this.returns = `${t.schema}.${t.returns}`;
    this.history = `${t.schema}.${t.history}`;
    const p = t.payments;
    // A return with its payment's gross and payer, and the payment's returns that are not FAILED.
    this.select = `
      select r.id, r.deposit_id, r.company_id, r.provider_transfer_id, r.inflow_key, r.amount::text as amount, r.reason, r.description,
             r.status, r.hold_id::text as hold_id, r.movement_id::text as movement_id, r.failure_code, r.failure_message, r.requested_by,
             r.returned_at, r.parked, r.traceparent, r.created_at, p.amount::text as deposit_amount,
             (select coalesce(sum(o.amount), 0) from ${this.returns} o where o.deposit_id = r.deposit_id and o.status <> 'FAILED')::text as returned_amount,
             ${p.payerName} as payer_name, ${p.payerDocument} as payer_document, ${p.payerBank} as payer_bank
        from ${this.returns} r join ${t.schema}.${p.table} p on p.${p.id} = r.deposit_id`;
  }

  private async historyRow(tx: PreparedTx, id: string, from: ReturnState | null, to: ReturnState, reason: string): Promise<void> {
    await tx.query(`insert into ${this.history} (return_id, from_status, to_status, reason) values ($1, $2, $3, $4)`, [id, from, to, reason]);
  }

  private async outbox(tx: PreparedTx, e: ReturnEventOut): Promise<void> {
    const traceparent = currentTraceparent();
    await tx.query(`insert into ${this.t.schema}.outbox (id, subject, payload, headers) values ($1::uuid, $2, $3::jsonb, $4::jsonb)`, [
      e.id,
      e.subject,
      JSON.stringify(e.payload),
      JSON.stringify(traceparent ? { traceparent } : {}),
    ]);
  }

  async insert(n: NewReturn): Promise<ReturnRecord | ReturnRefusal> {
    const p = this.t.payments;
    return this.db.preparedTx(async (tx): Promise<ReturnRecord | ReturnRefusal> => {
      // A caller's own id again (a retry): that return, whatever it became; another payment's: conflict.
      const [again] = await tx.query<ReturnRow>(`${this.select} where r.id = $1`, [n.id]);
      if (again) {
        if (again.deposit_id !== n.depositId || again.company_id !== n.companyId) return { refused: 'ID_TAKEN' };
        return toReturn(again);
      }
      const [row] = await tx.query<{
        status: string;
        returnable: boolean;
        amount: string;
        provider_id: string | null;
        hint: string | null;
        returned: string;
        count: string;
      }>(
        `select p.status, (${p.returnable}) as returnable, p.amount::text as amount, ${p.providerId} as provider_id, (${p.inflowHint})::text as hint,
                (select coalesce(sum(o.amount), 0) from ${this.returns} o where o.deposit_id = p.${p.id} and o.status <> 'FAILED')::text as returned,
                (select count(*) from ${this.returns} o where o.deposit_id = p.${p.id})::text as count
           from ${this.t.schema}.${p.table} p where p.${p.id} = $1 and p.company_id = $2 and (${p.scope}) for update of p`,
        [n.depositId, n.companyId],
      );
      if (!row) return { refused: 'NOT_FOUND' };
      if (!row.returnable || !row.provider_id) return { refused: 'NOT_RETURNABLE', status: row.status };
      const gross = BigInt(row.amount);
      const returned = BigInt(row.returned);
      if (Number(row.count) >= MAX_RETURNS_PER_PAYMENT) return { refused: 'TOO_MANY', count: Number(row.count) };
      const amount = n.amount ?? gross - returned;
      if (amount <= 0n || returned + amount > gross) return { refused: 'EXCEEDS', gross, returned };
      await tx.query(
        `insert into ${this.returns} (id, deposit_id, company_id, provider_transfer_id, inflow_key, amount, reason, description,
           status, movement_id, requested_by, traceparent)
         values ($1, $2, $3, $4, $5, $6::bigint, $7, $8, 'RESERVING', $9::uuid, $10, $11)`,
        [
          n.id,
          n.depositId,
          n.companyId,
          row.provider_id,
          n.inflowKey({ providerTransferId: row.provider_id, hint: row.hint }),
          amount.toString(),
          n.reason,
          n.description,
          n.movementId,
          n.requestedBy,
          currentTraceparent() ?? null,
        ],
      );
      await this.historyRow(tx, n.id, null, 'RESERVING', `requested by ${n.requestedBy}`);
      const [out] = await tx.query<ReturnRow>(`${this.select} where r.id = $1`, [n.id]);
      return toReturn(out!);
    });
  }

  async transition(t: {
    id: string;
    from: readonly ReturnState[];
    to: ReturnState;
    reason: string;
    patch?: ReturnPatch;
    event?: (r: ReturnRecord) => ReturnEventOut;
  }) {
    let wrote = false;
    const rec = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<{ prev: ReturnState }>(
        `update ${this.returns} r set status = $3, step_at = clock_timestamp(), updated_at = clock_timestamp(),
           hold_id = coalesce($4::uuid, r.hold_id), returned_at = coalesce($5::timestamptz, r.returned_at),
           failure_code = coalesce($6, r.failure_code), failure_message = coalesce($7, r.failure_message)
          from (select id, status as prev from ${this.returns} where id = $1 for update) old
         where r.id = old.id and r.status = any($2::text[])
         returning old.prev`,
        [
          t.id,
          [...t.from],
          t.to,
          t.patch?.holdId ?? null,
          t.patch?.returnedAt?.toISOString() ?? null,
          t.patch?.failureCode ?? null,
          t.patch?.failureMessage?.slice(0, 1000) ?? null,
        ],
      );
      if (!rows[0]) return undefined;
      await this.historyRow(tx, t.id, rows[0].prev, t.to, t.reason);
      const [row] = await tx.query<ReturnRow>(`${this.select} where r.id = $1`, [t.id]);
      const rec = toReturn(row!);
      if (t.event) {
        await this.outbox(tx, t.event(rec));
        wrote = true;
      }
      return rec;
    });
    if (wrote) this.eventsWritten();
    return rec;
  }

  async byId(id: string) {
    const [r] = await this.db.prepared<ReturnRow>(`${this.select} where r.id = $1`, [id]);
    return r ? toReturn(r) : undefined;
  }

  async byDeposit(depositId: string) {
    const rows = await this.db.prepared<ReturnRow>(`${this.select} where r.deposit_id = $1 order by r.created_at, r.id`, [depositId]);
    return rows.map(toReturn);
  }

  async park(id: string, exception: NewMoneyException) {
    // The owner's `money_exceptions` is in the same schema: the return is parked with its exception, or neither.
    return this.db.preparedTx(async (tx) => {
      await tx.query(`update ${this.returns} set parked = true, updated_at = clock_timestamp() where id = $1`, [id]);
      const out = await new MoneyExceptionsTable((sql, params) => tx.query(sql, params), this.t.schema).open(exception);
      return { exceptionId: out.exception.id, opened: out.opened };
    });
  }

  async unpark(id: string) {
    await this.db.prepared(`update ${this.returns} set parked = false, step_at = clock_timestamp(), updated_at = clock_timestamp() where id = $1 and parked`, [
      id,
    ]);
  }

  async leaseStale(graceSeconds: number, batch: number) {
    const rows = await this.db.prepared<{ id: string }>(
      `with due as (
         select id from ${this.returns}
          where status = any($1::text[]) and not parked and step_at < clock_timestamp() - $2::int * interval '1 second'
          order by step_at limit $3 for update skip locked)
       update ${this.returns} r set step_at = clock_timestamp() from due where r.id = due.id returning r.id`,
      [[...LIVE_RETURN_STATES], graceSeconds, batch],
    );
    if (rows.length === 0) return [];
    const leased = await this.db.prepared<ReturnRow>(`${this.select} where r.id = any($1::text[]) order by r.step_at`, [rows.map((r) => r.id)]);
    return leased.map(toReturn);
  }
}
