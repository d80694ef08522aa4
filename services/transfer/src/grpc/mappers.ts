import { AppError, callerProfile, maskAccount, type CallContext } from '@wallet/platform';
import { ledgerV1, transferV1 } from '@wallet/proto';
import { ACH_ACCOUNT_TYPES, netAmount } from '../domain/rails.js';
import { itemStatus, type BatchItemRecord } from '../domain/batch.js';
import { batchToProto } from '../app/batch-events.js';
import { publicStatus, type Destination, type TransferRecord } from '../domain/transfer.js';
import { policyDecisionToProto } from '../app/policy-view.js';
import type { AmlEntry, ApprovalView } from '../app/ports.js';
import type { CompanyProfile, SendInput } from '../app/send-input.js';

/** proto ⇄ application values (proto enums are string enums such as 'RAIL_BREB'). */

export const railName = (r: ledgerV1.Rail | undefined): string => (r === ledgerV1.Rail.BREB ? 'BREB' : r === ledgerV1.Rail.ACH ? 'ACH' : 'UNSPECIFIED');
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
    counterpartyId: r.counterpartyId,
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
    ...(t.batchId ? { batchId: t.batchId } : {}),
    ...(t.policyDecision ? { policyDecision: policyDecisionToProto(t.policyDecision) } : {}),
    approvalRoles: t.approval ? (t.approval.roles ?? ['ADMIN', 'OPERATOR']) : [],
  };
}

export function amlToProto(e: AmlEntry): transferV1.AmlEntry {
  return {
    id: e.id,
    kind: e.kind,
    documentNumber: e.documentNumber ?? '',
    ...(e.name ? { name: e.name } : {}),
    reason: e.reason,
    createdAt: e.createdAt,
    ...(e.bankAccount ? { bankAccount: { bankCode: e.bankAccount.bankCode, accountNumberMasked: e.bankAccount.accountNumberMasked } } : {}),
  };
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
    approvalRoles: t.approval?.roles ?? ['ADMIN', 'OPERATOR'],
  };
}

// ───────────────────────────── bulk payouts ─────────────────────────────

const ledgerRail = (r: 'BREB' | 'ACH' | null): ledgerV1.Rail => (r === null ? ledgerV1.Rail.UNSPECIFIED : protoRail(r));

export { batchToProto };

/** How a destination reads in listings and results.csv: the key, or the bank, type and masked account. */
function destinationText(d: Destination | null): string {
  if (!d) return '';
  if (d.kind === 'BREB') return `${d.keyType} ${d.keyValue}`;
  return `${d.bankName} ${ACH_ACCOUNT_TYPES[d.accountTypeId] ?? ''} ${maskAccount(d.accountNumber) ?? ''}`.replace(/\s+/g, ' ').trim();
}

export function batchItemToProto(i: BatchItemRecord): transferV1.BatchItem {
  const status = itemStatus(i.storedStatus, i.transferState);
  const failed = status === 'FAILED' || status === 'EXPIRED';
  const message = i.errorMessage ?? (failed ? i.transferError : null);
  return {
    seq: i.seq,
    line: i.line ?? 0,
    status,
    rail: i.rail === null ? ledgerV1.Rail.UNSPECIFIED : ledgerRail(i.rail),
    amount: i.amount,
    totalFee: i.fee?.subtotalFee ?? 0n,
    ivaAmount: i.fee?.ivaAmount ?? 0n,
    targetName: i.targetName,
    targetDocument: i.targetDocument,
    ...(i.reference ? { reference: i.reference } : {}),
    ...(i.description ? { description: i.description } : {}),
    destination: destinationText(i.destination),
    ...(i.transferId && i.storedStatus === 'EXECUTED' ? { transferId: i.transferId } : {}),
    ...(i.errorCode ? { errorCode: i.errorCode } : failed ? { errorCode: 'TRANSFER_FAILED' } : {}),
    ...(message ? { message } : {}),
    ...(i.completedAt ? { completedAt: i.completedAt } : {}),
  };
}
