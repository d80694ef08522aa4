import { AppError } from '@wallet/platform';
import { isWalletRail, type WalletRail } from '../domain/rails.js';
import type { Hold } from '../domain/movements.js';
import type { LedgerDeps } from './deps.js';
import { requestHash } from './request-hash.js';
import { stripHoldView } from './results.js';
import { Problems, checkIdempotencyKey, requireCompany } from './validation.js';

export interface VoidReserveCommand {
  /** The Reserve's own key (e.g. `transfer:<id>:reserve`). */
  idempotencyKey: string;
  rail: string;
}

export type VoidReserveResult = { voided: true } | { voided: false; hold: Hold };

/**
 * The fence a caller puts up before giving a send up (LEDGER.md, "Void"). It claims the Reserve's
 * idempotency key with a `void` posting that moves no money, so a Reserve still in flight, or sent
 * later, can never apply (it answers RESERVE_VOIDED). If the Reserve got there first, nothing is
 * voided and its hold is answered, for the caller to release. The unique key decides between the
 * two, so a Reserve and a Void racing each other never both win. Idempotent.
 */
export class VoidReserve {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: VoidReserveCommand): Promise<VoidReserveResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!isWalletRail(cmd.rail)) p.add('rail', 'must be BREB or ACH');
    p.throwIfAny();
    const deps = this.deps;
    const owner = await deps.store.voidKey({
      id: deps.newId(),
      idempotencyKey: cmd.idempotencyKey,
      requestHash: requestHash('void', companyId, cmd),
      companyId,
      rail: cmd.rail as WalletRail,
    });
    if (owner.companyId !== companyId) throw new AppError('REFERENCE_CONFLICT');
    if (owner.kind === 'void') return { voided: true };
    if (owner.kind !== 'reserve' || !owner.holdId) throw new AppError('REFERENCE_CONFLICT', 'La clave no corresponde a una reserva de fondos.');
    const hold = await deps.store.getHold(companyId, owner.holdId);
    if (!hold) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'reserve posting without its hold' });
    return { voided: false, hold: stripHoldView(hold) };
  }
}
