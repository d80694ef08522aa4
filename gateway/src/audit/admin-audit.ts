import { randomUUID } from 'node:crypto';
import { AppError, type Logger, formatInstant } from '@wallet/platform';
import type { AdminPrincipal } from '../auth/admin-principal.js';
import type { Queryable } from '../persistence/sql.js';
import { AuditStore } from '../persistence/audit.store.js';

export type AuditOutcome = 'REQUESTED' | 'SUCCEEDED' | 'FAILED';

/** Who acted, as the audit log keeps it: a failed login has no principal yet. */
export type AuditPrincipal = AdminPrincipal | { kind: 'anonymous' };

/** What a use case adds to its row: the ids it touched and the resource before and after. */
export interface AuditFacts {
  targets?: Record<string, string>;
  before?: unknown;
  after?: unknown;
  /** Default SUCCEEDED. */
  outcome?: AuditOutcome;
  errorCode?: string;
  /** Default: the request's principal (a login names the operator it logged in). */
  principal?: AuditPrincipal;
}

/**
 * The audit trail of one admin request. Use cases that change the gateway's own tables call
 * `record(tx, …)` inside their transaction, so the row commits or rolls back with the change. For
 * everything else the router writes the rows: REQUESTED before a call to another service, then
 * SUCCEEDED (with the answer) or FAILED (with the error code) after it.
 */
export interface AuditTrail {
  record(q: Queryable, facts?: AuditFacts): Promise<void>;
  /** A REQUESTED row now, outside any transaction (before a change another service makes). */
  requested(facts?: Omit<AuditFacts, 'outcome'>): Promise<void>;
  /** Facts for rows written later (e.g. the operator a failed login named). */
  note(facts: { targets?: Record<string, string>; principal?: AuditPrincipal }): void;
  /** True once a SUCCEEDED or FAILED row was recorded: the router then writes none. */
  readonly final: boolean;
}

export interface AuditRequest {
  action: string;
  method: string;
  route: string;
  requestId: string;
  clientIp: string | undefined;
  principal: AuditPrincipal;
  /** Params, query and body of the request; redacted here before storage. */
  request: unknown;
  targets: Record<string, string>;
}

export interface AuditEntry {
  id: string;
  at: string;
  principal: { kind: AuditPrincipal['kind']; operatorId: string | null; email: string | null };
  action: string;
  method: string;
  route: string;
  targets: Record<string, string>;
  requestId: string;
  clientIp: string | null;
  outcome: AuditOutcome;
  errorCode: string | null;
  request: unknown;
  before: unknown;
  after: unknown;
}

export interface AuditFilter {
  operatorId?: string;
  principalKind?: AuditPrincipal['kind'];
  action?: string;
  targetId?: string;
  outcome?: AuditOutcome;
  from?: string;
  to?: string;
  limit: number;
  cursor?: string;
}

/**
 * Field names whose values never reach the audit log (nor a log line): passwords, TOTP secrets and
 * codes, session and enrollment tokens, API keys shown once, signing secrets.
 */
const SECRET_FIELD =
  /^(password|newPassword|totpSecret|totpCode|otpauthUrl|token|enrollmentToken|enrollmentUrl|invitationUrl|invitationToken|key|secret|signingSecret|apiKey|authorization)$/i;
const REDACTED = '[redacted]';

/** Text Postgres jsonb accepts: no lone surrogates, no U+0000 (each becomes U+FFFD). */
const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/g;
const storable = (s: string) => s.replace(UNSTORABLE, '\uFFFD');

/**
 * A JSON-safe copy of `value` for the audit log: secret fields replaced, bigints as strings, long
 * strings and arrays cut, text made storable in jsonb.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return storable(value.length > 2000 ? `${value.slice(0, 2000)}…` : value);
  if (typeof value === 'bigint') return value.toString();
  if (depth > 8) return '[…]';
  if (Array.isArray(value)) return value.slice(0, 200).map((v) => redact(v, depth + 1) ?? null);
  if (value instanceof Date) return formatInstant(value);
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      out[storable(k)] = SECRET_FIELD.test(k) ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return String(value);
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(redact(v)));

/** Cursor: the last row's sequence number, opaque to clients. */
const encodeCursor = (seq: string) => Buffer.from(`a:${seq}`).toString('base64url');
function decodeCursor(cursor: string): string {
  const m = /^a:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'query.cursor', message: 'Cursor inválido.' }] });
  return m[1]!;
}

/**
 * The admin audit log (gateway.admin_audit): append-only — the table's trigger refuses UPDATE,
 * DELETE and TRUNCATE — and read newest first.
 */
export class AdminAudit {
  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly store = new AuditStore(),
  ) {}

  /** The trail of one request (see AuditTrail). */
  begin(req: AuditRequest): AuditTrail & { succeeded(after: unknown): Promise<void>; failed(err: unknown): Promise<void> } {
    let final = false;
    let noted: { targets: Record<string, string>; principal: AuditPrincipal } = { targets: { ...req.targets }, principal: req.principal };
    const append = async (q: Queryable, facts: AuditFacts) => {
      const outcome = facts.outcome ?? 'SUCCEEDED';
      await this.append(q, req, {
        ...facts,
        outcome,
        principal: facts.principal ?? noted.principal,
        targets: { ...noted.targets, ...facts.targets },
      });
      if (outcome !== 'REQUESTED') final = true;
    };
    const trail = {
      get final() {
        return final;
      },
      record: (q: Queryable, facts: AuditFacts = {}) => append(q, facts),
      requested: (facts: Omit<AuditFacts, 'outcome'> = {}) => append(this.db, { ...facts, outcome: 'REQUESTED' }),
      note: (facts: { targets?: Record<string, string>; principal?: AuditPrincipal }) => {
        noted = { targets: { ...noted.targets, ...facts.targets }, principal: facts.principal ?? noted.principal };
      },
      succeeded: (after: unknown) => append(this.db, { outcome: 'SUCCEEDED', after }),
      failed: (err: unknown) =>
        append(this.db, {
          outcome: 'FAILED',
          errorCode: err instanceof AppError ? err.code : 'INTERNAL_ERROR',
        }),
    };
    return trail;
  }

  private async append(
    q: Queryable,
    req: AuditRequest,
    facts: AuditFacts & { outcome: AuditOutcome; principal: AuditPrincipal; targets: Record<string, string> },
  ): Promise<void> {
    const p = facts.principal;
    const targets = redact(facts.targets) as Record<string, string>;
    const targetIds = [...new Set(Object.values(targets).filter((v) => typeof v === 'string' && v.length > 0))];
    await this.store.append(q, {
      id: randomUUID(),
      principalKind: p.kind,
      operatorId: p.kind === 'operator' ? p.operatorId : null,
      operatorEmail: p.kind === 'operator' ? p.email : null,
      action: req.action,
      method: req.method,
      route: req.route,
      targets: JSON.stringify(targets),
      targetIds: JSON.stringify(targetIds),
      requestId: req.requestId,
      clientIp: req.clientIp ?? null,
      outcome: facts.outcome,
      errorCode: facts.errorCode ?? null,
      request: json(req.request),
      before: json(facts.before),
      after: json(facts.after),
    });
    this.log.info(
      { audit: req.action, outcome: facts.outcome, principal: p.kind, operatorId: p.kind === 'operator' ? p.operatorId : undefined, requestId: req.requestId },
      'admin audit',
    );
  }

  /** Newest first; `nextCursor` pages on. */
  async list(f: AuditFilter): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
    const { cursor, limit, ...filter } = f;
    const rows = await this.store.list(this.db, { ...filter, ...(cursor ? { beforeSeq: decodeCursor(cursor) } : {}), limit: limit + 1 });
    const page = rows.slice(0, limit);
    return {
      items: page.map(({ seq: _seq, ...entry }) => entry),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.seq) : null,
    };
  }
}
