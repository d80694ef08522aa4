import { AppError } from '@wallet/platform';
import type { Actor } from '../domain/payment-machine.js';
import type { CollectKeyDeps } from './deps.js';
import type { PaymentSaga } from './payment-saga.js';
import type { PaymentRecord } from './ports.js';

/**
 * The other way out of unassigned funds: a Bre-B payment held UNASSIGNED is returned to the payer
 * through the network, by an operator (any company's) or by the company itself (its own only;
 * another company's reads as not found). Through the saga's table: UNASSIGNED → RETURNING (a
 * compare-and-set; an assignment racing it loses, or wins and this one answers 409) → the network's
 * return (`POST /breb/network/returns`, returnId = the deposit id) → ReturnUnassignedInflow under
 * `collectkey:payment:<id>:returned` (unassigned_funds(BREB) −G; breb_settlement +G) → RETURNED +
 * `deposit.reversed` (the deposit shows REVERSED). Idempotent on the deposit: a repeat answers the RETURNED deposit. The network
 * unreachable: 503 and the sweeper finishes it; the network's refusal: back to UNASSIGNED, 409.
 */
export class ReturnPayment {
  constructor(
    private readonly deps: CollectKeyDeps,
    private readonly saga: PaymentSaga,
  ) {}

  async execute(companyId: string | undefined, input: { depositId: string; note?: string | undefined; by: string }): Promise<PaymentRecord> {
    const { deps } = this;
    const actor: Actor = companyId ? 'company' : 'operator';
    if (!/^dep_[a-z0-9]{24}$/.test(input.depositId ?? '')) throw new AppError('DEPOSIT_NOT_FOUND');
    const p = await deps.store.paymentById(input.depositId);
    if (!p || (companyId && p.companyId !== companyId)) throw new AppError('DEPOSIT_NOT_FOUND');
    for (let attempt = 0; ; attempt++) {
      const cur = attempt === 0 ? p : await this.saga.reload(p);
      if (cur.status === 'RETURNED') return cur;
      if (cur.status === 'RETURNING') return this.finish(cur, actor);
      if (cur.status !== 'UNASSIGNED') {
        throw new AppError('INVALID_STATE_TRANSITION', 'Solo un depósito Bre-B sin asignar (UNASSIGNED) puede devolverse al pagador.');
      }
      const won = await this.saga.apply(cur, 'return', actor, `returned by ${input.by}${input.note ? `: ${input.note}` : ''}`);
      if (won) {
        deps.log.info({ depositId: cur.depositId, companyId: cur.companyId, by: input.by }, 'held Bre-B payment being returned to the payer');
        return this.finish(won, actor);
      }
      if (attempt >= 3) throw new AppError('SERVICE_UNAVAILABLE');
    }
  }

  private async finish(p: PaymentRecord, actor: Actor): Promise<PaymentRecord> {
    const after = await this.saga.settle(p, actor);
    if (after.status === 'RETURNING') {
      // Parked (the ledger refused the entry: a RETURN_REFUSED exception is open) or still owed.
      throw new AppError('SERVICE_UNAVAILABLE', 'La devolución quedó en curso; se completará o la resolverá un operador.');
    }
    return after;
  }
}
