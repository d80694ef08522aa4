import { randomBytes } from 'node:crypto';
import { AppError, isUniqueViolation, type CallContext, type Database, type Logger } from '@wallet/platform';
import type { ledgerV1 } from '@wallet/proto';
import type { AdminPrincipal } from '../auth/admin-principal.js';
import { movementToApi, type ApiRail } from '../api/wallets/presenters.js';
import { CreditRequestStore } from '../persistence/credit-request.store.js';
import type { Queryable } from '../persistence/sql.js';
import type { AuditTrail } from '../audit/admin-audit.js';
import type { CompanyAdmin } from './company-admin.js';
import type { LedgerAdmin } from './ledger-admin.js';
import { assertIndependent } from './operator-independence.js';

export type CreditRequestStatus = 'PENDING_APPROVAL' | 'APPROVED' | 'CREDITED' | 'REJECTED' | 'FAILED';
export const CREDIT_REQUEST_STATUSES: readonly CreditRequestStatus[] = ['PENDING_APPROVAL', 'APPROVED', 'CREDITED', 'REJECTED', 'FAILED'];

export interface CreditRequest {
  id: string;
  companyId: string;
  rail: ApiRail;
  amountCents: bigint;
  reference: string;
  status: CreditRequestStatus;
  requestedBy: string;
  requestedAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  movementId: string | null;
  errorCode: string | null;
  completedAt: string | null;
}

type Operator = AdminPrincipal & { kind: 'operator' };

/** Maker-checker limits of operator credits (config: ADMIN_CREDIT_*). */
export interface CreditControls {
  /** One credit above this waits for a second operator. */
  dualControlCents: number;
  /** The running totals' window. */
  windowSeconds: number;
  /** An operator's direct credits (every company) within the window may not pass this… */
  operatorWindowCents: number;
  /** …nor a company's (every operator). */
  companyWindowCents: number;
}

/** Ledger answers that will not change on a retry: the approved request then ends FAILED. */
const DEFINITIVE = new Set(['COMPANY_NOT_FOUND', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'REFERENCE_CONFLICT', 'INVALID_REQUEST']);

const encodeCursor = (r: CreditRequest) => Buffer.from(`${r.requestedAt}|${r.id}`).toString('base64url');
function decodeCursor(cursor: string): [string, string] {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(crq_[0-9a-f]{32})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'query.cursor', message: 'Cursor inválido.' }] });
  return [m[1]!, m[2]!];
}

/**
 * Maker-checker for large admin credits (CONTRACT §10). An operator's credit above
 * ADMIN_CREDIT_DUAL_CONTROL_CENTS becomes a request; a second, independent operator approves it
 * and only then the ledger credits, once:
 *
 *   PENDING_APPROVAL --approve (CAS, another operator)--> APPROVED --ledger credit--> CREDITED
 *   PENDING_APPROVAL --reject--> REJECTED          APPROVED --definitive ledger refusal--> FAILED
 *
 * The approval is a compare-and-set on PENDING_APPROVAL, so of two concurrent approvals one wins
 * and the other gets CREDIT_REQUEST_NOT_PENDING. The ledger call uses the same idempotency key as
 * a direct credit with that reference (`admin-credit:<companyId>:<reference>`), so the approver's
 * retry after a time-out (approve again while APPROVED) replays it instead of crediting twice.
 * "Independent": see operator-independence.ts (not the requester, no shared inviter chain).
 */
export class CreditRequestAdmin {
  private readonly store = new CreditRequestStore();

  constructor(
    private readonly db: Database,
    private readonly ledger: LedgerAdmin,
    private readonly companies: CompanyAdmin,
    private readonly opts: CreditControls,
    private readonly log: Logger,
  ) {}

  /**
   * An operator's credit (docs/security.md, "The insider", I3: running totals): above the per-request threshold, or past the running
   * total of the operator's — or the company's — direct credits over the window, it becomes a
   * request for a second operator; otherwise it is reserved in `gateway.admin_credits` (counted by
   * the next credit at once) and credited. The reservation, the totals and the decision are one
   * transaction under advisory locks on the operator and on the company (always in that order), so
   * parallel small credits cannot each see the total below the limit. The same reference again
   * replays (the ledger credit is idempotent on it); a definitive ledger refusal voids the
   * reservation so it stops counting.
   */
  async creditByOperator(
    input: { companyId: string; rail: ApiRail; amountCents: number; reference: string },
    by: Operator,
    call: CallContext,
    audit: AuditTrail,
  ): Promise<{ request: CreditRequest } | { movement: ledgerV1.Movement }> {
    if (input.amountCents > this.opts.dualControlCents) return { request: await this.request(input, by, audit) };
    await this.companies.assertExists(input.companyId);
    await this.assertReferenceFree(input.companyId, input.reference, input.rail, input.amountCents);
    const decision = await this.db.tx(async (tx) => {
      await this.store.lockTotals(tx, by.operatorId, input.companyId);
      const held = await this.store.findCredit(tx, input.companyId, input.reference);
      if (held) {
        if (held.rail !== input.rail || held.amountCents !== BigInt(input.amountCents)) throw new AppError('REFERENCE_CONFLICT');
        if (held.status === 'VOID') await this.store.reReserve(tx, input.companyId, input.reference);
        return 'credit' as const;
      }
      const totals = await this.store.totals(tx, by.operatorId, input.companyId, this.opts.windowSeconds);
      const amount = BigInt(input.amountCents);
      if (totals.byOperator + amount > BigInt(this.opts.operatorWindowCents) || totals.byCompany + amount > BigInt(this.opts.companyWindowCents)) {
        this.log.info({ companyId: input.companyId, operatorId: by.operatorId }, 'credit past the running total: a second operator must approve');
        return 'request' as const;
      }
      await this.store.reserve(tx, {
        companyId: input.companyId,
        reference: input.reference,
        operatorId: by.operatorId,
        rail: input.rail,
        amountCents: input.amountCents,
      });
      return 'credit' as const;
    });
    if (decision === 'request') return { request: await this.request(input, by, audit) };

    // The ledger makes the change: a REQUESTED row first, so a crash before the outcome row shows.
    await audit.requested();
    let movement: ledgerV1.Movement;
    try {
      movement = await this.ledger.credit(input.companyId, input.rail, input.amountCents, input.reference, call);
    } catch (err) {
      if (err instanceof AppError && DEFINITIVE.has(err.code)) {
        await this.store.voidReserved(this.db, input.companyId, input.reference);
      }
      throw err;
    }
    await this.store.markCredited(this.db, input.companyId, input.reference, movement.id);
    return { movement };
  }

  /**
   * Records the request (idempotent on the company and reference: the same body returns the
   * existing request, another body is REFERENCE_CONFLICT).
   */
  async request(input: { companyId: string; rail: ApiRail; amountCents: number; reference: string }, by: Operator, audit: AuditTrail): Promise<CreditRequest> {
    await this.companies.assertExists(input.companyId);
    const id = `crq_${randomBytes(16).toString('hex')}`;
    try {
      return await this.db.tx(async (tx) => {
        const existing = await this.byReference(tx, input.companyId, input.reference);
        if (existing) return this.replay(existing, input);
        const created = await this.store.insert(tx, {
          id,
          companyId: input.companyId,
          rail: input.rail,
          amountCents: input.amountCents,
          reference: input.reference,
          requestedBy: by.operatorId,
        });
        await audit.record(tx, { targets: { companyId: input.companyId, creditRequestId: id }, before: null, after: created });
        this.log.info({ creditRequestId: id, companyId: input.companyId, operatorId: by.operatorId }, 'credit request awaiting approval');
        return created;
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // A concurrent request with the same reference won the insert.
      const existing = await this.byReference(this.db, input.companyId, input.reference);
      if (!existing) throw err;
      return this.replay(existing, input);
    }
  }

  /**
   * A direct credit (at or below the threshold, or by the development token) with a reference that
   * a credit request already holds is a conflict, unless it is that request's own, already credited.
   */
  async assertReferenceFree(companyId: string, reference: string, rail: ApiRail, amountCents: number): Promise<void> {
    const r = await this.byReference(this.db, companyId, reference);
    if (r && !(r.status === 'CREDITED' && r.rail === rail && r.amountCents === BigInt(amountCents))) throw new AppError('REFERENCE_CONFLICT');
  }

  async approve(id: string, by: Operator, call: CallContext, audit: AuditTrail): Promise<CreditRequest> {
    const approved = await this.db.tx(async (tx) => {
      const current = await this.load(tx, id);
      audit.note({ targets: { companyId: current.companyId, creditRequestId: id } });
      await assertIndependent(tx, current.requestedBy, by.operatorId);
      const next = await this.store.approve(tx, id, by.operatorId);
      if (next) {
        // Before the ledger call: a crash between leaves this row (and the APPROVED request) to show it.
        await audit.record(tx, { outcome: 'REQUESTED', before: current, after: next });
        return next;
      }
      const now = await this.load(tx, id);
      // The approver's own retry after an interruption: finish the credit (the ledger replays it).
      if (now.status === 'APPROVED' && now.decidedBy === by.operatorId) return now;
      throw new AppError('CREDIT_REQUEST_NOT_PENDING', undefined, { status: now.status });
    });

    let movement: ledgerV1.Movement;
    try {
      movement = await this.ledger.credit(approved.companyId, approved.rail, Number(approved.amountCents), approved.reference, call);
    } catch (err) {
      if (err instanceof AppError && DEFINITIVE.has(err.code)) {
        await this.db.tx(async (tx) => {
          const failed = await this.store.fail(tx, id, err.code);
          if (failed) await audit.record(tx, { outcome: 'FAILED', errorCode: err.code, before: approved, after: failed });
        });
      }
      // Otherwise (time-out, service down) the request stays APPROVED; the router records the failure.
      throw err;
    }

    return this.db.tx(async (tx) => {
      const credited = await this.store.credited(tx, id, movement.id);
      const done = credited ?? (await this.load(tx, id));
      await audit.record(tx, { before: approved, after: { ...done, movement: movementToApi(movement) } });
      if (credited) this.log.info({ creditRequestId: id, movementId: movement.id, approvedBy: by.operatorId }, 'credit request credited');
      return done;
    });
  }

  /** Rejects a pending request (any operator, the requester included: a withdrawal). */
  async reject(id: string, by: Operator, reason: string | undefined, audit: AuditTrail): Promise<CreditRequest> {
    return this.db.tx(async (tx) => {
      const current = await this.load(tx, id);
      audit.note({ targets: { companyId: current.companyId, creditRequestId: id } });
      const next = await this.store.reject(tx, id, by.operatorId, reason ?? null);
      if (!next) throw new AppError('CREDIT_REQUEST_NOT_PENDING', undefined, { status: (await this.load(tx, id)).status });
      await audit.record(tx, { before: current, after: next });
      return next;
    });
  }

  get(id: string): Promise<CreditRequest> {
    return this.load(this.db, id);
  }

  private async load(q: Queryable, id: string): Promise<CreditRequest> {
    const request = await this.store.get(q, id);
    if (!request) throw new AppError('CREDIT_REQUEST_NOT_FOUND');
    return request;
  }

  /** Newest first; `status` filters (default: every status). */
  async list(f: {
    status?: CreditRequestStatus;
    companyId?: string;
    limit: number;
    cursor?: string;
  }): Promise<{ items: CreditRequest[]; nextCursor: string | null }> {
    const { cursor, limit, ...filter } = f;
    const rows = await this.store.list(this.db, { ...filter, ...(cursor ? { before: decodeCursor(cursor) } : {}), limit: limit + 1 });
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1]!) : null };
  }

  private async byReference(q: Queryable, companyId: string, reference: string): Promise<CreditRequest | undefined> {
    return this.store.findByReference(q, companyId, reference);
  }

  private replay(existing: CreditRequest, input: { rail: ApiRail; amountCents: number }): CreditRequest {
    if (existing.rail !== input.rail || existing.amountCents !== BigInt(input.amountCents)) throw new AppError('REFERENCE_CONFLICT');
    return existing;
  }
}
