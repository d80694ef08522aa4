import type { AuditEntry, AuditOutcome, AuditPrincipal } from '../audit/admin-audit.js';
import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

/** One row as the trail writes it: JSON columns already redacted and serialized. */
export interface AuditRow {
  id: string;
  principalKind: AuditPrincipal['kind'];
  operatorId: string | null;
  operatorEmail: string | null;
  action: string;
  method: string;
  route: string;
  /** JSON text of the targets object, and of the list of their ids. */
  targets: string;
  targetIds: string;
  requestId: string;
  clientIp: string | null;
  outcome: AuditOutcome;
  errorCode: string | null;
  request: string | null;
  before: string | null;
  after: string | null;
}

/** The conditions of a page of the log; `beforeSeq` is the cursor. */
export interface AuditQuery {
  beforeSeq?: string;
  operatorId?: string;
  principalKind?: AuditPrincipal['kind'];
  action?: string;
  targetId?: string;
  outcome?: AuditOutcome;
  from?: string;
  to?: string;
  /** Rows read at most. */
  limit: number;
}

interface Row {
  seq: string;
  id: string;
  at: string;
  principal_kind: AuditPrincipal['kind'];
  operator_id: string | null;
  operator_email: string | null;
  action: string;
  method: string;
  route: string;
  targets: Record<string, string>;
  request_id: string;
  client_ip: string | null;
  outcome: AuditOutcome;
  error_code: string | null;
  request: unknown;
  before: unknown;
  after: unknown;
}

const COLS = `seq::text as seq, id::text as id, ${isoCol('at', 'at')}, principal_kind, operator_id::text as operator_id, operator_email,
  action, method, route, targets, request_id, client_ip, outcome, error_code, request, before, after`;

/** The admin audit log (gateway.admin_audit): append-only, its trigger refuses UPDATE, DELETE and TRUNCATE. */
export class AuditStore {
  async append(q: Queryable, r: AuditRow): Promise<void> {
    await q.query(
      `insert into gateway.admin_audit (id, principal_kind, operator_id, operator_email, action, method, route, targets, target_ids,
         request_id, client_ip, outcome, error_code, request, before, after)
       values (?::uuid, ?, ?::uuid, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb)`,
      [
        r.id,
        r.principalKind,
        r.operatorId,
        r.operatorEmail,
        r.action,
        r.method,
        r.route,
        r.targets,
        r.targetIds,
        r.requestId,
        r.clientIp,
        r.outcome,
        r.errorCode,
        r.request,
        r.before,
        r.after,
      ],
    );
  }

  /** Newest first, each entry with its sequence number (the cursor). */
  async list(q: Queryable, f: AuditQuery): Promise<Array<AuditEntry & { seq: string }>> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, v: unknown) => {
      where.push(sql);
      params.push(v);
    };
    if (f.beforeSeq) add('seq < ?::bigint', f.beforeSeq);
    if (f.operatorId) add('operator_id = ?::uuid', f.operatorId);
    if (f.principalKind) add('principal_kind = ?', f.principalKind);
    if (f.action) add('action = ?', f.action);
    if (f.outcome) add('outcome = ?', f.outcome);
    if (f.targetId) add('target_ids @> ?::jsonb', JSON.stringify([f.targetId]));
    if (f.from) add('at >= ?::timestamptz', f.from);
    if (f.to) add('at < ?::timestamptz', f.to);
    const rows = await q.query<Row>(
      `select ${COLS} from gateway.admin_audit ${where.length ? `where ${where.join(' and ')}` : ''} order by admin_audit.seq desc limit ${f.limit}`,
      params,
    ); // the column, not the text alias
    return rows.map((r) => ({
      seq: r.seq,
      id: r.id,
      at: r.at,
      principal: { kind: r.principal_kind, operatorId: r.operator_id, email: r.operator_email },
      action: r.action,
      method: r.method,
      route: r.route,
      targets: r.targets,
      requestId: r.request_id,
      clientIp: r.client_ip,
      outcome: r.outcome,
      errorCode: r.error_code,
      request: r.request,
      before: r.before,
      after: r.after,
    }));
  }
}
