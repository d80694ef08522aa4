import type { BatchActor, BatchRecord } from '../domain/batch.js';
import { retryDelayMs, type TransferRecord } from '../domain/transfer.js';
import type { BatchSaga } from './batch-saga.js';
import type { BatchDeps } from './deps.js';
import { transferEvent } from './events.js';
import { mapBounded } from './map-bounded.js';
import type { DispatchResult } from './ports.js';
import type { TransferSaga } from './transfer-saga.js';

/** The dispatch of a funded (or approved) batch's items to the rails, and the batch's close once every item is final. */
export class DispatchBatch {
  constructor(
    private readonly deps: BatchDeps,
    private readonly saga: TransferSaga,
    private readonly batchSaga: BatchSaga,
  ) {}

  /**
   * Dispatches the batch's accepted items, leased in pages of 200, then checks whether it is finished.
   * Per page: the dispatch attempts are counted in one statement (before the rail is called, as a
   * send's are), the rail is called (one bulk submission per rail, or each item with bounded
   * concurrency), and the items the rail took move
   * RESERVED → DISPATCHED through the send saga's `dispatched` event in one statement. A refusal or an
   * unavailable rail takes the single send's way (release, or a retry scheduled). Approved (EXECUTING)
   * items of a multi-signature batch go the same way, the ledger showing them EXECUTING first and
   * PENDING once dispatched (one call per page each).
   */
  async dispatch(b: BatchRecord, actor: BatchActor): Promise<void> {
    const { deps } = this;
    const leaseMs = Math.max(30_000, deps.settings.sweeperGraceSeconds * 1000);
    // Pages in flight at once: each worker leases its own page (skip locked), so they never share an item.
    const worker = async () => {
      for (;;) {
        const page = await deps.batches.leaseDispatchable(b.id, 200, leaseMs);
        if (page.length === 0) break;
        const warn = (t: TransferRecord) => (err: unknown) => {
          deps.log.warn({ transferId: t.id, batchId: b.id, err: (err as Error).message }, 'batch item not dispatched yet; the sweeper retries');
          return t;
        };
        // Approved items: the ledger shows them EXECUTING before the rail is called (a commit is refused
        // from AWAITING_APPROVAL), all of the page in one call; if it cannot, they wait for the next look.
        const approved = page.filter((t) => t.state === 'EXECUTING');
        const shown =
          approved.length === 0
            ? true
            : await deps.ledger
                .setMovementStatuses(
                  b.companyId,
                  approved.map((t) => t.id),
                  'EXECUTING',
                  'AWAITING_APPROVAL',
                )
                .then(
                  () => true,
                  (err: unknown) => {
                    deps.log.warn({ batchId: b.id, err: (err as Error).message }, 'approved batch items not shown EXECUTING yet; the sweepers retry');
                    return false;
                  },
                );
        const reserved = page.filter((t) => t.state === 'RESERVED' || (shown && t.state === 'EXECUTING'));
        const counted = await deps.batches.recordDispatchIntents(reserved.map((t) => t.id));
        const sent = await this.toRails(reserved.filter((t) => counted.has(t.id)));
        const now = deps.now();
        const accepted = sent.filter((x): x is { t: TransferRecord; res: Extract<DispatchResult, { outcome: 'accepted' }> } => x.res.outcome === 'accepted');
        if (accepted.length > 0) {
          await this.saga.applyBulk('dispatched', 'batch', (move) =>
            deps.batches.markDispatched(
              b.id,
              move,
              accepted.map(({ t, res }) => ({
                id: t.id,
                providerTransferId: res.providerTransferId,
                event: transferEvent(
                  deps,
                  'dispatched',
                )({ ...t, state: move.to, providerTransferId: res.providerTransferId || t.providerTransferId, dispatchedAt: now }),
              })),
              deps.settings.confirmTimeoutSeconds * 1000,
            ),
          );
        }
        // The listing shows the approved ones PENDING from here (a commit that outran this leaves COMPLETED as it is).
        const approvedSent = accepted.filter(({ t }) => t.state === 'EXECUTING').map(({ t }) => t.id);
        if (approvedSent.length > 0) {
          await deps.ledger
            .setMovementStatuses(b.companyId, approvedSent, 'PENDING', 'EXECUTING')
            .catch((err: unknown) =>
              deps.log.warn({ batchId: b.id, err: (err as Error).message }, 'could not show approved batch items as PENDING in the ledger'),
            );
        }
        // The rare ones, one by one as a single send's: refused → released; unavailable → retried by the sweeper.
        for (const { t, res } of sent) {
          if (res.outcome === 'rejected') {
            const won = await this.saga
              .apply({ ...t, dispatchAttempts: t.dispatchAttempts + 1 }, 'dispatch_refused', 'batch', {
                errorMessage: res.message,
                reason: 'rail rejected at dispatch',
              })
              .catch(warn(t));
            if (won?.state === 'RELEASING') await this.saga.settle(won, 'batch').catch(warn(t));
          } else if (res.outcome === 'unavailable') {
            const delay = retryDelayMs(t.dispatchAttempts + 1, deps.settings.dispatchRetryBaseMs, deps.settings.dispatchRetryMaxMs);
            await deps.store.recordDispatchAttempt(t.id, delay, res.ambiguous, res.error).catch(warn(t));
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, deps.batchSettings.pagesInFlight ?? 1) }, worker));
    await this.batchSaga.finishIfDone(b, actor);
  }

  /**
   * A page to the rails: one bulk submission per rail where the rail port takes it (a whole-call
   * failure reads as unavailable for each item, as a single dispatch's would), else each item on its
   * own with bounded concurrency.
   */
  private async toRails(items: TransferRecord[]): Promise<Array<{ t: TransferRecord; res: DispatchResult }>> {
    const { deps } = this;
    const failed = (err: unknown): DispatchResult => ({ outcome: 'unavailable', ambiguous: true, error: (err as Error).message });
    if (items.length > 0 && deps.batchSettings.railBulk && deps.rails.dispatchMany) {
      const results = await deps.rails
        .dispatchMany(items.map((t) => ({ t, callbackUrl: this.saga.callbackUrl(t) })))
        .catch((err: unknown) => items.map(() => failed(err)));
      return items.map((t, i) => ({ t, res: results[i] ?? failed(new Error('no answer for this item')) }));
    }
    return mapBounded(items, deps.batchSettings.dispatchConcurrency, async (t) => ({
      t,
      res: await deps.rails.dispatch(t, this.saga.callbackUrl(t)).catch(failed),
    }));
  }
}
