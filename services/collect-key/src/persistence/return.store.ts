import { centsFromDb, currentTraceparent, type Database, type PreparedTx } from '@wallet/platform';
import { LIVE_RETURN_STATES, MAX_RETURNS_PER_PAYMENT, type ReturnReason, type ReturnState } from '../domain/return-machine.js';
import type { OutboxEvent } from '../app/ports.js';
import type { NewReturn, ReturnPatch, ReturnRecord, ReturnRefusal, ReturnStore } from '../app/return-ports.js';

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

/** A return with its payment's gross and payer, and the payment's returns that are not FAILED. */
const SELECT = `
  select r.id, r.deposit_id, r.company_id, r.provider_transfer_id, r.inflow_key, r.amount::text as amount, r.reason, r.description,
         r.status, r.hold_id::text as hold_id, r.movement_id::text as movement_id, r.failure_code, r.failure_message, r.requested_by,
         r.returned_at, r.parked, r.traceparent, r.created_at, p.amount::text as deposit_amount,
         (select coalesce(sum(o.amount), 0) from collect_key.payment_returns o where o.deposit_id = r.deposit_id and o.status <> 'FAILED')::text as returned_amount,
         p.payer_name, p.payer_document, p.payer_bank
    from collect_key.payment_returns r join collect_key.payments p on p.deposit_id = r.deposit_id`;

async function history(tx: PreparedTx, id: string, from: ReturnState | null, to: ReturnState, reason: string): Promise<void> {
  await tx.query(`insert into collect_key.payment_return_history (return_id, from_status, to_status, reason) values ($1, $2, $3, $4)`, [id, from, to, reason]);
}

async function appendOutbox(tx: PreparedTx, e: OutboxEvent): Promise<void> {
  const traceparent = currentTraceparent();
  await tx.query(`insert into collect_key.outbox (id, subject, payload, headers) values ($1::uuid, $2, $3::jsonb, $4::jsonb)`, [
    e.id,
    e.subject,
    JSON.stringify(e.payload),
    JSON.stringify(traceparent ? { traceparent } : {}),
  ]);
}

/** collect_key.payment_returns: the returns of credited Bre-B payments and their saga's writes. */
export class SqlReturnStore implements ReturnStore {
  constructor(
    private readonly db: Database,
    private readonly eventsWritten: () => void = () => {},
  ) {}

  async insert(n: NewReturn): Promise<ReturnRecord | ReturnRefusal> {
    const out = await this.db.preparedTx(async (tx): Promise<ReturnRecord | ReturnRefusal> => {
      const [p] = await tx.query<{ status: string; amount: string; provider_transfer_id: string; returned: string; count: string; via_assignment: boolean }>(
        `select p.status, p.amount::text as amount, p.provider_transfer_id,
                (select coalesce(sum(o.amount), 0) from collect_key.payment_returns o where o.deposit_id = p.deposit_id and o.status <> 'FAILED')::text as returned,
                (select count(*) from collect_key.payment_returns o where o.deposit_id = p.deposit_id)::text as count,
                exists (select 1 from collect_key.payment_history h where h.deposit_id = p.deposit_id and h.to_state = 'ASSIGNING') as via_assignment
           from collect_key.payments p where p.deposit_id = $1 and p.company_id = $2 for update of p`,
        [n.depositId, n.companyId],
      );
      if (!p) return { refused: 'NOT_FOUND' };
      if (p.status !== 'ASSIGNED') return { refused: 'NOT_ASSIGNED', status: p.status };
      const gross = BigInt(p.amount);
      const returned = BigInt(p.returned);
      if (Number(p.count) >= MAX_RETURNS_PER_PAYMENT) return { refused: 'TOO_MANY', count: Number(p.count) };
      const amount = n.amount ?? gross - returned;
      if (amount <= 0n || returned + amount > gross) return { refused: 'EXCEEDS', gross, returned };
      await tx.query(
        `insert into collect_key.payment_returns (id, deposit_id, company_id, provider_transfer_id, inflow_key, amount, reason, description,
           status, movement_id, requested_by, traceparent)
         values ($1, $2, $3, $4, $5, $6::bigint, $7, $8, 'RESERVING', $9::uuid, $10, $11)`,
        [
          n.id,
          n.depositId,
          n.companyId,
          p.provider_transfer_id,
          n.inflowKey(p.via_assignment),
          amount.toString(),
          n.reason,
          n.description,
          n.movementId,
          n.requestedBy,
          currentTraceparent() ?? null,
        ],
      );
      await history(tx, n.id, null, 'RESERVING', `requested by ${n.requestedBy}`);
      const [row] = await tx.query<ReturnRow>(`${SELECT} where r.id = $1`, [n.id]);
      return toReturn(row!);
    });
    return out;
  }

  async transition(t: {
    id: string;
    from: readonly ReturnState[];
    to: ReturnState;
    reason: string;
    patch?: ReturnPatch;
    event?: (r: ReturnRecord) => OutboxEvent;
  }) {
    let wrote = false;
    const rec = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<{ prev: ReturnState }>(
        `update collect_key.payment_returns r set status = $3, step_at = clock_timestamp(), updated_at = clock_timestamp(),
           hold_id = coalesce($4::uuid, r.hold_id), returned_at = coalesce($5::timestamptz, r.returned_at),
           failure_code = coalesce($6, r.failure_code), failure_message = coalesce($7, r.failure_message)
          from (select id, status as prev from collect_key.payment_returns where id = $1 for update) old
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
      await history(tx, t.id, rows[0].prev, t.to, t.reason);
      const [row] = await tx.query<ReturnRow>(`${SELECT} where r.id = $1`, [t.id]);
      const rec = toReturn(row!);
      if (t.event) {
        await appendOutbox(tx, t.event(rec));
        wrote = true;
      }
      return rec;
    });
    if (wrote) this.eventsWritten();
    return rec;
  }

  async byId(id: string) {
    const [r] = await this.db.prepared<ReturnRow>(`${SELECT} where r.id = $1`, [id]);
    return r ? toReturn(r) : undefined;
  }

  async byDeposit(depositId: string) {
    const rows = await this.db.prepared<ReturnRow>(`${SELECT} where r.deposit_id = $1 order by r.created_at, r.id`, [depositId]);
    return rows.map(toReturn);
  }

  async park(id: string) {
    await this.db.prepared(`update collect_key.payment_returns set parked = true, updated_at = clock_timestamp() where id = $1`, [id]);
  }

  async leaseStale(graceSeconds: number, batch: number) {
    const rows = await this.db.prepared<{ id: string }>(
      `with due as (
         select id from collect_key.payment_returns
          where status = any($1::text[]) and not parked and step_at < clock_timestamp() - $2::int * interval '1 second'
          order by step_at limit $3 for update skip locked)
       update collect_key.payment_returns r set step_at = clock_timestamp() from due where r.id = due.id returning r.id`,
      [[...LIVE_RETURN_STATES], graceSeconds, batch],
    );
    const out: ReturnRecord[] = [];
    for (const { id } of rows) {
      const r = await this.byId(id);
      if (r) out.push(r);
    }
    return out;
  }
}
