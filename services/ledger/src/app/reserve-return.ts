import { AppError } from '@wallet/platform';
import { ZERO_FEE_SCHEDULE, computeFees } from '../domain/fees.js';
import { Accounts } from '../domain/accounts.js';
import type { LedgerDeps } from './deps.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { checkMovementSpec, type MovementSpecCommand } from './movement-spec.js';
import { debitRefused, replayHold, type HoldResult } from './results.js';
import { requestHash } from './request-hash.js';
import { reserveWrite } from './reserve-funds.js';
import { Problems, checkIdempotencyKey, checkPositive, requireCompany } from './validation.js';

export interface ReserveReturnCommand {
  idempotencyKey: string;
  /** The RecordInflow key of the credited inflow being returned to its payer. */
  inflowIdempotencyKey: string;
  amount: bigint;
  movement?: MovementSpecCommand;
}

/**
 * A return (devolución) of a credited inflow to its payer (docs/returns.md): the hold of a send on the
 * inflow's wallet (available −R; pending_out +R; no fee) with a TRANSFER_OUT movement on the inflow's
 * rail, and the return's claim on the inflow (`returned_cents` +R) in the same transaction, applied only
 * while the inflow is COMPLETED and the claims stay within its gross. Its Commit (CommitReturn) credits
 * the inflow's settlement account (the money goes back the way it came), its Release (ReleaseReturn)
 * gives the funds and the claim back. Company-scoped: another company's inflow reads as not found.
 */
export class ReserveReturn {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: ReserveReturnCommand): Promise<HoldResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    checkPositive(p, 'amount', cmd.amount);
    if (!cmd.inflowIdempotencyKey) p.add('inflowIdempotencyKey', 'is required');
    else if (cmd.inflowIdempotencyKey === cmd.idempotencyKey) p.add('inflowIdempotencyKey', 'must differ from idempotencyKey');
    checkMovementSpec(p, cmd.movement, ['PENDING']);
    p.throwIfAny();

    const deps = this.deps;
    const original = await deps.store.findPosting(cmd.inflowIdempotencyKey);
    if (!original || original.companyId !== companyId || original.kind !== 'inflow' || !original.movementId) throw new AppError('TRANSACTION_NOT_FOUND');
    const inflow = await deps.store.inflowReturns(companyId, original.movementId);
    if (!inflow) throw new AppError('TRANSACTION_NOT_FOUND');
    const returnAccount = inflow.rail === 'PSE' ? Accounts.pseSettlement : Accounts.brebSettlement;
    const { write } = reserveWrite(
      deps,
      companyId,
      { idempotencyKey: cmd.idempotencyKey, rail: inflow.walletRail, amount: cmd.amount, ...(cmd.movement ? { movement: cmd.movement } : {}) },
      computeFees(ZERO_FEE_SCHEDULE, cmd.amount, false),
    );
    const hash = requestHash('return_reserve', companyId, cmd);
    write.posting.requestHash = hash;
    write.newHold = { ...write.newHold!, returnOf: inflow.movementId, returnAccount };
    write.newMovement = { ...write.newMovement!, rail: inflow.rail };
    write.returnClaim = { movementId: inflow.movementId, companyId, delta: cmd.amount };
    return runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write,
      applied: (o) => ({ hold: o.hold!, movement: o.movement, replayed: false }),
      replay: (existing) => replayHold(deps, companyId, existing),
      rejected: async () => {
        // Why nothing was written: the inflow as it is now (a concurrent change may have decided it).
        const now = await deps.store.inflowReturns(companyId, inflow.movementId);
        if (!now || now.status !== 'COMPLETED') {
          throw new AppError('INVALID_STATE_TRANSITION', 'El pago fue revertido; ya no se puede devolver.');
        }
        if (now.returnedCents + cmd.amount > now.amount) {
          throw new AppError('RETURN_EXCEEDS_PAYMENT', undefined, {
            grossCents: now.amount.toString(),
            returnedCents: now.returnedCents.toString(),
            returnableCents: (now.amount - now.returnedCents).toString(),
          });
        }
        return debitRefused(deps, companyId, inflow.walletRail);
      },
    });
  }
}
