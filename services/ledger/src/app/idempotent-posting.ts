import { AppError } from '@wallet/platform';
import type { LedgerDeps } from './deps.js';
import type { PostingOutcome, PostingWrite, StoredPosting } from './ports.js';

/**
 * Runs one posting under its idempotency key (habit 5, LEDGER.md): the key, the request hash and
 * the result reference are written in the same statement as the posting. When the write does not
 * apply (its guard failed, or a concurrent twin won the unique key) the key decides: same hash →
 * the first result, replayed; another hash → REFERENCE_CONFLICT; unused → `rejected()` says why
 * (insufficient balance, no wallet, hold no longer open...).
 */
export async function runIdempotentPosting<R>(
  deps: LedgerDeps,
  args: {
    idempotencyKey: string;
    requestHash: string;
    /** null when a pre-check already knows the write cannot apply (e.g. the hold is closed). */
    write: PostingWrite | null;
    applied: (outcome: Extract<PostingOutcome, { status: 'applied' }>) => R;
    replay: (posting: StoredPosting) => Promise<R>;
    rejected: () => Promise<never> | never;
  },
): Promise<R> {
  let outcome: PostingOutcome | undefined;
  if (args.write) {
    outcome = await deps.store.recordPosting(args.write);
    if (outcome.status === 'applied') {
      deps.events.nudge();
      return args.applied(outcome);
    }
  }
  const existing = await deps.store.findPosting(args.idempotencyKey);
  if (existing) {
    // The key was voided (VoidReserve): the command's owner gave it up; it never applies.
    if (existing.kind === 'void') throw new AppError('RESERVE_VOIDED');
    if (existing.requestHash !== args.requestHash) throw new AppError('REFERENCE_CONFLICT');
    return args.replay(existing);
  }
  if (outcome?.status === 'duplicate') {
    // Not the key: the caller-given movement id belongs to another posting.
    throw new AppError('REFERENCE_CONFLICT', 'El identificador del movimiento ya se usó con otra solicitud.');
  }
  return args.rejected();
}
