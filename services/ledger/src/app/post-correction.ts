import { writeOffPayoutPosting } from '../domain/postings.js';
import { checkCorrectionTarget, runCorrection } from './corrections.js';
import { isWalletRail, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { replayPosting, type PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { MAX_DESCRIPTION, Problems, checkIdempotencyKey, checkPositive, checkText, requireCompany } from './validation.js';

export const CORRECTION_TYPES = ['WRITE_OFF_PAYOUT'] as const;
export type CorrectionType = (typeof CORRECTION_TYPES)[number];

export interface PostCorrectionCommand {
  idempotencyKey: string;
  type: string;
  rail: string;
  amount: bigint;
  reason: string;
  /** The external movement corrected and the case asking (one live correction per movement). */
  movement: string;
  caseId: string;
}

/**
 * A correcting entry that resolves a money exception (CONTRACT §10), posted by the owning service
 * for an operator's decision. The company (caller) is the one the exception concerns; no wallet of
 * it moves. Idempotent on the caller's key (`exception:<id>:<action>`), and one live correction per
 * external movement (`movement`): MOVEMENT_ALREADY_CORRECTED when another case corrected it.
 */
export class PostCorrection {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: PostCorrectionCommand): Promise<PostingResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!CORRECTION_TYPES.includes(cmd.type as CorrectionType)) p.add('type', `must be one of ${CORRECTION_TYPES.join(', ')}`);
    if (!isWalletRail(cmd.rail)) p.add('rail', 'must be BREB or ACH');
    checkPositive(p, 'amount', cmd.amount);
    checkText(p, 'reason', cmd.reason, MAX_DESCRIPTION);
    if (!cmd.reason) p.add('reason', 'is required');
    checkCorrectionTarget(p, cmd.movement, cmd.caseId);
    p.throwIfAny();
    const rail = cmd.rail as WalletRail;
    const deps = this.deps;
    const postingId = deps.newId();
    const draft = writeOffPayoutPosting(rail, cmd.amount);
    const hash = requestHash(draft.kind, companyId, cmd);
    return runCorrection(deps, cmd.movement, cmd.idempotencyKey, () =>
      runIdempotentPosting(deps, {
        idempotencyKey: cmd.idempotencyKey,
        requestHash: hash,
        write: {
          posting: {
            id: postingId,
            kind: draft.kind,
            idempotencyKey: cmd.idempotencyKey,
            requestHash: hash,
            companyId,
            rail,
            movementId: null,
            holdId: null,
            reason: cmd.reason,
          },
          entries: draft.entries,
          wallet: null,
          correction: { movement: cmd.movement, caseId: cmd.caseId },
          event: postingEvent(deps, {
            postingId,
            kind: draft.kind,
            companyId,
            rail,
            movementId: null,
            holdId: null,
            entries: draft.entries,
            idempotencyKey: cmd.idempotencyKey,
          }),
        },
        applied: () => ({ postingId, movement: null, replayed: false }),
        replay: (existing) => replayPosting(deps, companyId, existing),
        rejected: () => {
          throw new Error('a correction posting has no guard to fail');
        },
      }),
    );
  }
}
