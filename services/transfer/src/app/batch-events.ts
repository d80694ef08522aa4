import { transferEventsV1, type transferV1 } from '@wallet/proto';
import { publicBatchState, type BatchRecord, type BatchSummary } from '../domain/batch.js';
import type { ApprovalRecord } from '../domain/transfer.js';
import type { TransferDeps } from './deps.js';
import { protoRail } from './events.js';
import type { OutboxEvent } from './ports.js';

/** Subjects of a batch's events (docs/asyncapi.md; delivered as the batch.* webhooks, docs/webhooks.md). */
export const BATCH_SUBJECTS = { validated: 'transfer.batch_validated', completed: 'transfer.batch_completed' } as const;

/** The `transfer.batch_*` event of a batch (proto3 JSON), built from the batch as the statement leaves it. */
export function batchEvent(deps: TransferDeps, subject: string, summary: (b: BatchRecord) => BatchSummary): (b: BatchRecord) => OutboxEvent {
  const id = deps.newId();
  const occurredAt = deps.now();
  const traceparent = deps.traceparent();
  return (b) => ({
    id,
    subject,
    payload: transferEventsV1.BatchEvent.toJSON({ eventId: id, companyId: b.companyId, batch: batchToProto(summary(b)), occurredAt }),
    ...(traceparent ? { traceparent } : {}),
  });
}

/** A batch as the API and its events show it (proto). */
export function batchToProto(b: BatchSummary): transferV1.Batch {
  return {
    id: b.id,
    state: publicBatchState(b.state),
    mode: b.mode,
    source: b.source,
    ...(b.reference ? { reference: b.reference } : {}),
    ...(b.description ? { description: b.description } : {}),
    itemCount: b.itemCount,
    validCount: b.validCount,
    invalidCount: b.invalidCount,
    totals: b.totals.map((t) => ({ rail: protoRail(t.rail), count: t.count, amount: t.amount, totalFee: t.fee, ivaAmount: t.iva, total: t.total })),
    byStatus: b.byStatus.map((s) => ({ status: s.status, count: s.count, amount: s.amount })),
    finishedCount: b.finishedCount,
    createdAt: b.createdAt,
    expiresAt: b.expiresAt,
    ...(b.executedAt ? { executedAt: b.executedAt } : {}),
    ...(b.completedAt ? { completedAt: b.completedAt } : {}),
    ...(b.cancelledAt ? { cancelledAt: b.cancelledAt } : {}),
    threshold: b.approval?.threshold ?? 0,
    ...(b.approval ? { approvalId: b.approval.id, approval: batchApprovalToProto(b.approval) } : {}),
    ...(b.errorMessage ? { errorMessage: b.errorMessage } : {}),
  };
}

function batchApprovalToProto(a: ApprovalRecord): transferV1.BatchApproval {
  return {
    approvalId: a.id,
    threshold: a.threshold,
    status: a.status,
    signatures: a.signatures.map((x) => ({ userId: x.userId, email: x.email, role: x.role, signedAt: x.signedAt })),
    createdAt: a.createdAt,
    expiresAt: a.expiresAt,
    ...(a.decidedAt ? { decidedAt: a.decidedAt } : {}),
    ...(a.rejectReason ? { rejectReason: a.rejectReason } : {}),
    ...(a.rejectedBy ? { rejectedBy: a.rejectedBy } : {}),
  };
}
