import { AppError } from '@wallet/platform';
import type { BatchActor, BatchRecord } from '../domain/batch.js';
import type { ApprovalRef, TransferRecord } from '../domain/transfer.js';
import { BATCH_MESSAGES } from './batch-messages.js';
import type { BatchSaga } from './batch-saga.js';
import type { DispatchBatch } from './dispatch-batch.js';
import type { BatchDeps } from './deps.js';
import { transferEvent } from './events.js';
import { reserveCommandOf, type TransferSaga } from './transfer-saga.js';

/**
 * The batch's money step, run in FUNDING (domain/batch.ts): one ReserveBatch of the executed items,
 * then the items accepted together through the send saga's bulk `reserved` (or `awaiting_approval`
 * for a multi-signature company), or given back through its bulk `reserve_refused`. The batch moves
 * through `BatchSaga`: funded, awaiting_approval, funding_refused or nothing_to_fund.
 */
export class FundBatch {
  constructor(
    private readonly deps: BatchDeps,
    private readonly saga: TransferSaga,
    private readonly batchSaga: BatchSaga,
    private readonly dispatcher: DispatchBatch,
  ) {}

  /**
   * FUNDING → one ReserveBatch of the executed items (rebuilt the same from their transfers every
   * time: a replay) → items RESERVED and the batch EXECUTING; a definite refusal → items REJECTED,
   * batch VALIDATED again (the error is thrown to the request); an unknown outcome → left FUNDING for the sweeper.
   * `throwRefusal`: the execute request funds (and answers the refusal); otherwise the batch sweeper does.
   */
  async fund(b: BatchRecord, throwRefusal: boolean, refenced = false): Promise<BatchRecord> {
    const { deps } = this;
    const actor: BatchActor = throwRefusal ? 'request' : 'sweeper';
    const transfers = await deps.batches.executedTransfers(b.id);
    if (transfers.length === 0) {
      const [summary] = await deps.batches.summaries([b]);
      const done = await this.batchSaga.transition(b, 'nothing_to_fund', actor, {
        summary: summary!,
        patch: { completed: true, nextAttemptInMs: null, errorMessage: BATCH_MESSAGES.nothingToExecute },
      });
      return done ?? b;
    }
    let holdIds: string[];
    try {
      holdIds = (
        await deps.ledger.reserveBatch(
          b.companyId,
          transfers.map((t) => reserveCommandOf(t)),
        )
      ).holdIds;
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'SERVICE_UNAVAILABLE' || err.code === 'INTERNAL_ERROR') {
        deps.log.warn({ batchId: b.id, err: (err as Error).message }, 'batch reserve outcome unknown; the batch sweeper retries');
        if (throwRefusal) return b;
        throw err;
      }
      // A definite refusal (balance, wallet) — or RESERVE_VOIDED: an earlier refusal fenced this batch.
      // Fence first: void the first item's key, so a ReserveBatch still in flight (a lost reply, a
      // twin of a stalled replica) can never land after we give up (ReserveBatch is all or nothing and
      // refuses a voided key). If it had already landed, the batch is funded after all: replay it.
      const first = transfers[0]!;
      const fence = await deps.ledger.voidReserve(b.companyId, first.id, first.rail, first.fee.ivaApplicable);
      if (!fence.voided) {
        if (refenced) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'batch reserve both landed and refused' });
        deps.log.warn({ batchId: b.id, code: err.code }, 'batch reserve refused here but landed meanwhile (a twin): replaying it');
        return this.fund(b, throwRefusal, true);
      }
      const code = err.code === 'RESERVE_VOIDED' ? 'SERVICE_UNAVAILABLE' : err.code;
      await this.saga.applyBulk('reserve_refused', 'batch', (move) =>
        deps.batches.transitionTransfers(
          b.id,
          move,
          transfers.map((t) => ({ id: t.id, holdId: null, rejectCode: code, event: null })),
          false,
          'bulk payout reserve refused',
        ),
      );
      const message = err.code === 'RESERVE_VOIDED' ? BATCH_MESSAGES.fundingAbandoned : err.message;
      const back = await this.batchSaga.transition(b, 'funding_refused', actor, {
        patch: { errorMessage: message, nextAttemptInMs: Math.max(0, b.expiresAt.getTime() - deps.now().getTime()), executionOf: first.id },
        items: 'back_to_valid',
      });
      deps.log.warn({ batchId: b.id, code: err.code }, 'batch reserve refused; the batch is VALIDATED again');
      if (throwRefusal && err.code !== 'RESERVE_VOIDED') throw err;
      return back ?? (await deps.batches.get(b.companyId, b.id)) ?? b;
    }
    const approval = transfers[0]!.approval;
    if (approval) return this.awaitApproval(b, actor, transfers, holdIds, approval);
    // Accepted for dispatch now: the bulk `reserved` starts each line's dispatch clock.
    await this.saga.applyBulk('reserved', 'batch', (move) => {
      const accepted = transfers.map((t, k) => ({ ...t, state: move.to, holdId: holdIds[k]! }));
      return deps.batches.transitionTransfers(
        b.id,
        move,
        accepted.map((t) => ({ id: t.id, holdId: t.holdId, rejectCode: null, event: transferEvent(deps, 'created')(t) })),
        true,
        'bulk payout reserved',
      );
    });
    const next = await this.batchSaga.transition(b, 'funded', actor, { patch: { nextAttemptInMs: deps.batchSettings.pollMs, executionOf: transfers[0]!.id } });
    deps.log.info({ batchId: b.id, items: transfers.length }, 'batch funded: items accepted');
    const now = next ?? (await deps.batches.get(b.companyId, b.id)) ?? b;
    if (now.state === 'EXECUTING') {
      const dispatching = this.dispatcher
        .dispatch(now, actor)
        .catch((e: unknown) => deps.log.warn({ batchId: b.id, err: (e as Error).message }, 'batch dispatch stopped; the sweepers resume it'));
      if (deps.batchSettings.awaitDispatch) await dispatching;
    }
    return now;
  }

  /**
   * The funds of a multi-signature company's batch are reserved: FUNDING → AWAITING_APPROVAL, its one
   * approval opened and every item RECEIVED → AWAITING_APPROVAL (the send saga's `awaiting_approval`,
   * with its event), in one transaction. Signers decide in the dashboard; the batch sweeper settles it
   * at the deadline.
   */
  private async awaitApproval(b: BatchRecord, actor: BatchActor, transfers: TransferRecord[], holdIds: string[], approval: ApprovalRef): Promise<BatchRecord> {
    const { deps } = this;
    // The batch's `awaiting_approval` and its items' (the send saga's, in bulk) in one transaction.
    // The items' own sweeper looks after the batch's (which settles them all at once): a backstop.
    const next = await this.batchSaga.apply('awaiting_approval', actor, (awaiting) =>
      this.saga.applyBulk('awaiting_approval', 'batch', (move) => {
        const moves = transfers.map((t, k) => {
          const accepted = { ...t, state: move.to, holdId: holdIds[k]! };
          return { id: t.id, holdId: accepted.holdId, rejectCode: null, event: transferEvent(deps, 'awaiting_approval')(accepted) };
        });
        return deps.batches.awaitApproval(b, awaiting, approval, transfers[0]!.id, move, moves, 60_000);
      }),
    );
    if (next) {
      deps.log.info({ batchId: b.id, items: transfers.length, approvalId: approval.id, threshold: approval.threshold }, 'batch funded: awaiting approval');
    }
    return next ?? (await deps.batches.get(b.companyId, b.id)) ?? b;
  }
}
