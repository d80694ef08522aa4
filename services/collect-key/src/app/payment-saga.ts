import { AppError, newExceptionId } from '@wallet/platform';
import { maskKeyValue } from '../domain/collect-key.js';
import { MONEY_STATES, PAYMENT_MACHINE, type Actor, type ExceptionKind, type PaymentEvent, type PaymentState } from '../domain/payment-machine.js';
import type { CollectKeyDeps } from './deps.js';
import { depositEvent } from './events.js';
import { ZERO_FEE, type CollectKeyStore, type PaymentRecord } from './ports.js';

/** Ledger answers that are a definite "no" (anything else is retried: the ledger may be down or slow). */
const REFUSALS = ['WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'REFERENCE_CONFLICT', 'INVALID_REQUEST', 'VALIDATION_ERROR', 'FEE_EXCEEDS_AMOUNT'];
const refused = (err: unknown): err is AppError => err instanceof AppError && REFUSALS.includes(err.code);

/**
 * The inbound payment saga's one writer. Every change of a payment's state goes through `apply`,
 * which looks the event up in `PAYMENT_MACHINE` and runs its compare-and-set (state + history +
 * outbox event, one transaction); the money step a money state owes runs in `settle`, only in that
 * state. Every step is safe to run twice and concurrently: the ledger call carries the key
 * `collectkey:payment:<providerTransferId>`, and the closing events are compare-and-sets.
 */
export class PaymentSaga {
  constructor(private readonly deps: CollectKeyDeps) {}

  /** Applies one event of the table; undefined when the payment was not in a state the event leaves (another writer won). */
  async apply(
    p: PaymentRecord,
    event: PaymentEvent,
    actor: Actor,
    reason?: string,
    patch?: Parameters<CollectKeyStore['transitionPayment']>[0]['patch'],
  ): Promise<PaymentRecord | undefined> {
    const { deps } = this;
    const spec = PAYMENT_MACHINE[event];
    if (!spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event}`);
    if (!spec.from.includes(p.status)) return undefined;
    const emits = spec.emits;
    return deps.store.transitionPayment({
      depositId: p.depositId,
      from: spec.from,
      to: spec.to,
      reason: reason ?? `${event} (${actor})`,
      ...(patch ? { patch } : {}),
      ...(emits ? { event: (r: PaymentRecord) => depositEvent(deps, r) } : {}),
    });
  }

  /**
   * The money step a payment in CREDITING or HOLDING owes, then the event that closes it. Any other
   * state: returned as it is. A ledger error that may be transient is thrown (the network's delivery
   * is answered with an error and retried; the sweeper runs the step again after its grace); a
   * definite refusal opens a CREDIT_REFUSED money exception: a refused credit goes to CREDIT_REFUSED
   * (at rest), a refused hold is parked in HOLDING for an operator; a refused assignment goes back
   * to UNASSIGNED (nothing moved) and the ledger's error is thrown to whoever asked.
   */
  async settle(p: PaymentRecord, actor: Actor): Promise<PaymentRecord> {
    const { deps } = this;
    const owed = MONEY_STATES[p.status];
    if (!owed) return p;
    let closing: Parameters<CollectKeyStore['transitionPayment']>[0]['patch'];
    if (owed.step === 'return') {
      // The network first (idempotent by the deposit id: a rerun after a crash gets the same return), then the books.
      const r = await deps.directory.returnPayment({ returnId: p.depositId, providerTransferId: p.providerTransferId, amountCents: p.amount });
      if (r.outcome === 'UNAVAILABLE') throw new AppError('SERVICE_UNAVAILABLE', 'La red Bre-B no respondió la devolución; se completará sola.');
      if (r.outcome === 'REFUSED') {
        await this.apply(p, 'return_refused', actor, `the network refused the return: ${r.code ?? 'refused'}`);
        deps.log.warn({ depositId: p.depositId, companyId: p.companyId, code: r.code }, 'return of a held Bre-B payment refused by the network');
        throw new AppError('INVALID_STATE_TRANSITION', 'La red Bre-B rechazó la devolución del pago; sigue sin asignar.');
      }
      closing = { returnedAt: r.returnedAt! };
    }
    try {
      if (owed.step === 'return') await deps.ledger.returnHeld(p);
      else await deps.ledger.recordInflow(p, owed.step);
    } catch (err) {
      if (!refused(err)) throw err;
      const theirs = { source: 'ledger', code: err.code, message: err.message };
      if (owed.step === 'assign') {
        // Nothing moved: the funds stay held (UNASSIGNED) and whoever asked is told why.
        await this.apply(p, 'assign_refused', actor, `the ledger refused the assignment: ${err.code}`, { fee: ZERO_FEE, netAmount: p.amount });
        deps.log.warn({ depositId: p.depositId, companyId: p.companyId, code: err.code }, 'assignment of a held Bre-B payment refused by the ledger');
        throw err;
      }
      if (owed.step === 'return') {
        // The payer has the money back; our books do not say so yet: parked for an operator.
        await this.contradiction(p, 'RETURN_REFUSED', theirs, p.status);
        await deps.store.parkPayment(p.depositId, p.status);
        return this.reload(p);
      }
      if (owed.step === 'credit') {
        const moved = await this.apply(p, 'credit_refused', actor, `the ledger refused the credit: ${err.code}`);
        if (!moved) return this.reload(p);
        await this.contradiction(moved, 'CREDIT_REFUSED', theirs, p.status);
        return moved;
      }
      await this.contradiction(p, 'CREDIT_REFUSED', theirs, p.status);
      await deps.store.parkPayment(p.depositId, p.status);
      return this.reload(p);
    }
    const done = await this.apply(p, owed.closes, actor, undefined, closing);
    if (done) deps.log.info({ depositId: p.depositId, status: done.status, keyId: p.key.id }, 'Bre-B payment recorded');
    return done ?? this.reload(p);
  }

  /** A ledger refusal of a payment's money step: a money exception (one per kind and payment), an error log. Nothing moves here. */
  async contradiction(p: PaymentRecord, kind: ExceptionKind, theirs: Record<string, unknown>, stepState: PaymentState): Promise<void> {
    const { deps } = this;
    const { opened, exception } = await deps.store.exceptions.open({
      id: newExceptionId(),
      kind,
      companyId: p.companyId,
      rail: 'BREB',
      resourceId: p.depositId,
      ours: {
        state: p.status,
        step: MONEY_STATES[stepState]?.step ?? null,
        providerTransferId: p.providerTransferId,
        amount: p.amount.toString(),
        netAmount: p.netAmount.toString(),
        keyId: p.key.id,
        keyExternalId: p.key.externalId,
        keyState: p.key.state,
        receivedAt: p.receivedAt.toISOString(),
      },
      theirs,
    });
    deps.log.error(
      { depositId: p.depositId, companyId: p.companyId, exceptionId: exception.id, kind, state: p.status, opened, keyValue: maskKeyValue(p.key.value), theirs },
      "money exception: the ledger refused an inbound Bre-B payment's step",
    );
  }

  async reload(p: PaymentRecord): Promise<PaymentRecord> {
    return (await this.deps.store.paymentById(p.depositId)) ?? p;
  }
}
