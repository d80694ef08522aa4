import { AppError } from '@wallet/platform';
import type { Movement } from '../domain/movements.js';
import { moveAmounts } from '../domain/movements.js';
import { movePosting } from '../domain/postings.js';
import { isWalletRail, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent, walletMovedEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { storedDetails, walletMissing } from './results.js';
import { requestHash } from './request-hash.js';
import { MAX_DESCRIPTION, MAX_REFERENCE, Problems, checkIdempotencyKey, checkPositive, checkText, isUuid, orNull, requireCompany } from './validation.js';

export interface MoveCommand {
  idempotencyKey: string;
  from: string;
  to: string;
  amountCents: bigint;
  reference?: string;
  description?: string;
  apiKeyId?: string;
}

/** A move and its two legs: the debit (TRANSFER_OUT on `from`) and the credit (TRANSFER_IN on `to`). */
export interface MoveResult {
  moveId: string;
  debit: Movement;
  credit: Movement;
  replayed: boolean;
}

/**
 * A move between the company's own wallets (docs/wallet-moves.md): ONE posting,
 * wallet_available(from) −X; wallet_available(to) +X, only if `from` covers X; no fee. Its two
 * movements are COMPLETED at once and carry the move's id (the posting's). The idempotency key is the
 * company's own (kept as `move:<company>:<key>`): two companies' keys never meet.
 */
export class MoveFunds {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: MoveCommand): Promise<MoveResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!isWalletRail(cmd.from)) p.add('from', 'must be BREB or ACH');
    if (!isWalletRail(cmd.to)) p.add('to', 'must be BREB or ACH');
    else if (cmd.to === cmd.from) p.add('to', 'must be the other wallet');
    checkPositive(p, 'amountCents', cmd.amountCents);
    checkText(p, 'reference', cmd.reference, MAX_REFERENCE);
    checkText(p, 'description', cmd.description, MAX_DESCRIPTION);
    p.throwIfAny();
    const from = cmd.from as WalletRail;
    const to = cmd.to as WalletRail;

    const deps = this.deps;
    const moveId = deps.newId();
    const debitId = deps.newId();
    const creditId = deps.newId();
    const key = `move:${companyId}:${cmd.idempotencyKey}`;
    const draft = movePosting(companyId, from, to, cmd.amountCents);
    // Not the API key: a retry of the company's key from another of its keys is the same move.
    const { apiKeyId: _key, ...hashed } = cmd;
    const hash = requestHash(draft.kind, companyId, hashed);
    const reference = orNull(cmd.reference);
    const description = orNull(cmd.description);
    const apiKeyId = orNull(cmd.apiKeyId);
    const leg = (id: string, rail: WalletRail, type: 'TRANSFER_OUT' | 'TRANSFER_IN') => ({
      id,
      companyId,
      type,
      rail,
      walletRail: rail,
      status: 'COMPLETED' as const,
      completed: true,
      ...moveAmounts(cmd.amountCents),
      reference,
      apiKeyId,
      details: storedDetails({ ...(description !== null ? { description } : {}) }),
      walletMoveId: moveId,
    });
    return runIdempotentPosting<MoveResult>(deps, {
      idempotencyKey: key,
      requestHash: hash,
      write: {
        posting: { id: moveId, kind: draft.kind, idempotencyKey: key, requestHash: hash, companyId, rail: from, movementId: debitId, holdId: null },
        entries: draft.entries,
        wallet: draft.wallet,
        counterWallet: draft.counterWallet,
        newMovement: leg(debitId, from, 'TRANSFER_OUT'),
        counterMovement: leg(creditId, to, 'TRANSFER_IN'),
        event: postingEvent(deps, {
          postingId: moveId,
          kind: draft.kind,
          companyId,
          rail: from,
          movementId: debitId,
          holdId: null,
          entries: draft.entries,
          idempotencyKey: key,
        }),
        alsoEvents: [
          walletMovedEvent(deps, {
            companyId,
            moveId,
            from,
            to,
            amount: cmd.amountCents,
            reference,
            description,
            debitMovementId: debitId,
            creditMovementId: creditId,
            apiKeyId,
          }),
        ],
      },
      // Both legs as the statement wrote them (no second read); a replay reads the first move's.
      applied: (o) => ({ moveId, debit: o.movement!, credit: o.counterMovement!, replayed: false }),
      replay: async (existing) => {
        const first = await moveOf(deps, companyId, existing.id);
        if (!first) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'move without its two legs' });
        return { ...first, replayed: true };
      },
      rejected: async () => {
        const wallets = await deps.store.getWallets(companyId);
        for (const rail of [to, from]) if (!wallets.some((w) => w.rail === rail)) throw await walletMissing(deps, companyId, rail);
        throw new AppError('INSUFFICIENT_BALANCE');
      },
    });
  }
}

/** A stored move's two legs, the debit first; undefined when the company has no such move. */
async function moveOf(deps: LedgerDeps, companyId: string, moveId: string): Promise<Omit<MoveResult, 'replayed'> | undefined> {
  const [debit, credit] = await deps.store.getMoveLegs(companyId, moveId);
  return debit && credit ? { moveId, debit, credit } : undefined;
}

/** GetMove: a move of the company, by id; WALLET_MOVE_NOT_FOUND for an unknown id or another company's. */
export class GetMove {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, moveId: string): Promise<MoveResult> {
    const companyId = requireCompany(caller);
    const move = isUuid(moveId) ? await moveOf(this.deps, companyId, moveId.toLowerCase()) : undefined;
    if (!move) throw new AppError('WALLET_MOVE_NOT_FOUND');
    return { ...move, replayed: false };
  }
}
