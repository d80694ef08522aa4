import type { ApprovalAction, ApprovalRequest, ApprovalStatus } from '../app/approval-requests.js';
import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

interface Row {
  id: string;
  action: ApprovalAction;
  company_id: string | null;
  target_id: string | null;
  payload: Record<string, unknown>;
  status: ApprovalStatus;
  requested_by: string;
  requested_at: string;
  not_before: string;
  expires_at: string;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  result: unknown;
  error_code: string | null;
  completed_at: string | null;
}
const COLS = `id, action, company_id::text as company_id, target_id, payload, status, requested_by::text as requested_by,
  ${isoCol('requested_at', 'requested_at')}, ${isoCol('not_before', 'not_before')}, ${isoCol('expires_at', 'expires_at')},
  decided_by::text as decided_by, ${isoCol('decided_at', 'decided_at')}, reason, result, error_code, ${isoCol('completed_at', 'completed_at')}`;
const toRequest = (r: Row): ApprovalRequest => ({
  id: r.id,
  action: r.action,
  companyId: r.company_id,
  targetId: r.target_id,
  payload: r.payload,
  status: r.status,
  requestedBy: r.requested_by,
  requestedAt: r.requested_at,
  notBefore: r.not_before,
  expiresAt: r.expires_at,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at,
  reason: r.reason,
  result: r.result,
  errorCode: r.error_code,
  completedAt: r.completed_at,
});
const one = (rows: Row[]) => (rows[0] ? toRequest(rows[0]) : undefined);

/** Approval requests (gateway.approval_requests); every state change is a compare-and-set on the status. */
export class ApprovalRequestStore {
  /** A PENDING_APPROVAL request, approvable after `delaySeconds` and until `delaySeconds + ttlSeconds`. */
  async insert(
    q: Queryable,
    r: {
      id: string;
      action: ApprovalAction;
      companyId: string | null;
      targetId: string | null;
      payload: Record<string, unknown>;
      dedupeKey: string;
      requestedBy: string;
      delaySeconds: number;
      ttlSeconds: number;
    },
  ): Promise<ApprovalRequest> {
    const [row] = (await q.query<Row>(
      `insert into gateway.approval_requests (id, action, company_id, target_id, payload, dedupe_key, status, requested_by, not_before, expires_at)
       values (?, ?, ?::uuid, ?, ?::jsonb, ?, 'PENDING_APPROVAL', ?::uuid, now() + (?::bigint * interval '1 second'), now() + (?::bigint * interval '1 second'))
       returning ${COLS}`,
      [
        r.id,
        r.action,
        r.companyId,
        r.targetId,
        JSON.stringify(r.payload),
        r.dedupeKey,
        r.requestedBy,
        String(r.delaySeconds),
        String(r.delaySeconds + r.ttlSeconds),
      ],
    )) as [Row];
    return toRequest(row);
  }

  async get(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<ApprovalRequest | undefined> {
    return one(await q.query<Row>(`select ${COLS} from gateway.approval_requests where id = ?${opts.forUpdate ? ' for update' : ''}`, [id]));
  }

  /** The open (PENDING_APPROVAL or APPROVED) request for a change. */
  async findOpenByKey(q: Queryable, dedupeKey: string): Promise<ApprovalRequest | undefined> {
    return one(
      await q.query<Row>(`select ${COLS} from gateway.approval_requests where dedupe_key = ? and status in ('PENDING_APPROVAL', 'APPROVED')`, [dedupeKey]),
    );
  }

  /** Whether, by the database's clock, `expiresAt` has passed and `notBefore` has not. */
  async timing(q: Queryable, expiresAt: string, notBefore: string): Promise<{ expired: boolean; early: boolean }> {
    const [t] = (await q.query<{ expired: boolean; early: boolean }>(`select now() >= ?::timestamptz as expired, now() < ?::timestamptz as early`, [
      expiresAt,
      notBefore,
    ])) as [{ expired: boolean; early: boolean }];
    return t;
  }

  async expire(q: Queryable, id: string): Promise<void> {
    await q.query(`update gateway.approval_requests set status = 'EXPIRED', completed_at = now() where id = ? and status = 'PENDING_APPROVAL'`, [id]);
  }

  /** PENDING_APPROVAL → APPROVED by `by`; undefined when the request was not pending. */
  async approve(q: Queryable, id: string, by: string): Promise<ApprovalRequest | undefined> {
    return one(
      await q.query<Row>(
        `update gateway.approval_requests set status = 'APPROVED', decided_by = ?::uuid, decided_at = now()
        where id = ? and status = 'PENDING_APPROVAL' returning ${COLS}`,
        [by, id],
      ),
    );
  }

  /** PENDING_APPROVAL → REJECTED by `by`; undefined when the request was not pending. */
  async reject(q: Queryable, id: string, by: string, reason: string | null): Promise<ApprovalRequest | undefined> {
    return one(
      await q.query<Row>(
        `update gateway.approval_requests set status = 'REJECTED', decided_by = ?::uuid, decided_at = now(), completed_at = now(), reason = ?
        where id = ? and status = 'PENDING_APPROVAL' returning ${COLS}`,
        [by, reason, id],
      ),
    );
  }

  /** PENDING_APPROVAL or APPROVED → FAILED with `errorCode`; undefined when it was neither. */
  async fail(q: Queryable, id: string, errorCode: string): Promise<ApprovalRequest | undefined> {
    return one(
      await q.query<Row>(
        `update gateway.approval_requests set status = 'FAILED', error_code = ?, completed_at = now(),
              decided_at = coalesce(decided_at, now()), decided_by = coalesce(decided_by, requested_by)
        where id = ? and status in ('PENDING_APPROVAL', 'APPROVED') returning ${COLS}`,
        [errorCode, id],
      ),
    );
  }

  async finish(q: Queryable, id: string, status: 'APPLIED', result: unknown, errorCode: string | null): Promise<ApprovalRequest> {
    const [row] = (await q.query<Row>(
      `update gateway.approval_requests set status = ?, result = ?::jsonb, error_code = ?, completed_at = now() where id = ? returning ${COLS}`,
      [status, JSON.stringify(result ?? null), errorCode, id],
    )) as [Row];
    return toRequest(row);
  }

  /** Newest first, at most `limit` rows, strictly before the `before` position (requested_at, id). */
  async list(
    q: Queryable,
    f: { status?: ApprovalStatus; action?: ApprovalAction; companyId?: string; before?: [string, string]; limit: number },
  ): Promise<ApprovalRequest[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (f.status) {
      where.push('status = ?');
      params.push(f.status);
    }
    if (f.action) {
      where.push('action = ?');
      params.push(f.action);
    }
    if (f.companyId) {
      where.push('company_id = ?::uuid');
      params.push(f.companyId);
    }
    if (f.before) {
      where.push(`(requested_at, id) < (?::timestamptz, ?)`);
      params.push(...f.before);
    }
    const rows = await q.query<Row>(
      `select ${COLS} from gateway.approval_requests ${where.length ? `where ${where.join(' and ')}` : ''}
        order by requested_at desc, id desc limit ${f.limit}`,
      params,
    );
    return rows.map(toRequest);
  }
}
