import { centsToNumber, formatInstant } from '@wallet/platform';
import { ledgerV1, type transferV1 } from '@wallet/proto';
import { railFromProto } from '../ledger/presenters.js';
import { signatureToApi } from './presenters.js';

/** Batch proto → HTTP edge (docs/batches.md): amounts are JSON integers of centavos, like the send response. */

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);
/** A rail as the API writes it, or null for an item too malformed to tell. */
export const railOrNull = (r: ledgerV1.Rail) => (r === ledgerV1.Rail.UNSPECIFIED || r === ledgerV1.Rail.UNRECOGNIZED ? null : railFromProto(r));

export function batchToApi(b: transferV1.Batch) {
  return {
    id: b.id,
    status: b.state,
    reference: b.reference ?? null,
    description: b.description ?? null,
    mode: b.mode.toLowerCase(),
    source: b.source.toLowerCase(),
    itemCount: b.itemCount,
    validCount: b.validCount,
    invalidCount: b.invalidCount,
    totals: b.totals.map((t) => ({
      rail: railFromProto(t.rail),
      count: t.count,
      amount: centsToNumber(t.amount),
      totalFee: centsToNumber(t.totalFee),
      ivaAmount: centsToNumber(t.ivaAmount),
      total: centsToNumber(t.total),
    })),
    byStatus: b.byStatus.map((s) => ({ status: s.status, count: s.count, amount: centsToNumber(s.amount) })),
    progress: {
      finished: b.finishedCount,
      total: b.itemCount,
      percent: b.itemCount > 0 ? Math.floor((b.finishedCount * 100) / b.itemCount) : 0,
    },
    createdAt: formatInstant(b.createdAt ?? new Date(0)),
    expiresAt: formatInstant(b.expiresAt ?? new Date(0)),
    executedAt: iso(b.executedAt),
    completedAt: iso(b.completedAt),
    cancelledAt: iso(b.cancelledAt),
    approvalId: b.approvalId ?? null,
    threshold: b.threshold,
    approval: b.approval ? batchApprovalToApi(b.approval) : null,
    errorMessage: b.errorMessage ?? null,
  };
}

/** The one approval of a multi-signature company's batch (docs/batches.md, "Multi-signature"). */
export function batchApprovalToApi(a: transferV1.BatchApproval) {
  return {
    approvalId: a.approvalId,
    threshold: a.threshold,
    status: a.status,
    signatures: a.signatures.map(signatureToApi),
    createdAt: formatInstant(a.createdAt ?? new Date(0)),
    expiresAt: formatInstant(a.expiresAt ?? new Date(0)),
    decidedAt: iso(a.decidedAt),
    rejectReason: a.rejectReason ?? null,
    rejectedBy: a.rejectedBy ?? null,
  };
}

/** POST /transfers/batches: the batch and one result per item, in order (`line` null for JSON items). */
export function batchCreatedToApi(r: transferV1.CreateBatchResponse) {
  return {
    ...batchToApi(r.batch!),
    results: r.results.map((x) => ({
      item: x.seq,
      line: x.line > 0 ? x.line : null,
      valid: x.valid,
      ...(x.errorCode ? { error: x.errorCode } : {}),
      ...(x.message ? { message: x.message } : {}),
    })),
  };
}

export function batchItemToApi(i: transferV1.BatchItem) {
  return {
    item: i.seq,
    line: i.line > 0 ? i.line : null,
    status: i.status,
    rail: railOrNull(i.rail),
    amount: centsToNumber(i.amount),
    totalFee: centsToNumber(i.totalFee),
    ivaAmount: centsToNumber(i.ivaAmount),
    targetName: i.targetName,
    targetDocument: i.targetDocument,
    reference: i.reference ?? null,
    description: i.description ?? null,
    destination: i.destination,
    transactionId: i.transferId ?? null,
    error: i.errorCode ?? null,
    message: i.message ?? null,
    completedAt: iso(i.completedAt),
  };
}
