import type { transferV1 } from '@wallet/proto';
import { centsToNumber } from '../money/money.js';
import { formatInstant } from '../time/instant.js';

/**
 * A bulk payout as the API shows it (docs/batches.md): the ONE builder of GET /transfers/batches/{id}'s
 * answer (gateway) and of the `batch.validated` / `batch.completed` webhooks' data (webhook service),
 * so the two can never differ. Amounts are JSON integers of centavos, like the send response.
 */
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
      rail: railOf(t.rail),
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
    signatures: a.signatures.map((s) => ({ userId: s.userId, email: s.email, role: s.role, signedAt: formatInstant(s.signedAt ?? new Date(0)) })),
    createdAt: formatInstant(a.createdAt ?? new Date(0)),
    expiresAt: formatInstant(a.expiresAt ?? new Date(0)),
    decidedAt: iso(a.decidedAt),
    rejectReason: a.rejectReason ?? null,
    rejectedBy: a.rejectedBy ?? null,
  };
}

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);

/** A wallet rail as the API writes it (`RAIL_BREB` → `BREB`); a batch's totals are only ever BREB or ACH. */
function railOf(r: string): 'BREB' | 'ACH' {
  const name = String(r).replace(/^RAIL_/, '');
  if (name !== 'BREB' && name !== 'ACH') throw new Error(`unexpected rail in a batch's totals: ${String(r)}`);
  return name;
}
