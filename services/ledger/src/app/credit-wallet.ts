import { creditAmounts } from '../domain/movements.js';
import { creditPosting } from '../domain/postings.js';
import { isWalletRail, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { replayPosting, storedDetails, walletMissing, type PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { MAX_DESCRIPTION, MAX_REFERENCE, Problems, checkIdempotencyKey, checkPositive, checkText, orNull, requireCompany } from './validation.js';

export interface CreditCommand {
  idempotencyKey: string;
  rail: string;
  amountCents: bigint;
  reference?: string;
  apiKeyId?: string;
  description?: string;
}

/** Admin credit (BALANCE_ADD): funding −X, wallet_available +X; a COMPLETED movement. */
export class CreditWallet {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: CreditCommand): Promise<PostingResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!isWalletRail(cmd.rail)) p.add('rail', 'must be BREB or ACH');
    checkPositive(p, 'amountCents', cmd.amountCents);
    checkText(p, 'reference', cmd.reference, MAX_REFERENCE);
    checkText(p, 'description', cmd.description, MAX_DESCRIPTION);
    p.throwIfAny();
    const rail = cmd.rail as WalletRail;

    const deps = this.deps;
    const postingId = deps.newId();
    const movementId = deps.newId();
    const draft = creditPosting(companyId, rail, cmd.amountCents);
    const hash = requestHash(draft.kind, companyId, cmd);
    return runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write: {
        posting: { id: postingId, kind: draft.kind, idempotencyKey: cmd.idempotencyKey, requestHash: hash, companyId, rail, movementId, holdId: null },
        entries: draft.entries,
        wallet: draft.wallet,
        newMovement: {
          id: movementId,
          companyId,
          type: 'BALANCE_ADD',
          rail,
          walletRail: rail,
          status: 'COMPLETED',
          completed: true,
          ...creditAmounts(cmd.amountCents),
          reference: orNull(cmd.reference),
          apiKeyId: orNull(cmd.apiKeyId),
          details: storedDetails({ description: cmd.description }),
        },
        event: postingEvent(deps, {
          postingId,
          kind: draft.kind,
          companyId,
          rail,
          movementId,
          holdId: null,
          entries: draft.entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      },
      applied: (o) => ({ postingId, movement: o.movement, replayed: false }),
      replay: (existing) => replayPosting(deps, companyId, existing),
      rejected: async () => {
        throw await walletMissing(deps, companyId, rail);
      },
    });
  }
}
