import { AppError, callerProfile, type CallContext } from '@wallet/platform';
import { ledgerV1, transferV1 } from '@wallet/proto';
import { netAmount } from '../domain/rails.js';
import { publicStatus, type TransferRecord } from '../domain/transfer.js';
import type { AmlEntry, ApprovalView } from '../app/ports.js';
import type { CompanyProfile, SendInput } from '../app/send-input.js';

/** proto ⇄ application values (proto enums are string enums such as 'RAIL_BREB'). */

export const railName = (r: ledgerV1.Rail | undefined): string =>
  r === ledgerV1.Rail.BREB ? 'BREB' : r === ledgerV1.Rail.ACH ? 'ACH' : 'UNSPECIFIED';
export const protoRail = (r: 'BREB' | 'ACH'): ledgerV1.Rail => (r === 'BREB' ? ledgerV1.Rail.BREB : ledgerV1.Rail.ACH);

const STATUS = {
  PENDING: ledgerV1.MovementStatus.PENDING,
  COMPLETED: ledgerV1.MovementStatus.COMPLETED,
  FAILED: ledgerV1.MovementStatus.FAILED,
  AWAITING_APPROVAL: ledgerV1.MovementStatus.AWAITING_APPROVAL,
  EXECUTING: ledgerV1.MovementStatus.EXECUTING,
  EXPIRED: ledgerV1.MovementStatus.EXPIRED,
} as const;

/** The company profile of the signed caller context (the gateway put it there; nothing else can); none: refused, never a default profile. */
export function companyOf(ctx: CallContext): CompanyProfile {
  const c = callerProfile(ctx);
  return {
    nit: c.nit,
    ivaApplicable: c.ivaApplicable,
    multiSigThreshold: c.multiSigThreshold,
    counterpartyDailyLimitCents: c.counterpartyDailyLimitCents,
    counterpartyMonthlyLimitCents: c.counterpartyMonthlyLimitCents,
  };
}

/** The dashboard user of the signed caller context: who signs or rejects (an API key or an operator cannot). */
export function signerOf(ctx: CallContext): { userId: string; email: string; role: string } {
  const p = ctx.principal;
  if (p?.kind !== 'user') throw new AppError('INSUFFICIENT_ROLE');
  return { userId: p.userId, email: p.email, role: p.role };
}

export function sendFromProto(r: transferV1.SendRequest, ctx: CallContext): SendInput {
  return {
    amount: r.amount,
    reference: r.reference,
    description: r.description,
    brebKey: r.brebKey ? { type: r.brebKey.type, value: r.brebKey.value } : undefined,
    bankAccount: r.bankAccount ? { ...r.bankAccount } : undefined,
    targetAnchorHandle: r.targetAnchorHandle,
    targetName: r.targetName,
    targetDocument: r.targetDocument,
    company: companyOf(ctx),
    requestHash: r.requestHash,
    idempotencyKey: r.idempotencyKey,
  };
}

/** §2.5 fields: user-visible status (PENDING until the rail decides), net = amount − fee (CONTRACT §2). */
export function transferToProto(t: TransferRecord): transferV1.Transfer {
  return {
    id: t.id,
    status: STATUS[publicStatus(t.state)],
    amount: t.amount,
    totalFee: t.fee.subtotalFee,
    ivaAmount: t.fee.ivaAmount,
    netAmount: netAmount(t.amount, t.fee.subtotalFee),
    rail: protoRail(t.rail),
    targetName: t.targetName,
    targetDocument: t.targetDocument,
    ...(t.reference ? { reference: t.reference } : {}),
    createdAt: t.createdAt,
    ...(t.completedAt ? { completedAt: t.completedAt } : {}),
    ...(t.errorMessage && (publicStatus(t.state) === 'FAILED' || publicStatus(t.state) === 'EXPIRED') ? { errorMessage: t.errorMessage } : {}),
    threshold: t.approval?.threshold ?? 0,
    ...(t.approval ? { approvalId: t.approval.id, expiresAt: t.approval.expiresAt } : {}),
  };
}

export function amlToProto(e: AmlEntry): transferV1.AmlEntry {
  return { id: e.id, documentNumber: e.documentNumber, ...(e.name ? { name: e.name } : {}), reason: e.reason, createdAt: e.createdAt };
}

/** CONTRACT §5 approval item, plus the transfer's figures and current status. */
export function approvalToProto(a: ApprovalView): transferV1.Approval {
  const t = a.transfer;
  return {
    approvalId: a.id,
    transactionId: t.id,
    amount: t.amount,
    rail: protoRail(t.rail),
    targetName: t.targetName,
    targetDocument: t.targetDocument,
    ...(t.reference ? { reference: t.reference } : {}),
    ...(t.description ? { description: t.description } : {}),
    threshold: a.threshold,
    signatures: a.signatures.map((s) => ({ userId: s.userId, email: s.email, role: s.role, signedAt: s.signedAt })),
    status: a.status,
    createdAt: a.createdAt,
    expiresAt: a.expiresAt,
    ...(a.decidedAt ? { decidedAt: a.decidedAt } : {}),
    ...(a.rejectReason ? { rejectReason: a.rejectReason } : {}),
    ...(a.rejectedBy ? { rejectedBy: a.rejectedBy } : {}),
    transactionStatus: STATUS[publicStatus(t.state)],
    totalFee: t.fee.subtotalFee,
    ivaAmount: t.fee.ivaAmount,
  };
}
