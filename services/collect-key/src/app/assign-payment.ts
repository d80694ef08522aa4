import { AppError } from '@wallet/platform';
import { isKeyId } from '../domain/collect-key.js';
import type { Actor } from '../domain/payment-machine.js';
import type { CollectKeyDeps } from './deps.js';
import type { PaymentSaga } from './payment-saga.js';
import { ZERO_FEE, type FeeBreakdown, type PaymentRecord } from './ports.js';

export interface AssignPaymentInput {
  depositId: string;
  /** A live (ACTIVE) key of the payment's company to assign it through; absent: the company's BREB wallet through the key it was paid to. */
  keyId?: string | undefined;
  /** Why (operators: required; kept in the payment's history). */
  note?: string | undefined;
  /** Who: `operator:<id>` / `admin`, or `company` for an API client. */
  by: string;
}

const notFound = () => new AppError('DEPOSIT_NOT_FOUND');

/**
 * The way out of unassigned funds: a Bre-B payment held UNASSIGNED (paid to a suspended or deleted
 * key) is assigned to its company, by an operator (any company's: no company in the call) or by the
 * company itself (its own payments only; another company's reads as not found). Through the saga's
 * table: UNASSIGNED → ASSIGNING (a compare-and-set, with the fees and the key it is assigned
 * through) → RecordInflow BREB from unassigned funds under `collectkey:payment:<id>:assign`
 * (unassigned_funds −G; wallet_available(BREB) +N; fee; IVA) → ASSIGNED + `deposit.paid`.
 * Idempotent on the payment (its natural key): a repeat answers the ASSIGNED payment; of two at
 * once exactly one wins the move and posts, the other finishes or answers the winner's result. A
 * ledger refusal (no BREB wallet…) moves it back to UNASSIGNED and answers the ledger's error.
 */
export class AssignPayment {
  constructor(
    private readonly deps: CollectKeyDeps,
    private readonly saga: PaymentSaga,
  ) {}

  async execute(companyId: string | undefined, input: AssignPaymentInput): Promise<PaymentRecord> {
    const { deps } = this;
    const actor: Actor = companyId ? 'company' : 'operator';
    if (!/^dep_[a-z0-9]{24}$/.test(input.depositId ?? '')) throw notFound();
    const p = await deps.store.paymentById(input.depositId);
    if (!p || (companyId && p.companyId !== companyId)) throw notFound();
    if (input.keyId !== undefined && input.keyId !== '' && !isKeyId(input.keyId)) throw new AppError('KEY_NOT_FOUND');

    let target: PaymentRecord['key'] = p.key;
    let ivaApplicable: boolean;
    if (input.keyId) {
      const k = await deps.store.byId(input.keyId);
      // A cobro's key is the cobro's, not a customer key to assign through.
      if (!k || k.companyId !== p.companyId || k.state === 'REGISTERING' || k.state === 'FAILED' || k.cobro) throw new AppError('KEY_NOT_FOUND');
      if (k.state !== 'ACTIVE') throw new AppError('KEY_NOT_ACTIVE', 'La llave de destino de la asignación debe estar activa.');
      target = { id: k.id, externalId: k.externalId, name: k.name, value: k.keyValue, state: k.state };
      ivaApplicable = k.ivaApplicable;
    } else {
      ivaApplicable = (await deps.store.byId(p.key.id))?.ivaApplicable ?? false;
    }

    for (let attempt = 0; ; attempt++) {
      const cur = attempt === 0 ? p : await this.saga.reload(p);
      if (cur.status === 'ASSIGNED') return cur; // already assigned (a repeat, or the concurrent winner's)
      if (cur.status === 'ASSIGNING') return this.saga.settle(cur, actor); // in flight: finished here (the ledger key makes it once)
      if (cur.status !== 'UNASSIGNED') {
        throw new AppError('INVALID_STATE_TRANSITION', 'Solo un depósito Bre-B sin asignar (UNASSIGNED) puede asignarse a la empresa.');
      }
      let fee: FeeBreakdown = await deps.ledger.computeBrebInflowFees(cur.companyId, cur.amount, ivaApplicable);
      if (fee.totalCharged >= cur.amount) fee = ZERO_FEE; // as for a payment to a live key: never a fee at or above the money
      const won = await this.saga.apply(cur, 'assign', actor, `assigned by ${input.by}${input.note ? `: ${input.note}` : ''}`, {
        fee,
        netAmount: cur.amount - fee.totalCharged,
        key: target,
      });
      if (won) {
        deps.log.info({ depositId: cur.depositId, companyId: cur.companyId, by: input.by, keyId: target.id }, 'held Bre-B payment assigned');
        return this.saga.settle(won, actor);
      }
      if (attempt >= 3) throw new AppError('SERVICE_UNAVAILABLE');
    }
  }
}
