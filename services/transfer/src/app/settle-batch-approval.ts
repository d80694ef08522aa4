import type { BatchActor, BatchRecord } from '../domain/batch.js';
import type { ApprovalRecord } from '../domain/transfer.js';
import { finishExpired, finishRejected } from './approvals.js';
import { BATCH_MESSAGES } from './batch-messages.js';
import type { BatchSaga } from './batch-saga.js';
import type { BatchDeps } from './deps.js';
import { mapBounded } from './map-bounded.js';
import type { TransferSaga } from './transfer-saga.js';

/** The end of a multi-signature batch's approval without quorum (docs/batches.md, "Multi-signature"). */
export class SettleBatchApproval {
  constructor(
    private readonly deps: BatchDeps,
    private readonly saga: TransferSaga,
    private readonly batchSaga: BatchSaga,
  ) {}

  /**
   * A multi-signature batch whose approval was decided without quorum (rejected) or ran out of time
   * (expired): each item still awaiting it is released the single send's way (the send saga's `reject`
   * / `expire`: the transition is won first, then the hold released), with bounded concurrency, then
   * the batch closes FAILED / EXPIRED. Safe to repeat: the sweepers resume it.
   */
  async settleApproval(b: BatchRecord, a: ApprovalRecord, actor: BatchActor): Promise<BatchRecord> {
    const { deps } = this;
    if (a.status !== 'REJECTED' && a.status !== 'EXPIRED') return b;
    const live = (await deps.batches.executedTransfers(b.id)).filter((t) => ['AWAITING_APPROVAL', 'RELEASING', 'EXPIRING'].includes(t.state));
    await mapBounded(live, deps.batchSettings.dispatchConcurrency, (t) =>
      (a.status === 'REJECTED' ? finishRejected(this.saga, t, a.rejectReason, a.rejectedBy, 'batch') : finishExpired(this.saga, t, 'batch')).catch(
        (err: unknown) => deps.log.warn({ transferId: t.id, batchId: b.id, err: (err as Error).message }, 'batch item not released yet; the sweepers retry'),
      ),
    );
    return this.batchSaga.finishIfDone(b, actor, a.status === 'REJECTED' ? BATCH_MESSAGES.rejected(a.rejectReason) : BATCH_MESSAGES.approvalExpired);
  }
}
