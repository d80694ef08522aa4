import { batchToApi, centsToNumber, formatInstant, policyDecisionView } from '@wallet/platform';
import { ledgerV1, type transferV1 } from '@wallet/proto';
import { railFromProto } from '../../wallets/presenters.js';
import { createBatchRequest } from './batch-upload.js';

/** Batch proto → HTTP edge (docs/batches.md): amounts are JSON integers of centavos, like the send response. */

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);
/** A rail as the API writes it, or null for an item too malformed to tell. */
export const railOrNull = (r: ledgerV1.Rail) => (r === ledgerV1.Rail.UNSPECIFIED || r === ledgerV1.Rail.UNRECOGNIZED ? null : railFromProto(r));

/** The batch as GET shows it: one builder with the `batch.*` webhooks' data (@wallet/platform). */
export { batchApprovalToApi, batchToApi } from '@wallet/platform';

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
      ...(x.policyDecision ? { policyDecision: policyDecisionView(x.policyDecision) } : {}),
    })),
    // A VALIDATED batch, executed now: what the approval policy would decide (docs/policies.md "Bulk payouts").
    policyDecision: policyDecisionView(r.policyDecision),
    totalPolicyDecision: policyDecisionView(r.totalPolicyDecision),
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

/** A page of a batch's items (GET /transfers/batches/{id}/items and the dashboard's). */
export function batchItemPageToApi(r: transferV1.ListBatchItemsResponse) {
  return { items: r.items.map(batchItemToApi), nextCursor: r.nextCursor ?? null };
}

/**
 * A JSON bulk payout as the transfer service takes it (the same decoding as POST /transfers/batches),
 * under `idempotencyKey`: for the scheduler, whose BATCH runs are ordinary batches.
 */
export function jsonBatchRequestOf(
  body: { description?: string; mode: 'all' | 'valid_only'; items: unknown[] },
  idempotencyKey: string,
): transferV1.CreateBatchRequest {
  return createBatchRequest({ kind: 'json', body }, idempotencyKey);
}
