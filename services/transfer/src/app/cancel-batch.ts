import { AppError } from '@wallet/platform';
import { publicBatchState, type BatchSummary } from '../domain/batch.js';
import { BATCH_MESSAGES } from './batch-messages.js';
import { ownBatch, type CallerOf } from './batch-queries.js';
import type { BatchSaga } from './batch-saga.js';
import type { BatchDeps } from './deps.js';

export class CancelBatch {
  constructor(
    private readonly deps: BatchDeps,
    private readonly saga: BatchSaga,
  ) {}

  /** POST /transfers/batches/{id}/cancel: VALIDATED → CANCELLED (a cancelled batch answers as it is). */
  async execute(caller: CallerOf, batchId: string): Promise<BatchSummary> {
    const { deps } = this;
    const b = await ownBatch(deps, caller.companyId, batchId);
    if (b.state !== 'CANCELLED') {
      const next = await this.saga.transition(b, 'cancel', 'request', { patch: { cancelled: true, nextAttemptInMs: null }, items: 'not_executed' });
      if (!next)
        throw new AppError(
          'INVALID_STATE_TRANSITION',
          BATCH_MESSAGES.notCancellable(publicBatchState((await deps.batches.get(b.companyId, b.id))?.state ?? b.state)),
        );
      deps.log.info({ batchId: b.id }, 'batch cancelled');
      return (await deps.batches.summaries([next]))[0]!;
    }
    return (await deps.batches.summaries([b]))[0]!;
  }
}
