import { commitRequestHash, expectedCommitWrite, type CommitCommand } from './commit-hold.js';
import type { LedgerDeps } from './deps.js';
import type { PostingWrite } from './ports.js';
import { checkBatchItems, checkIdempotencyKey, isUuid, requireCompany } from './validation.js';

export interface CommitBatchResult {
  /** In the order of the request's items. */
  items: Array<{ applied: boolean; completedAt: string | null }>;
}

/**
 * The rail's confirmations of many sends of one company (a page of a bulk payout's outcomes) in ONE
 * transaction. Each item is a Commit with its expectation, written exactly as Commit writes it when
 * the expectation holds (posting, entries, hold COMMITTED, movement COMPLETED, `ledger.committed`,
 * its own idempotency key and request hash, so a later Commit of it replays), and each wallet's
 * pending is lowered once by the sum. Items are independent: one whose hold is not the open hold it
 * expects (closed by a release or an earlier commit, other amounts, a movement that may not complete)
 * is not applied, and the caller sends it as a single Commit, which answers it exactly (a replay, or
 * the refusal). A taken key (a twin batch that landed first) applies nothing: the caller does the
 * same for every item.
 */
export class CommitBatch {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { items: CommitCommand[] }): Promise<CommitBatchResult> {
    const companyId = requireCompany(caller);
    const items = cmd.items;
    checkItems(items);
    const deps = this.deps;
    const writes = items.map((item) => expectedCommitWrite(deps, companyId, item, commitRequestHash(companyId, item)));
    const outcome = await deps.store.commitHoldBatch(
      companyId,
      writes.filter((w): w is PostingWrite => w !== undefined),
    );
    if (outcome.status === 'duplicate') return { items: items.map(() => ({ applied: false, completedAt: null })) };
    if (outcome.completedAt.size > 0) deps.events.nudge();
    return {
      items: writes.map((w) => {
        const at = w ? outcome.completedAt.get(w.closeHold!.id) : undefined;
        return at ? { applied: true, completedAt: at } : { applied: false, completedAt: null };
      }),
    };
  }
}

/** Every item checked as Commit checks one (and its expectation present), problems named by index; keys and holds unique. */
function checkItems(items: CommitCommand[]): void {
  checkBatchItems(
    items,
    (p, item) => {
      checkIdempotencyKey(p, item.idempotencyKey);
      if (!item.holdId || !isUuid(item.holdId)) p.add('holdId', 'must be a hold id');
      if (!item.expected) p.add('expected', 'is required in a batch');
    },
    { idempotencyKey: (item) => item.idempotencyKey, holdId: (item) => item.holdId?.toLowerCase() },
  );
}
