import { randomBytes } from 'node:crypto';
import { AppError, canonicalJson, isUniqueViolation, type CallContext, type Database, type Logger } from '@wallet/platform';
import type { AdminPrincipal } from '../auth/admin-principal.js';
import { ApprovalRequestStore } from '../persistence/approval-request.store.js';
import type { Queryable } from '../persistence/sql.js';
import type { AuditTrail } from '../audit/admin-audit.js';
import { assertIndependent } from './operator-independence.js';
import type { SecurityChange, SecurityNotices } from './security-notices.js';

/**
 * Two people for every sensitive change (docs/security.md, "The insider"). What an operator asks for here moves nothing
 * until a second, independent operator (operator-independence.ts) approves it; where the change
 * weakens a control it also waits `delaySeconds` after the request, while the company — told at
 * once by `company.security_changed` and an e-mail to its administrators — can object.
 *
 *   PENDING_APPROVAL --approve (CAS, independent, past not_before)--> APPROVED --applied--> APPLIED
 *   PENDING_APPROVAL --reject (any operator; the requester withdraws)--> REJECTED
 *   PENDING_APPROVAL --expires_at passed--> EXPIRED            APPROVED --definitive refusal--> FAILED
 *
 * The actions, whether each weakens a control and how it is applied are declared once, in
 * APPROVAL_ACTIONS; each use case registers its applier (`register`). A change the gateway owns
 * is applied in the approval's own transaction (the request is APPLIED with the change, or not at
 * all). A change another service owns (fees: the ledger; AML: transfer; a money exception: its owner) is applied after APPROVED
 * commits, idempotently: if the service could not be reached the request stays APPROVED and the
 * same approver approves again to finish it. A definitive refusal ends it FAILED.
 *
 * Credentials an applier creates (an API key, an invitation link, an enrolment token) are never
 * stored here: they go to their owner by e-mail in production; outside production the approver's
 * response shows them once (`credentials`).
 */
export type ApprovalAction =
  'COMPANY_UPDATE' | 'API_KEY_ISSUE' | 'DASHBOARD_USER_ADD' | 'OPERATOR_INVITE' | 'OPERATOR_DISABLE' | 'FEE_SET' | 'AML_REMOVE' | 'EXCEPTION_RESOLVE';
export type ApprovalStatus = 'PENDING_APPROVAL' | 'APPROVED' | 'APPLIED' | 'FAILED' | 'REJECTED' | 'EXPIRED';
export const APPROVAL_STATUSES: readonly ApprovalStatus[] = ['PENDING_APPROVAL', 'APPROVED', 'APPLIED', 'FAILED', 'REJECTED', 'EXPIRED'];

export const APPROVAL_ACTIONS = {
  /** Lowering the multi-signature threshold or loosening counterparty limits. */
  COMPANY_UPDATE: { weakens: true, owner: 'gateway', requested: 'MULTISIG_THRESHOLD_CHANGE_REQUESTED' },
  /** A WRITE API key (it moves money). */
  API_KEY_ISSUE: { weakens: true, owner: 'gateway', requested: 'API_KEY_REQUESTED' },
  /** A dashboard user (a signer of the company's quorum). */
  DASHBOARD_USER_ADD: { weakens: true, owner: 'gateway', requested: 'USER_REQUESTED' },
  /** Another operator. */
  OPERATOR_INVITE: { weakens: true, owner: 'gateway', requested: null },
  /** Disabling an operator (one fewer to check the others); protective, so no delay. */
  OPERATOR_DISABLE: { weakens: false, owner: 'gateway', requested: null },
  /** A fee schedule (default or one company's): it moves money on every operation. */
  FEE_SET: { weakens: false, owner: 'service', requested: 'FEES_CHANGE_REQUESTED' },
  /** Removing an AML (SARLAFT) list entry. */
  AML_REMOVE: { weakens: true, owner: 'service', requested: null },
  /**
   * Resolving a money exception by a person's judgement (exception-resolutions.ts): a correcting
   * entry (write_off, credit, accept_provider, return) or a case closed with no entry (dismiss,
   * explain). No delay: it weakens no control — it corrects the books to what the provider did, or
   * closes a case two people read — and waiting would only leave the books wrong for longer. Not
   * company-scoped: an exception is the platform's case about a provider's outcome (some have no
   * company); what a correction changes in a wallet reaches its company as any movement does.
   */
  EXCEPTION_RESOLVE: { weakens: false, owner: 'service', requested: null },
} as const satisfies Record<ApprovalAction, { weakens: boolean; owner: 'gateway' | 'service'; requested: SecurityChange | null }>;
export const APPROVAL_ACTION_NAMES = Object.keys(APPROVAL_ACTIONS) as ApprovalAction[];

export interface ApprovalRequest {
  id: string;
  action: ApprovalAction;
  companyId: string | null;
  targetId: string | null;
  payload: Record<string, unknown>;
  status: ApprovalStatus;
  requestedBy: string;
  requestedAt: string;
  notBefore: string;
  expiresAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  result: unknown;
  errorCode: string | null;
  completedAt: string | null;
}

type Operator = AdminPrincipal & { kind: 'operator' };

/** What an applier gets: the request, the approver, and — for gateway-owned changes — the approval's transaction. */
export interface ApplyContext {
  request: ApprovalRequest;
  approver: Operator;
  call: CallContext;
  audit: AuditTrail;
  /** The approval's transaction (gateway-owned actions); the database itself for service-owned ones. */
  q: Queryable;
}
/** `result` is stored on the request (never a credential); `credentials` go only into the approver's response outside production. */
export type Applier = (ctx: ApplyContext) => Promise<{ result: unknown; credentials?: Record<string, string> }>;

/**
 * Service answers that will not change on a retry: the approved request then ends FAILED. Of a money
 * exception's owner (EXCEPTION_RESOLVE): gone or never there, no longer OPEN (another resolution won
 * it), the movement already corrected by another case; and CASE_NOT_FINAL too — it may change, but
 * only after the owner's case ends (days, or another resolution), and what two people agreed on was
 * the facts of the moment: they ask again then, rather than leave an approval any later moment can
 * fire. The owner's other refusals (the ledger unreachable or refusing its entry) leave the exception
 * RESOLVING for this action: the request stays APPROVED and the approver approves again to finish.
 */
const DEFINITIVE = new Set([
  'COMPANY_NOT_FOUND',
  'AML_ENTRY_NOT_FOUND',
  'INVALID_REQUEST',
  'OPERATOR_NOT_FOUND',
  'USER_NOT_FOUND',
  'COMPANY_ADMIN_REQUIRED',
  'EXCEPTION_NOT_FOUND',
  'EXCEPTION_NOT_OPEN',
  'MOVEMENT_ALREADY_CORRECTED',
  'CASE_NOT_FINAL',
]);

const encodeCursor = (r: ApprovalRequest) => Buffer.from(`${r.requestedAt}|${r.id}`).toString('base64url');
function decodeCursor(cursor: string): [string, string] {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3,6}Z)\|(apr_[0-9a-f]{32})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'query.cursor', message: 'Cursor inválido.' }] });
  return [m[1]!, m[2]!];
}

export interface NewApprovalRequest {
  action: ApprovalAction;
  companyId?: string | null;
  targetId?: string | null;
  /** The validated change (never a credential). */
  payload: Record<string, unknown>;
  /** One open request per change: the same key while one is open replays it (same payload) or conflicts. */
  dedupeKey: string;
  /** What the company is told (company-scoped actions). */
  summary?: string;
}

export class ApprovalRequests {
  private readonly appliers = new Map<ApprovalAction, Applier>();
  private readonly store = new ApprovalRequestStore();

  constructor(
    private readonly db: Database,
    private readonly notices: SecurityNotices,
    private readonly opts: { delaySeconds: number; ttlSeconds: number },
    private readonly log: Logger,
  ) {}

  /** Each use case registers how its action is applied (once, at composition). */
  register(action: ApprovalAction, applier: Applier): void {
    if (this.appliers.has(action)) throw new Error(`applier of ${action} registered twice`);
    this.appliers.set(action, applier);
  }

  /**
   * Records the request (PENDING_APPROVAL) and tells the company. An identical open request is
   * returned as it is (a retry); an open request for the same change with another payload is 409
   * APPROVAL_REQUEST_NOT_PENDING naming it — reject it first.
   */
  async request(input: NewApprovalRequest, by: Operator, audit: AuditTrail): Promise<ApprovalRequest> {
    const spec = APPROVAL_ACTIONS[input.action];
    const delay = spec.weakens ? this.opts.delaySeconds : 0;
    const id = `apr_${randomBytes(16).toString('hex')}`;
    try {
      return await this.db
        .tx(async (tx) => {
          const open = await this.openByKey(tx, input.dedupeKey);
          if (open) return this.replay(open, input);
          const created = await this.store.insert(tx, {
            id,
            action: input.action,
            companyId: input.companyId ?? null,
            targetId: input.targetId ?? null,
            payload: input.payload,
            dedupeKey: input.dedupeKey,
            requestedBy: by.operatorId,
            delaySeconds: delay,
            ttlSeconds: this.opts.ttlSeconds,
          });
          await audit.record(tx, { targets: this.targets(created), before: null, after: created });
          if (created.companyId && spec.requested) {
            await this.notices.record(tx, {
              companyId: created.companyId,
              change: spec.requested,
              summary: input.summary ?? `Solicitud de cambio ${created.action}`,
              actor: { kind: 'operator', id: by.operatorId },
              approvalRequestId: created.id,
              effectiveAt: delay > 0 ? created.notBefore : null,
              details: { action: created.action, ...created.payload },
            });
          }
          this.log.info({ approvalRequestId: id, action: input.action, operatorId: by.operatorId }, 'approval request awaiting a second operator');
          return created;
        })
        .finally(() => this.notices.nudge());
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // A concurrent identical request won the insert.
      const open = await this.openByKey(this.db, input.dedupeKey);
      if (!open) throw err;
      return this.replay(open, input);
    }
  }

  /**
   * A second, independent operator approves: the change is applied once. Of concurrent approvals
   * one wins the compare-and-set; the others get APPROVAL_REQUEST_NOT_PENDING.
   */
  async approve(id: string, by: Operator, call: CallContext, audit: AuditTrail): Promise<{ request: ApprovalRequest; credentials?: Record<string, string> }> {
    const apply = (r: ApprovalRequest) => {
      const applier = this.appliers.get(r.action);
      if (!applier) throw new Error(`no applier for ${r.action}`);
      return applier;
    };
    let failed: AppError | undefined;
    const first = await this.db
      .tx(async (tx) => {
        const current = await this.load(tx, id, { forUpdate: true });
        audit.note({ targets: this.targets(current) });
        await assertIndependent(tx, current.requestedBy, by.operatorId);
        if (current.status === 'APPROVED' && current.decidedBy === by.operatorId && APPROVAL_ACTIONS[current.action].owner === 'service') {
          return { approved: current }; // the approver finishing a change the service had not confirmed
        }
        if (current.status !== 'PENDING_APPROVAL') throw new AppError('APPROVAL_REQUEST_NOT_PENDING', undefined, { status: current.status });
        const { expired, early } = await this.store.timing(tx, current.expiresAt, current.notBefore);
        if (expired) {
          await this.store.expire(tx, id);
          return { expired: true as const };
        }
        if (early) throw new AppError('APPROVAL_DELAY_PENDING', undefined, { notBefore: current.notBefore });
        const approved = (await this.store.approve(tx, id, by.operatorId))!;
        if (APPROVAL_ACTIONS[approved.action].owner === 'service') {
          // Before the other service's call: a crash between leaves this row (and the APPROVED request) to show it.
          await audit.record(tx, { outcome: 'REQUESTED', before: current, after: approved });
          return { approved };
        }
        // A change the gateway owns: applied in this transaction, or (a definitive refusal) the request FAILED below.
        try {
          const out = await apply(approved)({ request: approved, approver: by, call, audit, q: tx });
          const done = await this.finish(tx, approved, 'APPLIED', out.result, null);
          await audit.record(tx, { before: current, after: done });
          return { done, credentials: out.credentials };
        } catch (err) {
          if (err instanceof AppError) failed = err;
          throw err;
        }
      })
      .catch(async (err: unknown) => {
        if (failed && err === failed) await this.fail(id, failed, audit);
        throw err;
      })
      .finally(() => this.notices.nudge());
    if ('expired' in first) throw new AppError('APPROVAL_REQUEST_NOT_PENDING', undefined, { status: 'EXPIRED' });
    if ('done' in first) {
      this.log.info({ approvalRequestId: id, action: first.done!.action, approvedBy: by.operatorId }, 'approval request applied');
      return { request: first.done!, ...(first.credentials ? { credentials: first.credentials } : {}) };
    }

    // A change another service owns.
    const approved = first.approved!;
    let out: Awaited<ReturnType<Applier>>;
    try {
      out = await apply(approved)({ request: approved, approver: by, call, audit, q: this.db });
    } catch (err) {
      if (err instanceof AppError && DEFINITIVE.has(err.code)) await this.fail(id, err, audit);
      // Otherwise (time-out, service down) the request stays APPROVED; the router records the failure.
      throw err;
    }
    const done = await this.db
      .tx(async (tx) => {
        const row = (await this.store.get(tx, id, { forUpdate: true }))!;
        if (row.status !== 'APPROVED') return row;
        const applied = await this.finish(tx, approved, 'APPLIED', out.result, null);
        await audit.record(tx, { before: approved, after: applied });
        return applied;
      })
      .finally(() => this.notices.nudge());
    this.log.info({ approvalRequestId: id, action: done.action, approvedBy: by.operatorId }, 'approval request applied');
    return { request: done, ...(out.credentials ? { credentials: out.credentials } : {}) };
  }

  /** Rejects a pending request (any operator, the requester included: a withdrawal); the company is told. */
  async reject(id: string, by: Operator, reason: string | undefined, audit: AuditTrail): Promise<ApprovalRequest> {
    return this.db
      .tx(async (tx) => {
        const current = await this.load(tx, id);
        audit.note({ targets: this.targets(current) });
        const next = await this.store.reject(tx, id, by.operatorId, reason ?? null);
        if (!next) throw new AppError('APPROVAL_REQUEST_NOT_PENDING', undefined, { status: (await this.load(tx, id)).status });
        await audit.record(tx, { before: current, after: next });
        if (next.companyId && APPROVAL_ACTIONS[next.action].requested) {
          await this.notices.record(tx, {
            companyId: next.companyId,
            change: 'REQUEST_REJECTED',
            summary: `Solicitud ${next.action} rechazada`,
            actor: { kind: 'operator', id: by.operatorId },
            approvalRequestId: next.id,
            details: { action: next.action, reason: reason ?? null },
          });
        }
        return next;
      })
      .finally(() => this.notices.nudge());
  }

  get(id: string): Promise<ApprovalRequest> {
    return this.load(this.db, id);
  }

  /** Newest first. */
  async list(f: {
    status?: ApprovalStatus;
    action?: ApprovalAction;
    companyId?: string;
    limit: number;
    cursor?: string;
  }): Promise<{ items: ApprovalRequest[]; nextCursor: string | null }> {
    const { cursor, limit, ...filter } = f;
    const rows = await this.store.list(this.db, { ...filter, ...(cursor ? { before: decodeCursor(cursor) } : {}), limit: limit + 1 });
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1]!) : null };
  }

  private async fail(id: string, err: AppError, audit: AuditTrail): Promise<void> {
    await this.db.tx(async (tx) => {
      const failed = await this.store.fail(tx, id, err.code);
      if (failed) await audit.record(tx, { outcome: 'FAILED', errorCode: err.code, after: failed });
    });
  }

  private async finish(q: Queryable, r: ApprovalRequest, status: 'APPLIED', result: unknown, errorCode: string | null): Promise<ApprovalRequest> {
    return this.store.finish(q, r.id, status, result, errorCode);
  }

  private async load(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<ApprovalRequest> {
    const request = await this.store.get(q, id, opts);
    if (!request) throw new AppError('APPROVAL_REQUEST_NOT_FOUND');
    return request;
  }

  private async openByKey(q: Queryable, key: string): Promise<ApprovalRequest | undefined> {
    return this.store.findOpenByKey(q, key);
  }

  private replay(open: ApprovalRequest, input: NewApprovalRequest): ApprovalRequest {
    if (canonicalJson(open.payload) !== canonicalJson(input.payload)) {
      throw new AppError('APPROVAL_REQUEST_NOT_PENDING', 'Ya hay una solicitud abierta para este cambio; apruébela o recháchela antes de pedir otra.', {
        openRequestId: open.id,
        status: open.status,
      });
    }
    return open;
  }

  private targets(r: ApprovalRequest): Record<string, string> {
    return {
      approvalRequestId: r.id,
      ...(r.companyId ? { companyId: r.companyId } : {}),
      ...(r.targetId ? { targetId: r.targetId } : {}),
    };
  }
}
