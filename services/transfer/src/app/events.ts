import { ledgerV1, transferEventsV1 } from '@wallet/proto';
import { maskAccount } from '@wallet/platform';
import { ACH_ACCOUNT_TYPES, netAmount } from '../domain/rails.js';
import { publicStatus, type TransferRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import type { OutboxEvent } from './ports.js';
import { policyDecisionToProto } from './policy-view.js';

/** Subjects of the transfer's events (stream TRANSFERS; docs/events.md). */
export const TRANSFER_SUBJECTS = {
  created: 'transfer.created',
  dispatched: 'transfer.dispatched',
  completed: 'transfer.completed',
  failed: 'transfer.failed',
  awaiting_approval: 'transfer.awaiting_approval',
  approved: 'transfer.approved',
  rejected: 'transfer.rejected',
  expired: 'transfer.expired',
} as const;
export type TransferEventKind = keyof typeof TRANSFER_SUBJECTS;

const STATUS: Record<ReturnType<typeof publicStatus>, ledgerV1.MovementStatus> = {
  PENDING: ledgerV1.MovementStatus.PENDING,
  COMPLETED: ledgerV1.MovementStatus.COMPLETED,
  FAILED: ledgerV1.MovementStatus.FAILED,
  AWAITING_APPROVAL: ledgerV1.MovementStatus.AWAITING_APPROVAL,
  EXECUTING: ledgerV1.MovementStatus.EXECUTING,
  EXPIRED: ledgerV1.MovementStatus.EXPIRED,
};

export const protoRail = (r: 'BREB' | 'ACH'): ledgerV1.Rail => (r === 'BREB' ? ledgerV1.Rail.BREB : ledgerV1.Rail.ACH);

/**
 * The event for a state change, built from the transfer as the transition left it (so it is
 * written in the same statement as the change; outbox id = event id).
 */
export function transferEvent(
  deps: TransferDeps,
  kind: TransferEventKind,
  extra: { approvedBy?: string[]; rejectedBy?: string } = {},
): (t: TransferRecord) => OutboxEvent {
  const id = deps.newId();
  const occurredAt = deps.now();
  const traceparent = deps.traceparent();
  return (t) => {
    const d = t.destination;
    const payload = transferEventsV1.TransferEvent.toJSON({
      eventId: id,
      transferId: t.id,
      companyId: t.companyId,
      rail: protoRail(t.rail),
      status: STATUS[publicStatus(t.state)],
      amount: t.amount,
      totalFee: t.fee.subtotalFee,
      ivaAmount: t.fee.ivaAmount,
      netAmount: netAmount(t.amount, t.fee.subtotalFee),
      targetName: t.targetName,
      targetDocument: t.targetDocument,
      reference: t.reference ?? undefined,
      description: t.description ?? undefined,
      bankName: d.bankName ?? undefined,
      bankAccountType: d.kind === 'ACH' ? accountTypeName(d.accountTypeId) : (d.bankAccountType ?? undefined),
      bankAccountNumberMasked: d.kind === 'ACH' ? (maskAccount(d.accountNumber) ?? undefined) : undefined,
      brebKeyType: d.kind === 'BREB' ? d.keyType : undefined,
      brebKeyValue: d.kind === 'BREB' ? d.keyValue : undefined,
      providerTransferId: t.providerTransferId ?? undefined,
      errorMessage: t.errorMessage ?? undefined,
      apiKeyId: t.apiKeyId ?? undefined,
      createdAt: t.createdAt,
      completedAt: t.completedAt ?? undefined,
      occurredAt,
      approvalId: t.approval?.id,
      approvalThreshold: t.approval?.threshold ?? 0,
      approvalExpiresAt: t.approval?.expiresAt,
      approvedBy: extra.approvedBy ?? [],
      rejectedBy: extra.rejectedBy,
      batchId: t.batchId ?? undefined,
      policyDecision: t.policyDecision ? policyDecisionToProto(t.policyDecision) : undefined,
      approvalRoles: t.approval ? (t.approval.roles ?? ['ADMIN', 'OPERATOR']) : [],
    });
    return { id, subject: TRANSFER_SUBJECTS[kind], payload, ...(traceparent ? { traceparent } : {}) };
  };
}

function accountTypeName(id: number): string | undefined {
  return ACH_ACCOUNT_TYPES[id];
}
