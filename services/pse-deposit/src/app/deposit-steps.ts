import type { DepositRecord } from '../domain/deposit.js';
import type { DepositDeps } from './deps.js';
import { depositEvent } from './events.js';

/**
 * The money steps after a recorded intent (pending_step), shared by the callback handler and the
 * sweeper. The ledger calls are idempotent on `deposit:<id>:paid|reversed`, so running a step twice
 * (a retry after a crash, the sweeper racing the owner) posts once; the state change after it is a
 * compare-and-set, so exactly one runner writes the event.
 */
export class DepositSteps {
  constructor(private readonly deps: DepositDeps) {}

  /** PENDING_CONFIRM + CREDIT → RecordInflow → ASSIGNED + deposit.paid. */
  async finishCredit(d: DepositRecord): Promise<DepositRecord> {
    await this.deps.ledger.recordPseInflow(d);
    const done = await this.deps.store.transition({
      id: d.id, from: { status: 'PENDING_CONFIRM', step: 'CREDIT' }, to: { status: 'ASSIGNED', step: null },
      reason: 'credited', event: (r) => depositEvent(this.deps, 'paid', r),
    });
    return done ?? (await this.deps.store.getById(d.id)) ?? d;
  }

  /** ASSIGNED + REVERSE → ReverseInflow → REVERSED + deposit.reversed. */
  async finishReversal(d: DepositRecord): Promise<DepositRecord> {
    await this.deps.ledger.reversePseInflow(d, d.errorMessage ?? 'Pago reversado por el proveedor PSE');
    const done = await this.deps.store.transition({
      id: d.id, from: { status: 'ASSIGNED', step: 'REVERSE' }, to: { status: 'REVERSED', step: null },
      reason: 'reversed', event: (r) => depositEvent(this.deps, 'reversed', r),
    });
    return done ?? (await this.deps.store.getById(d.id)) ?? d;
  }

  async resume(d: DepositRecord): Promise<DepositRecord> {
    if (d.pendingStep === 'CREDIT' && d.status === 'PENDING_CONFIRM') return this.finishCredit(d);
    if (d.pendingStep === 'REVERSE' && d.status === 'ASSIGNED') return this.finishReversal(d);
    return d;
  }
}
