import {
  AppError,
  externalMovementRef,
  linkActiveSpanToSagaOf,
  listExceptionsPage,
  parseExternalMovement,
  resolveMoneyException,
  resolveReturnException,
  RETURN_EXCEPTION_KIND,
  type ExceptionView,
  type MoneyException,
  type ReturnSaga,
  type ExceptionListRequest,
} from '@wallet/platform';
import { EXCEPTION_ACTIONS, EXCEPTION_KINDS, MONEY_STATES, type ExceptionKind } from '../domain/payment-machine.js';
import type { CollectKeyDeps } from './deps.js';
import type { PaymentSaga } from './payment-saga.js';
import { ZERO_FEE } from './ports.js';
import type { ReturnPayment } from './return-payment.js';

/** The exceptions about a payment's return to the payer (its second movement of the network). */
const RETURN_KINDS: ReadonlySet<string> = new Set(['RETURN_REFUSED']);
const actionsOf = (kind: string): readonly string[] => EXCEPTION_ACTIONS[kind as ExceptionKind] ?? ['dismiss'];
const view = (e: MoneyException): ExceptionView => ({ ...e, actions: actionsOf(e.kind) });

/** GET /admin/exceptions (CONTRACT §10), the inbound Bre-B payments' part: newest first (opened_at desc, id desc), across companies. */
export class ListPaymentExceptions {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(q: ExceptionListRequest): Promise<{ items: ExceptionView[]; nextCursor: string | null }> {
    const { movement, ...rest } = q;
    const m = movement ? parseExternalMovement(movement) : undefined;
    const payment = m?.rail === 'breb-inbound' && m.providerId ? await this.deps.store.paymentByTransfer(m.providerId) : undefined;
    const page = await listExceptionsPage((x) => this.deps.store.exceptions.list(x), EXCEPTION_KINDS, view, {
      ...rest,
      ...(movement ? { resourceIds: payment ? [payment.depositId] : [] } : {}),
    });
    // Each exception names the network's movement it is about (one case with a break about it, docs/reconciliation.md "One case per external movement").
    const ids = await this.deps.store.providerIdsOf(page.items.map((e) => e.resourceId));
    const items = page.items.map((e) => {
      const ptid = ids.get(e.resourceId);
      return ptid ? { ...e, movement: externalMovementRef('breb-inbound', { providerId: ptid }, RETURN_KINDS.has(e.kind) ? 'return' : undefined) } : e;
    });
    return { ...page, items: movement ? items.filter((e) => e.movement === movement) : items };
  }
}

/**
 * POST /admin/exceptions/{id}/resolve for an inbound payment's exception. The exception is first won
 * for the action (OPEN → RESOLVING, a compare-and-set), then the correcting step, then RESOLVED; a
 * crash or a ledger outage in between is finished by calling it again with the same action.
 *
 * - `retry` (the ledger refused the credit, e.g. the company had no BREB wallet and now has one):
 *   CREDIT_REFUSED → CREDITING through the saga's table (`retry_credit`), then the credit under the
 *   payment's own ledger key (a repeat is a replay) and ASSIGNED + `deposit.paid`. A parked hold
 *   runs again the same way (HOLDING → UNASSIGNED).
 * - `return` (CREDIT_REFUSED): the payment goes back to the payer: held first (CREDIT_REFUSED → HOLDING →
 *   UNASSIGNED, zero fee), then ReturnPayment (the network's return, then the ledger's) → RETURNED.
 * - RETURN_CLOSE_REFUSED (the ledger refused to close the hold of a credited payment's return; the return is the
 *   resource): `retry` resumes the parked return (the shared return saga's `resolveReturnException`).
 * - `dismiss`: no entry; the payment stays where it is (CREDIT_REFUSED: nothing was booked), the note says why.
 */
export class ResolvePaymentException {
  constructor(
    private readonly deps: CollectKeyDeps,
    private readonly saga: PaymentSaga,
    private readonly returns: ReturnPayment,
    private readonly returnSaga: ReturnSaga,
  ) {}

  async execute(input: { id: string; action: string; note: string; resolvedBy: string }): Promise<ExceptionView> {
    const { deps } = this;
    const done = await resolveMoneyException(deps.store.exceptions, input, actionsOf, async (won, note) => {
      if (won.kind === RETURN_EXCEPTION_KIND) return resolveReturnException(this.returnSaga, deps.store.exceptions, won);
      // The operator's resolution, found from the payment's trace (and it from this one).
      await linkActiveSpanToSagaOf(async () => (await deps.store.paymentById(won.resourceId))?.traceparent, {
        'wallet.collect_key_payment_id': won.resourceId,
        'wallet.exception_id': won.id,
      });
      if (won.action === 'return') {
        const p = await deps.store.paymentById(won.resourceId);
        if (!p) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its payment' });
        let next = p;
        if (p.status === 'CREDIT_REFUSED') {
          // Held first (breb_settlement −G; unassigned_funds +G, no fee), under the payment's own ledger key (the refused credit never posted).
          next =
            (await this.saga.apply(p, 'hold_refused', 'operator', `exception ${won.id} returned: ${note}`, { fee: ZERO_FEE, netAmount: p.amount })) ??
            (await this.saga.reload(p));
        }
        const held = await this.saga.settle(next, 'operator');
        if (held.status !== 'UNASSIGNED' && held.status !== 'RETURNING' && held.status !== 'RETURNED') {
          throw new AppError('SERVICE_UNAVAILABLE', 'El libro contable no completó el asiento; intente de nuevo la misma acción.');
        }
        await this.returns.execute(undefined, { depositId: p.depositId, note, by: input.resolvedBy });
        return;
      }
      if (won.action !== 'retry') return;
      const p = await deps.store.paymentById(won.resourceId);
      if (!p) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'exception without its payment' });
      let next = p;
      if (p.status === 'CREDIT_REFUSED') {
        next = (await this.saga.apply(p, 'retry_credit', 'operator', `exception ${won.id} retried: ${note}`)) ?? (await this.saga.reload(p));
      }
      const after = await this.saga.settle(next, 'operator');
      if (MONEY_STATES[after.status] || after.status === 'CREDIT_REFUSED') {
        // The ledger still refuses or is unreachable: the exception stays RESOLVING; the same action again resumes it.
        throw new AppError('SERVICE_UNAVAILABLE', 'El libro contable no completó el asiento; intente de nuevo la misma acción.');
      }
    });
    deps.log.warn(
      { exceptionId: done.id, kind: done.kind, action: input.action, resolvedBy: input.resolvedBy, depositId: done.resourceId },
      'money exception resolved',
    );
    return done;
  }
}
