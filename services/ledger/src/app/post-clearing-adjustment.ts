import { clearingAdjustmentPosting } from '../domain/postings.js';
import { CLEARINGS, CLEARING_ACCOUNTS, isClearing } from '../domain/rails.js';
import { checkCorrectionTarget, runCorrection } from './corrections.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import type { PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { Problems, checkIdempotencyKey, checkText } from './validation.js';

/**
 * The largest |delta| one adjustment may book: 1,000,000,000,000 centavos (COP 10,000 million), five
 * times the largest ACH transfer (RAIL_CAPS). A break is one report line or record (a duplicate: all its
 * copies); a difference beyond this is not a reconciliation difference but a wrong report or a bug,
 * and must not be booked with one click.
 */
export const MAX_CLEARING_ADJUSTMENT_CENTS = 1_000_000_000_000n;
/** The reason carries the break key, the exception id and the operator's note. */
export const MAX_ADJUSTMENT_REASON = 1000;

/** Postings of no company (service level) are filed with this company id; a company id is never empty. */
export const NO_COMPANY = '';

export interface PostClearingAdjustmentCommand {
  idempotencyKey: string;
  clearing: string;
  deltaCents: bigint;
  reason: string;
  /** The external movement corrected and the case asking (one live correction per movement). */
  movement: string;
  caseId: string;
}

/**
 * A reconciliation break accepted on the provider's side (docs/reconciliation.md "Clearing effects and `difference_cents`"): the
 * clearing account of the report moves by `deltaCents` (the break's difference_cents, signed) against
 * reconciliation_differences(that account). Service level: the caller is the reconciliation service,
 * not a company (a company on the call is not used); no wallet, hold or movement is touched.
 * Idempotent on the key (`recon:<break key>:accept_provider`) with the request hash: the same body
 * replays the first posting; another body under the key is REFERENCE_CONFLICT.
 */
export class PostClearingAdjustment {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(cmd: PostClearingAdjustmentCommand): Promise<PostingResult> {
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!isClearing(cmd.clearing)) p.add('clearing', `must be one of ${CLEARINGS.join(', ')}`);
    if (cmd.deltaCents === 0n) p.add('deltaCents', 'must not be zero');
    else if (cmd.deltaCents > MAX_CLEARING_ADJUSTMENT_CENTS || cmd.deltaCents < -MAX_CLEARING_ADJUSTMENT_CENTS) {
      p.add('deltaCents', `must be at most ${MAX_CLEARING_ADJUSTMENT_CENTS} in absolute value`);
    }
    if (!cmd.reason || !cmd.reason.trim()) p.add('reason', 'is required');
    else checkText(p, 'reason', cmd.reason, MAX_ADJUSTMENT_REASON);
    checkCorrectionTarget(p, cmd.movement, cmd.caseId);
    p.throwIfAny();
    const clearing = cmd.clearing as keyof typeof CLEARING_ACCOUNTS;
    const rail = CLEARING_ACCOUNTS[clearing].walletRail;
    const deps = this.deps;
    const postingId = deps.newId();
    const draft = clearingAdjustmentPosting(clearing, cmd.deltaCents);
    const request = { idempotencyKey: cmd.idempotencyKey, clearing, deltaCents: cmd.deltaCents, reason: cmd.reason };
    const hash = requestHash(draft.kind, NO_COMPANY, request);
    return runCorrection(deps, cmd.movement, cmd.idempotencyKey, () =>
      runIdempotentPosting<PostingResult>(deps, {
        idempotencyKey: cmd.idempotencyKey,
        requestHash: hash,
        write: {
          posting: {
            id: postingId,
            kind: draft.kind,
            idempotencyKey: cmd.idempotencyKey,
            requestHash: hash,
            companyId: NO_COMPANY,
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
            companyId: NO_COMPANY,
            rail,
            movementId: null,
            holdId: null,
            entries: draft.entries,
            idempotencyKey: cmd.idempotencyKey,
          }),
        },
        applied: () => ({ postingId, movement: null, replayed: false }),
        replay: async (existing) => ({ postingId: existing.id, movement: null, replayed: true }),
        rejected: () => {
          throw new Error('a clearing adjustment has no guard to fail');
        },
      }),
    );
  }
}
