import {
  BATCH_ENTRIES,
  BATCH_MACHINE,
  finalBatchState,
  type BatchActor,
  type BatchEvent,
  type BatchItemDraft,
  type BatchMove,
  type BatchRecord,
  type BatchState,
  type BatchSummary,
} from '../domain/batch.js';
import { BATCH_SUBJECTS, batchEvent } from './batch-events.js';
import type { BatchPatch } from './batch-ports.js';
import type { BatchDeps } from './deps.js';

/** A move of the batch alone (`BatchStore.transition`). */
export interface BatchTransition {
  /** The state it leads to, when the table offers more than one (`finished`). */
  to?: BatchState;
  patch: BatchPatch;
  /** Items moved in the same transaction: cancel/expire VALID → NOT_EXECUTED; a refused reserve EXECUTED/REJECTED → VALID. */
  items?: 'not_executed' | 'back_to_valid';
  /** The batch as the move finds it, for the event the table says the move writes (`batch.completed`). */
  summary?: BatchSummary;
}

/**
 * The batch saga's one writer (docs/batches.md, "The batch saga"), as `TransferSaga` is the send's.
 * Every change of a batch's state goes through `apply`: it looks the event up in `BATCH_MACHINE`,
 * checks the actor and the state it leads to, and hands the store a `BatchMove` — which only this
 * class makes — for its compare-and-set, so of two writers exactly one wins. The store keeps the SQL;
 * the saga decides the move and the event it writes. A batch's items are moved by `TransferSaga`
 * (`applyBulk`), inside the same statement when the two move together.
 */
export class BatchSaga {
  constructor(private readonly deps: BatchDeps) {}

  /**
   * Stores a new batch in one of the table's entry states (VALIDATED or REJECTED) with its items and
   * its `batch.validated` event. 'REFERENCE_TAKEN' / 'KEY_TAKEN': a concurrent twin stored its batch first.
   */
  async create(
    batch: BatchRecord,
    summary: BatchSummary,
    requestHash: string,
    idempotencyKey: string | null,
    drafts: BatchItemDraft[],
  ): Promise<'OK' | 'REFERENCE_TAKEN' | 'KEY_TAKEN'> {
    const { deps } = this;
    if (!BATCH_ENTRIES.some((e) => e.to === batch.state)) throw new Error(`a batch is never created ${batch.state}`);
    const event = batchEvent(deps, BATCH_SUBJECTS.validated, () => summary)(batch);
    const outcome = await deps.batches.insert(batch, requestHash, idempotencyKey, drafts, event);
    if (outcome === 'OK') deps.eventsWritten();
    return outcome;
  }

  /**
   * Applies one event of the table: `actor` must be one the table names, `to` one of the states the
   * event leads to (omitted when there is one). `write` runs the store's compare-and-set with the move
   * (alone, or with the items' moves in one transaction) and answers what it answers.
   */
  async apply<T>(event: BatchEvent, actor: BatchActor, write: (move: BatchMove) => Promise<T>, to?: BatchState): Promise<T> {
    const spec = BATCH_MACHINE[event];
    // The table says who may move a batch which way; a writer outside it is a programming error.
    if (!spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event} to a batch`);
    const target = to ?? (spec.to.length === 1 ? spec.to[0] : undefined);
    if (target === undefined || !spec.to.includes(target)) throw new Error(`${event} does not lead to ${to ?? 'one state'}`);
    return write({ event, from: spec.from, to: target } as BatchMove);
  }

  /** One event applied to the batch alone, with the event the table says it writes. Undefined: another writer moved it first. */
  async transition(b: { id: string; companyId: string }, event: BatchEvent, actor: BatchActor, t: BatchTransition): Promise<BatchRecord | undefined> {
    const { deps } = this;
    const emits = BATCH_MACHINE[event].emits;
    if (emits && !t.summary) throw new Error(`${event} writes ${emits}: the move needs the batch's summary`);
    const summary = t.summary;
    const evt = emits && summary ? batchEvent(deps, BATCH_SUBJECTS.completed, (x) => ({ ...summary, ...x })) : null;
    const next = await this.apply(event, actor, (move) => deps.batches.transition(b, move, t.patch, evt, t.items), t.to);
    if (next && evt) deps.eventsWritten();
    return next;
  }

  /**
   * EXECUTING (or AWAITING_APPROVAL after a rejection or the deadline) with every item final →
   * COMPLETED / PARTIALLY_FAILED / FAILED / EXPIRED by the items' outcomes, with `transfer.batch_completed`.
   */
  async finishIfDone(b: BatchRecord, actor: BatchActor, errorMessage?: string): Promise<BatchRecord> {
    const { deps } = this;
    if ((await deps.batches.liveItems(b.id)) > 0) return b;
    const [summary] = await deps.batches.summaries([b]);
    const to = finalBatchState(summary!.byStatus);
    const done = await this.transition(b, 'finished', actor, {
      to,
      summary: summary!,
      patch: {
        completed: true,
        nextAttemptInMs: null,
        // every item is final: the summary never changes again, and the listing reads it kept
        finalSummary: { totals: summary!.totals, byStatus: summary!.byStatus },
        ...(errorMessage ? { errorMessage } : {}),
      },
    });
    if (done) deps.log.info({ batchId: b.id, state: to }, 'batch finished');
    return done ?? b;
  }
}
