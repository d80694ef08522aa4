import { AppError, parseExternalMovement } from '@wallet/platform';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import type { LiveCorrection } from './ports.js';
import type { PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { Problems, checkIdempotencyKey, checkText } from './validation.js';

/**
 * One correction per external movement (docs/reconciliation.md "One case per external movement"). A correcting entry names the external movement it corrects
 * (platform `externalMovementRef`): "<rail>:our:<our id>" on breb, ach and pse (with ":payment" or
 * ":reversal"), "breb-inbound:<provider id>". At most one correcting entry of a
 * movement is live at a time (ledger.corrections), whichever case asks for it: an owner's money
 * exception and a reconciliation break about the same movement can never both post.
 */
export const MAX_MOVEMENT_REF = 200;

export function checkCorrectionTarget(p: Problems, movement: string | undefined, caseId: string | undefined): void {
  if (!movement) p.add('movement', 'is required: the external movement corrected (<rail>:our:<our id>, breb-inbound:<provider id>)');
  else if (movement.length > MAX_MOVEMENT_REF || /[^\x21-\x7e]/.test(movement) || !parseExternalMovement(movement)) {
    p.add('movement', 'must be a movement name: <rail>:our:<our id> (breb, ach; pse with :payment or :reversal) or breb-inbound:<provider id>[:return]');
  }
  if (!caseId) p.add('caseId', 'is required: the case (money exception) that asks for the correction');
  else checkText(p, 'caseId', caseId, 200);
}

function alreadyCorrected(live: LiveCorrection): AppError {
  return new AppError('MOVEMENT_ALREADY_CORRECTED', undefined, { movement: live.movement, caseId: live.caseId, postingId: live.postingId });
}

/**
 * Runs a correcting entry of `movement` under `idempotencyKey`: refused (MOVEMENT_ALREADY_CORRECTED,
 * naming the case that corrected it) when another live correction of the movement exists, before
 * writing, or after losing the race for the movement's unique live row.
 */
export async function runCorrection(deps: LedgerDeps, movement: string, idempotencyKey: string, post: () => Promise<PostingResult>): Promise<PostingResult> {
  const live = await deps.store.liveCorrection(movement);
  if (live && live.idempotencyKey !== idempotencyKey) throw alreadyCorrected(live);
  try {
    return await post();
  } catch (err) {
    if (err instanceof AppError && err.code === 'REFERENCE_CONFLICT') {
      const now = await deps.store.liveCorrection(movement);
      if (now && now.idempotencyKey !== idempotencyKey) throw alreadyCorrected(now);
    }
    throw err;
  }
}

export interface ReverseCorrectionCommand {
  idempotencyKey: string;
  /** The idempotency key of the correcting entry to undo. */
  correctionKey: string;
  reason: string;
}

/**
 * Undoes a live correcting entry with its negated entries (same kind, `reverses_posting_id` set, the
 * same movement and case): the correction is won first (its register row's `reversed_by`, in the
 * posting's own statement), so it is undone at most once. A correction already undone, by this key
 * or another (its owner's booking superseded it), answers the posting that undid it.
 */
export class ReverseCorrection {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(cmd: ReverseCorrectionCommand): Promise<PostingResult> {
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!cmd.correctionKey) p.add('correctionKey', 'is required');
    if (!cmd.reason || !cmd.reason.trim()) p.add('reason', 'is required');
    else checkText(p, 'reason', cmd.reason, 1000);
    p.throwIfAny();
    const deps = this.deps;
    const c = await deps.store.correctionByKey(cmd.correctionKey);
    if (!c) throw new AppError('INVALID_REQUEST', 'No hay una corrección con esa clave.', { correctionKey: cmd.correctionKey });
    const done = async (): Promise<PostingResult> => {
      const again = await deps.store.correctionByKey(cmd.correctionKey);
      if (!again?.reversedBy) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'a correction neither live nor undone' });
      return { postingId: again.reversedBy, movement: null, replayed: true };
    };
    if (c.reversedBy) return done();
    const postingId = deps.newId();
    const entries = c.entries.map((e) => ({ account: e.account, amount: -e.amount }));
    const hash = requestHash(c.kind, c.companyId, { idempotencyKey: cmd.idempotencyKey, correctionKey: cmd.correctionKey });
    const undoneMeanwhile = new Error('undone meanwhile');
    return runIdempotentPosting<PostingResult>(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write: {
        posting: {
          id: postingId,
          kind: c.kind,
          idempotencyKey: cmd.idempotencyKey,
          requestHash: hash,
          companyId: c.companyId,
          rail: c.rail,
          movementId: null,
          holdId: null,
          reason: cmd.reason,
        },
        entries,
        wallet: null,
        correction: { movement: c.movement, caseId: c.caseId, reverses: c.postingId },
        event: postingEvent(deps, {
          postingId,
          kind: c.kind,
          companyId: c.companyId,
          rail: c.rail,
          movementId: null,
          holdId: null,
          entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      },
      applied: () => ({ postingId, movement: null, replayed: false }),
      replay: async (existing) => ({ postingId: existing.id, movement: null, replayed: true }),
      // Undone meanwhile by another key (the owner's booking, or a concurrent run).
      rejected: () => {
        throw undoneMeanwhile;
      },
    }).catch((err: unknown) => {
      if (err === undoneMeanwhile) return done();
      throw err;
    });
  }
}

/**
 * After an owner booked an external movement (RecordInflow, ReverseInflow with `externalMovement`):
 * a live correction of that movement (a reconciliation break accepted before the owner booked it)
 * is undone, so the movement is booked once. Idempotent (the undo's key derives from the correction's).
 */
export async function supersedeCorrection(deps: LedgerDeps, movement: string, ownerKey: string): Promise<void> {
  const live = await deps.store.liveCorrection(movement);
  if (!live) return;
  await new ReverseCorrection(deps).execute({
    idempotencyKey: `${live.idempotencyKey}:superseded`,
    correctionKey: live.idempotencyKey,
    reason: `superseded: its owner booked the movement (${ownerKey})`,
  });
}
