import { AppError } from '@wallet/platform';
import type { Actor } from '../domain/transfer-machine.js';
import type { TransferRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import { transferEvent } from './events.js';
import type { ApprovalStatus, ApprovalView, Signer, SignerRole } from './ports.js';
import { MESSAGES, rejectedMessage, type TransferSaga } from './transfer-saga.js';
import { Problems, decodeTimeCursor, encodeTimeCursor, requireCompany } from './validation.js';

const APPROVAL_ID = /^appr_[0-9a-f]{32}$/;
const STATUSES: readonly ApprovalStatus[] = ['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED'];
const ROLES: readonly SignerRole[] = ['ADMIN', 'OPERATOR', 'VIEWER'];
/** Roles that may sign or reject (§3.1: "Signed by ADMIN or OPERATOR roles"). */
const SIGNING_ROLES: readonly SignerRole[] = ['ADMIN', 'OPERATOR'];

export function signerOf(s: { userId?: string; email?: string; role?: string } | undefined): Signer {
  const p = new Problems();
  if (!s || !s.userId || s.userId.length > 100) p.add('signer.userId', 'required (at most 100 characters)');
  if (!s || !s.email || s.email.length > 254) p.add('signer.email', 'required (at most 254 characters)');
  if (!s || !ROLES.includes(s.role as SignerRole)) p.add('signer.role', `one of ${ROLES.join(', ')}`);
  p.throwIfAny();
  return { userId: s!.userId!, email: s!.email!, role: s!.role as SignerRole };
}

export function requireSigningRole(s: Signer): void {
  if (!SIGNING_ROLES.includes(s.role)) throw new AppError('INSUFFICIENT_ROLE');
}

/** A malformed id reads as not found, like another company's. */
function approvalIdOf(id: string): string {
  if (!APPROVAL_ID.test(id)) throw new AppError('APPROVAL_NOT_FOUND');
  return id;
}

/** GET /dashboard/approvals: the company's approvals in one status, newest first. */
export class ListApprovals {
  constructor(private readonly deps: TransferDeps) {}

  async execute(
    caller: string | undefined,
    q: { status?: string | undefined; limit?: number; cursor?: string | undefined },
  ): Promise<{ items: ApprovalView[]; nextCursor: string | null }> {
    const companyId = requireCompany(caller);
    const status = (q.status ?? 'PENDING').toUpperCase() as ApprovalStatus;
    const p = new Problems();
    if (!STATUSES.includes(status)) p.add('status', `one of ${STATUSES.join(', ')}`);
    const limit = q.limit && q.limit > 0 ? q.limit : 50;
    if (limit > 100) p.add('limit', 'at most 100');
    p.throwIfAny();
    const cursor = q.cursor ? (decodeTimeCursor(p, q.cursor, (id) => APPROVAL_ID.test(id)) ?? null) : null;
    p.throwIfAny();
    const rows = await this.deps.approvals.list(companyId, status, limit + 1, cursor);
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? encodeTimeCursor(items[items.length - 1]!) : null };
  }
}

/**
 * POST /dashboard/approvals/{id}/sign (CONTRACT §5). The gateway has checked the session and the
 * TOTP code; here the role, the approval's state and the signer's uniqueness are decided under the
 * approval's lock. The signature that reaches the threshold moves the transfer to EXECUTING and
 * then dispatches it (the sweeper resumes it should this process stop in between).
 */
export class SignApproval {
  constructor(
    private readonly deps: TransferDeps,
    private readonly saga: TransferSaga,
  ) {}

  async execute(
    caller: string | undefined,
    input: { approvalId: string; signer?: { userId?: string; email?: string; role?: string }; precheck?: boolean },
  ): Promise<ApprovalView> {
    const companyId = requireCompany(caller);
    const signer = signerOf(input.signer);
    requireSigningRole(signer);
    const approvalId = approvalIdOf(input.approvalId);
    const { deps } = this;
    const outcome = await deps.approvals.sign(
      companyId,
      approvalId,
      signer,
      (t, emails) => transferEvent(deps, 'approved', { approvedBy: emails })(t),
      deps.settings.sweeperGraceSeconds * 1000,
      input.precheck === true,
    );
    switch (outcome.kind) {
      case 'not_found':
        throw new AppError('APPROVAL_NOT_FOUND');
      case 'expired':
        deps.eventsWritten();
        throw new AppError('APPROVAL_EXPIRED');
      case 'already_signed':
        throw new AppError('ALREADY_SIGNED');
      case 'not_pending':
        throw new AppError('APPROVAL_NOT_PENDING');
      case 'role_not_allowed':
        throw new AppError('INSUFFICIENT_ROLE', 'La política de aprobación pide firmas de otro rol para esta transferencia.');
      // The gateway asks first, before it spends the signer's TOTP code (CONTRACT §9).
      case 'may_sign':
        return (await deps.approvals.get(companyId, approvalId))!;
      case 'signed':
        break;
    }
    deps.log.info({ approvalId, transferId: outcome.transfer.id, userId: signer.userId, quorum: outcome.quorum }, 'approval signed');
    if (outcome.quorum) {
      deps.eventsWritten();
      // Dispatch now; a failure here leaves EXECUTING for the sweeper, the signature stands.
      await this.saga
        .execute(outcome.transfer, 'approval')
        .catch((err: unknown) =>
          deps.log.warn({ transferId: outcome.transfer.id, err: (err as Error).message }, 'approved transfer not dispatched yet; the sweeper retries'),
        );
    }
    return (await deps.approvals.get(companyId, approvalId))!;
  }
}

/** POST /dashboard/approvals/{id}/reject: approval REJECTED, funds released, transfer FAILED with the reason. */
export class RejectApproval {
  constructor(
    private readonly deps: TransferDeps,
    private readonly saga: TransferSaga,
  ) {}

  async execute(
    caller: string | undefined,
    input: { approvalId: string; signer?: { userId?: string; email?: string; role?: string }; reason?: string | undefined },
  ): Promise<ApprovalView> {
    const companyId = requireCompany(caller);
    const signer = signerOf(input.signer);
    requireSigningRole(signer);
    const approvalId = approvalIdOf(input.approvalId);
    const reason = rejectReasonOf(input.reason);
    const { deps } = this;
    const outcome = await deps.approvals.reject(companyId, approvalId, signer, reason, deps.settings.sweeperGraceSeconds * 1000);
    switch (outcome.kind) {
      case 'not_found':
        throw new AppError('APPROVAL_NOT_FOUND');
      case 'expired':
        throw new AppError('APPROVAL_EXPIRED');
      case 'not_pending':
        throw new AppError('APPROVAL_NOT_PENDING');
      case 'rejected':
        break;
    }
    deps.log.info({ approvalId, transferId: outcome.transfer.id, userId: signer.userId }, 'approval rejected');
    await finishRejected(this.saga, outcome.transfer, reason, signer.email, 'approval').catch((err: unknown) =>
      deps.log.warn({ transferId: outcome.transfer.id, err: (err as Error).message }, 'rejected transfer not released yet; the sweeper retries'),
    );
    return (await deps.approvals.get(companyId, approvalId))!;
  }
}

/** A signer's reason to reject: trimmed, at most 500 characters (null when blank). */
export function rejectReasonOf(raw: string | undefined): string | null {
  const reason = raw?.trim() ? raw.trim() : null;
  if (reason && reason.length > 500) {
    const p = new Problems();
    p.add('reason', 'at most 500 characters');
    p.throwIfAny();
  }
  return reason;
}

/** Wins AWAITING_APPROVAL → RELEASING (a rejection), then releases: FAILED with `transfer.rejected`. Safe to repeat. */
export async function finishRejected(saga: TransferSaga, t: TransferRecord, reason: string | null, rejectedBy: string | null, actor: Actor): Promise<void> {
  const won = await saga.apply(t, 'reject', actor, {
    errorMessage: rejectedMessage(reason),
    reason: 'rejected by a signer',
    releaseEvent: 'rejected',
    ...(rejectedBy ? { rejectedBy } : {}),
  });
  await saga.settle(won ?? (await saga.reload(t)), actor);
}

/** Wins AWAITING_APPROVAL → EXPIRING, then releases: EXPIRED with `transfer.expired`. Safe to repeat. */
export async function finishExpired(saga: TransferSaga, t: TransferRecord, actor: Actor): Promise<void> {
  const won = await saga.apply(t, 'expire', actor, { errorMessage: MESSAGES.expired, reason: 'approval expired' });
  await saga.settle(won ?? (await saga.reload(t)), actor);
}
