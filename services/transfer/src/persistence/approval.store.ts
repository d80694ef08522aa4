import type { Database, PreparedTx } from '@wallet/platform';
import type { ApprovalStatus, ApprovalStore, ApprovalView, OutboxEvent, RejectOutcome, SignOutcome, Signer } from '../app/ports.js';
import type { TransferRecord } from '../domain/transfer.js';
import { TRANSFER_MACHINE } from '../domain/transfer-machine.js';
import type { TransferDataProtection } from './data-protection.js';
import { toTransfer, transitionStatement, type TransferRow } from './transfer.store.js';

export interface ApprovalRow {
  id: string;
  /** Exactly one of transfer_id (a single send) and batch_id (a bulk payout). */
  transfer_id: string | null;
  batch_id: string | null;
  company_id: string;
  threshold: number;
  status: ApprovalStatus;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  reject_reason: string | null;
  rejected_by: string | null;
  /** The roles whose signatures count (null: ADMIN and OPERATOR; docs/policies.md). */
  roles?: string[] | null;
  /** expires_at <= now() by the database clock. */
  due?: boolean;
}

type SignatureJson = { userId: string; email: string; role: string; signedAt: string };

export const ms = (n: number) => String(Math.max(0, Math.round(n)));

/**
 * Approvals and their signatures (schema `transfer`). Every decision about an approval is taken
 * under `SELECT … FOR UPDATE` of its row, so signatures, a rejection and the expiry are serialised:
 * the quorum is reached once, and nothing is signed after a rejection or past the deadline.
 */
export class SqlApprovalStore implements ApprovalStore {
  constructor(
    private readonly db: Database,
    private readonly protection: TransferDataProtection,
  ) {}

  async sign(
    companyId: string,
    approvalId: string,
    signer: Signer,
    approvedEvent: (t: TransferRecord, signerEmails: string[]) => OutboxEvent,
    graceMs: number,
    precheck = false,
  ): Promise<SignOutcome> {
    return this.db.preparedTx(async (tx): Promise<SignOutcome> => {
      const a = await lockLive(tx, companyId, approvalId);
      if (a === 'not_found' || a === 'expired' || !a.transfer_id) return { kind: a === 'expired' ? a : 'not_found' };
      const added = await addSignature(tx, a, signer, precheck);
      if (added.kind !== 'added') return added;
      const [row] = await tx.query<TransferRow>('select * from transfer.transfers where id = $1::uuid', [a.transfer_id]);
      if (!row) throw new Error(`approval ${approvalId} without its transfer`);
      const transfer = toTransfer(row, this.protection);
      if (added.count < a.threshold) return { kind: 'signed', quorum: false, transfer };
      const emails = await approve(tx, approvalId);
      const st = transitionStatement(
        transfer,
        TRANSFER_MACHINE.quorum.from,
        TRANSFER_MACHINE.quorum.to,
        { approvedAt: new Date(), nextAttemptInMs: graceMs, reason: `quorum ${added.count}/${a.threshold}` },
        (t) => approvedEvent(t, emails),
      );
      const [moved] = await tx.query<TransferRow>(st.sql, st.params);
      // The transfer left AWAITING_APPROVAL some other way (it cannot while the approval was PENDING
      // under this lock, but never dispatch on an assumption): roll everything back.
      if (!moved) throw new Error(`transfer ${a.transfer_id} was not awaiting approval at quorum`);
      return { kind: 'signed', quorum: true, transfer: toTransfer(moved, this.protection) };
    });
  }

  async reject(companyId: string, approvalId: string, signer: Signer, reason: string | null, graceMs: number): Promise<RejectOutcome> {
    return this.db.preparedTx(async (tx): Promise<RejectOutcome> => {
      const a = await lockLive(tx, companyId, approvalId);
      if (a === 'not_found' || a === 'expired' || !a.transfer_id) return { kind: a === 'expired' ? a : 'not_found' };
      if (a.status !== 'PENDING') return { kind: 'not_pending' };
      await markRejected(tx, approvalId, reason, signer);
      // The release and the FAILED state follow at once; should this process die first, the
      // sweeper finishes them from here.
      const [row] = await tx.query<TransferRow>(
        `update transfer.transfers set next_attempt_at = now() + ($2::bigint * interval '1 millisecond'), updated_at = now()
          where id = $1::uuid returning *`,
        [a.transfer_id, ms(graceMs)],
      );
      if (!row) throw new Error(`approval ${approvalId} without its transfer`);
      return { kind: 'rejected', transfer: toTransfer(row, this.protection) };
    });
  }

  async expireIfDue(approvalId: string): Promise<ApprovalStatus | undefined> {
    const rows = await this.db.prepared<{ status: ApprovalStatus }>(
      `with u as (update transfer.approvals set status = 'EXPIRED', decided_at = now()
                   where id = $1 and status = 'PENDING' and expires_at <= now() returning status)
       select status from u union all
       select status from transfer.approvals where id = $1 and not exists (select 1 from u)`,
      [approvalId],
    );
    return rows[0]?.status;
  }

  async status(approvalId: string): Promise<{ status: ApprovalStatus; expiresAt: Date; rejectReason: string | null; rejectedBy: string | null } | undefined> {
    const rows = await this.db.prepared<ApprovalRow>('select * from transfer.approvals where id = $1', [approvalId]);
    const r = rows[0];
    return r && { status: r.status, expiresAt: new Date(r.expires_at), rejectReason: r.reject_reason, rejectedBy: r.rejected_by ?? null };
  }

  async get(companyId: string, approvalId: string): Promise<ApprovalView | undefined> {
    const rows = await this.db.prepared<ViewRow>(`${VIEW_SQL} where a.id = $1 and a.company_id = $2`, [approvalId, companyId]);
    return rows[0] && toView(rows[0], this.protection);
  }

  async list(companyId: string, status: ApprovalStatus, limit: number, cursor: { createdAt: Date; id: string } | null): Promise<ApprovalView[]> {
    const rows = cursor
      ? await this.db.prepared<ViewRow>(
          `${VIEW_SQL} where a.company_id = $1 and a.status = $2 and (a.created_at, a.id) < ($4::timestamptz, $5)
          order by a.created_at desc, a.id desc limit $3`,
          [companyId, status, String(limit), cursor.createdAt.toISOString(), cursor.id],
        )
      : await this.db.prepared<ViewRow>(`${VIEW_SQL} where a.company_id = $1 and a.status = $2 order by a.created_at desc, a.id desc limit $3`, [
          companyId,
          status,
          String(limit),
        ]);
    return rows.map((r) => toView(r, this.protection));
  }
}

/**
 * Locks the company's approval row for a decision. Past its deadline a PENDING approval is marked
 * EXPIRED here and its transfer (or its batch and the batch's items) made due for the sweepers
 * (which release the funds): 'expired'.
 */
export async function lockLive(tx: PreparedTx, companyId: string, approvalId: string): Promise<ApprovalRow | 'not_found' | 'expired'> {
  const [a] = await tx.query<ApprovalRow>(
    `select *, batch_id::text as batch_id, expires_at <= now() as due from transfer.approvals where id = $1 and company_id = $2 for update`,
    [approvalId, companyId],
  );
  if (!a) return 'not_found';
  if (a.status === 'EXPIRED') return 'expired';
  if (a.status === 'PENDING' && a.due) {
    await tx.query(`update transfer.approvals set status = 'EXPIRED', decided_at = now() where id = $1`, [approvalId]);
    await makeDue(tx, a, 0);
    return 'expired';
  }
  return a;
}

/** The approval's transfer, or its batch and the batch's items still awaiting it, due for the sweepers in `inMs`. */
export async function makeDue(tx: PreparedTx, a: Pick<ApprovalRow, 'transfer_id' | 'batch_id'>, inMs: number): Promise<void> {
  if (a.transfer_id) {
    await tx.query(
      `update transfer.transfers set next_attempt_at = now() + ($2::bigint * interval '1 millisecond'), updated_at = now()
      where id = $1::uuid and state = 'AWAITING_APPROVAL'`,
      [a.transfer_id, ms(inMs)],
    );
    return;
  }
  await tx.query(
    `update transfer.transfers set next_attempt_at = now() + ($2::bigint * interval '1 millisecond'), updated_at = now()
    where batch_id = $1::uuid and state = 'AWAITING_APPROVAL'`,
    [a.batch_id, ms(inMs)],
  );
  await tx.query(
    `update transfer.batches set next_attempt_at = now() + ($2::bigint * interval '1 millisecond'), updated_at = now()
    where id = $1::uuid and state = 'AWAITING_APPROVAL'`,
    [a.batch_id, ms(inMs)],
  );
}

/**
 * A signer's signature on a locked, live approval: 'already_signed' (this user signed), 'not_pending'
 * (decided), 'role_not_allowed' (the approval counts other roles only), 'may_sign' (precheck: nothing
 * written), or 'added' with the signatures counted after it.
 */
export async function addSignature(
  tx: PreparedTx,
  a: ApprovalRow,
  signer: Signer,
  precheck: boolean,
): Promise<{ kind: 'already_signed' | 'not_pending' | 'may_sign' | 'role_not_allowed' } | { kind: 'added'; count: number }> {
  const [mine] = await tx.query<{ n: number }>('select 1 as n from transfer.approval_signatures where approval_id = $1 and user_id = $2', [
    a.id,
    signer.userId,
  ]);
  if (mine) return { kind: 'already_signed' };
  if (a.status !== 'PENDING') return { kind: 'not_pending' };
  // A policy's rule may ask for signatures of some roles only (an ADMIN-only approval).
  if (a.roles && !a.roles.includes(signer.role)) return { kind: 'role_not_allowed' };
  if (precheck) return { kind: 'may_sign' };
  await tx.query(`insert into transfer.approval_signatures (approval_id, user_id, email, role) values ($1, $2, $3, $4)`, [
    a.id,
    signer.userId,
    signer.email,
    signer.role,
  ]);
  const [{ n }] = (await tx.query<{ n: number }>('select count(*)::int as n from transfer.approval_signatures where approval_id = $1', [a.id])) as [
    { n: number },
  ];
  return { kind: 'added', count: n };
}

/** The quorum: the approval APPROVED; the signers' e-mails in signing order. */
export async function approve(tx: PreparedTx, approvalId: string): Promise<string[]> {
  await tx.query(`update transfer.approvals set status = 'APPROVED', decided_at = now() where id = $1`, [approvalId]);
  return (
    await tx.query<{ email: string }>('select email from transfer.approval_signatures where approval_id = $1 order by signed_at, user_id', [approvalId])
  ).map((r) => r.email);
}

export async function markRejected(tx: PreparedTx, approvalId: string, reason: string | null, signer: Signer): Promise<void> {
  await tx.query(`update transfer.approvals set status = 'REJECTED', decided_at = now(), reject_reason = $2, rejected_by = $3 where id = $1`, [
    approvalId,
    reason,
    signer.email,
  ]);
}

type ViewRow = TransferRow & {
  a_id: string;
  a_threshold: number;
  a_status: ApprovalStatus;
  a_created_at: Date;
  a_expires_at: Date;
  a_decided_at: Date | null;
  a_reject_reason: string | null;
  a_rejected_by: string | null;
  a_signatures: SignatureJson[];
};

const VIEW_SQL = `
  select t.*, a.id as a_id, a.threshold as a_threshold, a.status as a_status, a.created_at as a_created_at,
         a.expires_at as a_expires_at, a.decided_at as a_decided_at, a.reject_reason as a_reject_reason,
         a.rejected_by as a_rejected_by,
         coalesce((select json_agg(json_build_object('userId', s.user_id, 'email', s.email, 'role', s.role, 'signedAt', s.signed_at)
                                   order by s.signed_at, s.user_id)
                     from transfer.approval_signatures s where s.approval_id = a.id), '[]'::json) as a_signatures
    from transfer.approvals a join transfer.transfers t on t.id = a.transfer_id`;

function toView(r: ViewRow, protection: TransferDataProtection): ApprovalView {
  return {
    id: r.a_id,
    transfer: toTransfer(r, protection),
    threshold: r.a_threshold,
    status: r.a_status,
    signatures: r.a_signatures.map((s) => ({ userId: s.userId, email: s.email, role: s.role, signedAt: new Date(s.signedAt) })),
    createdAt: new Date(r.a_created_at),
    expiresAt: new Date(r.a_expires_at),
    decidedAt: r.a_decided_at ? new Date(r.a_decided_at) : null,
    rejectReason: r.a_reject_reason,
    rejectedBy: r.a_rejected_by,
  };
}
