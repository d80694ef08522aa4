import type { CreditRequest, CreditRequestStatus } from '../app/credit-request-admin.js';
import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

type ApiRail = CreditRequest['rail'];

interface Row {
  id: string;
  company_id: string;
  rail: ApiRail;
  amount_cents: string;
  reference: string;
  status: CreditRequestStatus;
  requested_by: string;
  requested_at: string;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  movement_id: string | null;
  error_code: string | null;
  completed_at: string | null;
}
const COLS = `id, company_id::text as company_id, rail, amount_cents::text as amount_cents, reference, status,
  requested_by::text as requested_by, ${isoCol('requested_at', 'requested_at')}, decided_by::text as decided_by,
  ${isoCol('decided_at', 'decided_at')}, reason, movement_id, error_code, ${isoCol('completed_at', 'completed_at')}`;
const toRequest = (r: Row): CreditRequest => ({
  id: r.id,
  companyId: r.company_id,
  rail: r.rail,
  amountCents: BigInt(r.amount_cents),
  reference: r.reference,
  status: r.status,
  requestedBy: r.requested_by,
  requestedAt: r.requested_at,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at,
  reason: r.reason,
  movementId: r.movement_id,
  errorCode: r.error_code,
  completedAt: r.completed_at,
});
const one = (rows: Row[]) => (rows[0] ? toRequest(rows[0]) : undefined);

/** A direct operator credit as reserved in gateway.admin_credits. */
export interface HeldCredit {
  rail: ApiRail;
  amountCents: bigint;
  status: string;
}

/**
 * Operators' credits: the maker-checker requests (gateway.credit_requests) and the direct credits'
 * reservations that the running totals count (gateway.admin_credits).
 */
export class CreditRequestStore {
  // ───────────── admin_credits (direct credits) ─────────────

  /** Serialises the operator's and the company's direct credits until the transaction ends (always in this order). */
  async lockTotals(tx: Queryable, operatorId: string, companyId: string): Promise<void> {
    await tx.query(`select pg_advisory_xact_lock(hashtext('gateway.admin_credits:operator'), hashtext(?))`, [operatorId]);
    await tx.query(`select pg_advisory_xact_lock(hashtext('gateway.admin_credits:company'), hashtext(?))`, [companyId]);
  }

  async findCredit(q: Queryable, companyId: string, reference: string): Promise<HeldCredit | undefined> {
    const [held] = await q.query<{ rail: ApiRail; amount_cents: string; status: string }>(
      `select rail, amount_cents::text as amount_cents, status from gateway.admin_credits where company_id = ?::uuid and reference = ?`,
      [companyId, reference],
    );
    return held ? { rail: held.rail, amountCents: BigInt(held.amount_cents), status: held.status } : undefined;
  }

  /** A voided reservation counts again. */
  async reReserve(q: Queryable, companyId: string, reference: string): Promise<void> {
    await q.query(`update gateway.admin_credits set status = 'RESERVED', at = now() where company_id = ?::uuid and reference = ?`, [companyId, reference]);
  }

  /** The operator's and the company's credits not voided within the window. */
  async totals(q: Queryable, operatorId: string, companyId: string, windowSeconds: number): Promise<{ byOperator: bigint; byCompany: bigint }> {
    const [totals] = (await q.query<{ by_operator: string; by_company: string }>(
      `select coalesce(sum(amount_cents) filter (where operator_id = ?::uuid), 0)::text as by_operator,
              coalesce(sum(amount_cents) filter (where company_id = ?::uuid), 0)::text as by_company
         from gateway.admin_credits
        where status <> 'VOID' and at > now() - (?::bigint * interval '1 second') and (operator_id = ?::uuid or company_id = ?::uuid)`,
      [operatorId, companyId, String(windowSeconds), operatorId, companyId],
    )) as [{ by_operator: string; by_company: string }];
    return { byOperator: BigInt(totals.by_operator), byCompany: BigInt(totals.by_company) };
  }

  async reserve(q: Queryable, c: { companyId: string; reference: string; operatorId: string; rail: ApiRail; amountCents: number }): Promise<void> {
    await q.query(
      `insert into gateway.admin_credits (company_id, reference, operator_id, rail, amount_cents, status) values (?::uuid, ?, ?::uuid, ?, ?::bigint, 'RESERVED')`,
      [c.companyId, c.reference, c.operatorId, c.rail, String(c.amountCents)],
    );
  }

  /** A reserved credit the ledger refused for good stops counting. */
  async voidReserved(q: Queryable, companyId: string, reference: string): Promise<void> {
    await q.query(`update gateway.admin_credits set status = 'VOID' where company_id = ?::uuid and reference = ? and status = 'RESERVED'`, [
      companyId,
      reference,
    ]);
  }

  async markCredited(q: Queryable, companyId: string, reference: string, movementId: string): Promise<void> {
    await q.query(`update gateway.admin_credits set status = 'CREDITED', movement_id = ? where company_id = ?::uuid and reference = ?`, [
      movementId,
      companyId,
      reference,
    ]);
  }

  // ───────────── credit_requests (maker-checker) ─────────────

  async insert(
    q: Queryable,
    r: { id: string; companyId: string; rail: ApiRail; amountCents: number; reference: string; requestedBy: string },
  ): Promise<CreditRequest> {
    const [row] = (await q.query<Row>(
      `insert into gateway.credit_requests (id, company_id, rail, amount_cents, reference, status, requested_by)
       values (?, ?::uuid, ?, ?::bigint, ?, 'PENDING_APPROVAL', ?::uuid) returning ${COLS}`,
      [r.id, r.companyId, r.rail, String(r.amountCents), r.reference, r.requestedBy],
    )) as [Row];
    return toRequest(row);
  }

  async get(q: Queryable, id: string): Promise<CreditRequest | undefined> {
    return one(await q.query<Row>(`select ${COLS} from gateway.credit_requests where id = ?`, [id]));
  }

  async findByReference(q: Queryable, companyId: string, reference: string): Promise<CreditRequest | undefined> {
    return one(await q.query<Row>(`select ${COLS} from gateway.credit_requests where company_id = ?::uuid and reference = ?`, [companyId, reference]));
  }

  /** PENDING_APPROVAL → APPROVED by `by`; undefined when it was not pending. */
  async approve(q: Queryable, id: string, by: string): Promise<CreditRequest | undefined> {
    return one(
      await q.query<Row>(
        `update gateway.credit_requests set status = 'APPROVED', decided_by = ?::uuid, decided_at = now()
        where id = ? and status = 'PENDING_APPROVAL' returning ${COLS}`,
        [by, id],
      ),
    );
  }

  /** APPROVED → FAILED with `errorCode`; undefined when it was not APPROVED. */
  async fail(q: Queryable, id: string, errorCode: string): Promise<CreditRequest | undefined> {
    return one(
      await q.query<Row>(
        `update gateway.credit_requests set status = 'FAILED', error_code = ?, completed_at = now()
        where id = ? and status = 'APPROVED' returning ${COLS}`,
        [errorCode, id],
      ),
    );
  }

  /** APPROVED → CREDITED with the ledger's movement; undefined when it was not APPROVED. */
  async credited(q: Queryable, id: string, movementId: string): Promise<CreditRequest | undefined> {
    return one(
      await q.query<Row>(
        `update gateway.credit_requests set status = 'CREDITED', movement_id = ?, completed_at = now()
        where id = ? and status = 'APPROVED' returning ${COLS}`,
        [movementId, id],
      ),
    );
  }

  /** PENDING_APPROVAL → REJECTED by `by`; undefined when it was not pending. */
  async reject(q: Queryable, id: string, by: string, reason: string | null): Promise<CreditRequest | undefined> {
    return one(
      await q.query<Row>(
        `update gateway.credit_requests set status = 'REJECTED', decided_by = ?::uuid, decided_at = now(), completed_at = now(), reason = ?
        where id = ? and status = 'PENDING_APPROVAL' returning ${COLS}`,
        [by, reason, id],
      ),
    );
  }

  /** Newest first (by the millisecond, as the cursor carries it), at most `limit`, strictly before `before` (requested_at, id). */
  async list(q: Queryable, f: { status?: CreditRequestStatus; companyId?: string; before?: [string, string]; limit: number }): Promise<CreditRequest[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (f.status) {
      where.push('status = ?');
      params.push(f.status);
    }
    if (f.companyId) {
      where.push('company_id = ?::uuid');
      params.push(f.companyId);
    }
    if (f.before) {
      where.push(`(date_trunc('milliseconds', requested_at), id) < (?::timestamptz, ?)`);
      params.push(...f.before);
    }
    const rows = await q.query<Row>(
      `select ${COLS} from gateway.credit_requests ${where.length ? `where ${where.join(' and ')}` : ''}
        order by date_trunc('milliseconds', requested_at) desc, id desc limit ${f.limit}`,
      params,
    );
    return rows.map(toRequest);
  }
}
