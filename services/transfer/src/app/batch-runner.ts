import type { BatchActor, BatchRecord } from '../domain/batch.js';
import type { ApprovalRecord } from '../domain/transfer.js';
import { BatchSaga } from './batch-saga.js';
import type { BatchDeps } from './deps.js';
import { DispatchBatch } from './dispatch-batch.js';
import { FundBatch } from './fund-batch.js';
import { SettleBatchApproval } from './settle-batch-approval.js';
import type { TransferSaga } from './transfer-saga.js';

/**
 * The steps of a batch's saga (domain/batch.ts) after its execute (execute-batch.ts) records the items
 * RECEIVED: fund (one ReserveBatch), accept the items (RECEIVED → RESERVED through the send saga's
 * `reserved` event, in one statement), dispatch them (leased, bounded concurrency), settle an approval
 * decided without quorum, and close the batch when every item is final. Each step is safe to repeat;
 * the requests start them and the batch sweeper resumes any of them (`resume`). Every move of the batch
 * goes through `BatchSaga`, every bulk move of its items through `TransferSaga.applyBulk`.
 */
export class BatchRunner {
  private readonly dispatcher: DispatchBatch;
  private readonly funding: FundBatch;
  private readonly settling: SettleBatchApproval;

  constructor(
    private readonly deps: BatchDeps,
    saga: TransferSaga,
    private readonly batchSaga: BatchSaga = new BatchSaga(deps),
  ) {
    this.dispatcher = new DispatchBatch(deps, saga, batchSaga);
    this.funding = new FundBatch(deps, saga, batchSaga, this.dispatcher);
    this.settling = new SettleBatchApproval(deps, saga, batchSaga);
  }

  /** FUNDING: one ReserveBatch, then the items accepted (fund-batch.ts). */
  fund(b: BatchRecord, throwRefusal: boolean, refenced = false): Promise<BatchRecord> {
    return this.funding.fund(b, throwRefusal, refenced);
  }

  /** EXECUTING: the items dispatched, then the batch closed if every item is final (dispatch-batch.ts). */
  dispatch(b: BatchRecord, actor: BatchActor): Promise<void> {
    return this.dispatcher.dispatch(b, actor);
  }

  /** AWAITING_APPROVAL with its approval rejected or expired: every item released, the batch closed (settle-batch-approval.ts). */
  settleApproval(b: BatchRecord, a: ApprovalRecord, actor: BatchActor): Promise<BatchRecord> {
    return this.settling.settleApproval(b, a, actor);
  }

  /** The batch sweeper's work on one leased batch. */
  async resume(b: BatchRecord): Promise<void> {
    const { deps } = this;
    switch (b.state) {
      case 'VALIDATED':
        if (b.expiresAt.getTime() <= deps.now().getTime()) {
          await this.batchSaga.transition(b, 'expire', 'sweeper', { patch: { nextAttemptInMs: null }, items: 'not_executed' });
          deps.log.info({ batchId: b.id }, 'batch expired (not executed within 24 h)');
        } else await deps.batches.reschedule(b.id, 'VALIDATED', b.expiresAt.getTime() - deps.now().getTime());
        return;
      case 'FUNDING':
        await this.fund(b, false);
        return;
      case 'AWAITING_APPROVAL': {
        const a = await deps.batches.expireApprovalIfDue(b.id);
        if (!a) throw new Error(`batch ${b.id} awaits an approval it does not have`);
        if (a.status === 'PENDING') await deps.batches.reschedule(b.id, 'AWAITING_APPROVAL', Math.max(0, a.expiresAt.getTime() - deps.now().getTime()) + 50);
        else if ((await this.settleApproval(b, a, 'sweeper')).state === 'AWAITING_APPROVAL')
          await deps.batches.reschedule(b.id, 'AWAITING_APPROVAL', deps.batchSettings.pollMs);
        return;
      }
      case 'EXECUTING': {
        await this.dispatch(b, 'sweeper');
        const now = await deps.batches.get(b.companyId, b.id);
        if (now?.state === 'EXECUTING') await deps.batches.reschedule(b.id, 'EXECUTING', deps.batchSettings.pollMs);
        return;
      }
      default:
        await deps.batches.reschedule(b.id, b.state, null);
    }
  }
}
