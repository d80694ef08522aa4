import { randomBytes } from 'node:crypto';
import { AppError } from '@wallet/platform';
import { depositEventsV1, type depositV1 } from '@wallet/proto';
import {
  MAX_RETURNS_PER_PAYMENT,
  RETURN_MACHINE,
  RETURN_MONEY,
  RETURN_REASONS,
  publicReturnStatus,
  type ReturnActor,
  type ReturnEvent,
  type ReturnReason,
} from '../domain/return-machine.js';
import { creditLedgerKey } from '../domain/incoming-payment.js';
import type { CollectKeyDeps } from './deps.js';
import type { OutboxEvent } from './ports.js';
import type { ReturnPatch, ReturnRecord } from './return-ports.js';

/** Ledger answers that are a definite "no" to a return's hold (anything else may be transient: retried). */
const RESERVE_REFUSALS = [
  'INSUFFICIENT_BALANCE',
  'RETURN_EXCEEDS_PAYMENT',
  'INVALID_STATE_TRANSITION',
  'TRANSACTION_NOT_FOUND',
  'WALLET_NOT_PROVISIONED',
  'FAST_WALLET_MISSING',
  'REFERENCE_CONFLICT',
  'INVALID_REQUEST',
  'AMOUNT_EXCEEDS_BREB_CAP',
];
const isRefusal = (err: unknown, codes: readonly string[]): err is AppError => err instanceof AppError && codes.includes(err.code);
/** A hold that is gone or closed: the commit or release can never apply (a contradiction, for an operator). */
const CLOSE_REFUSALS = ['HOLD_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'REFERENCE_CONFLICT', 'INVALID_REQUEST'];

export const newReturnId = (): string => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(24);
  return `ret_${Array.from(bytes, (b) => alphabet[b % 36]).join('')}`;
};

/** The return as the API and the events show it. */
export function returnToProto(r: ReturnRecord): depositV1.DepositReturn {
  return {
    id: r.id,
    depositId: r.depositId,
    rail: 'BREB',
    amountCents: r.amount,
    reason: r.reason,
    ...(r.description ? { description: r.description } : {}),
    status: publicReturnStatus(r.status),
    ...(r.failureCode ? { failureCode: r.failureCode } : {}),
    ...(r.failureMessage ? { failureMessage: r.failureMessage } : {}),
    transactionId: r.movementId,
    createdAt: r.createdAt,
    ...(r.returnedAt ? { returnedAt: r.returnedAt } : {}),
    depositAmountCents: r.depositAmount,
    returnedAmountCents: r.returnedAmount,
  };
}

/** `deposit.returned` / `deposit.return_failed` on stream DEPOSITS: a DepositReturnEvent. */
function returnEvent(deps: CollectKeyDeps, kind: 'returned' | 'return_failed', r: ReturnRecord): OutboxEvent {
  const id = deps.newId();
  const payload = depositEventsV1.DepositReturnEvent.toJSON({ eventId: id, companyId: r.companyId, depositReturn: returnToProto(r), occurredAt: deps.now() });
  return { id, subject: `deposit.${kind}`, payload };
}

/**
 * The return saga's one writer (domain/return-machine.ts). `apply` runs an event of the table as a
 * compare-and-set; `settle` runs the money step the return's state owes, then the event that closes
 * it, until the return is final or a step cannot finish now (the ledger or the network did not
 * answer: thrown, and the sweeper runs it again after its grace). Every step is safe to run twice
 * and concurrently: the ledger calls carry `collectkey:return:<id>:reserve|commit|release`, the
 * network's return is idempotent by the return's id, and the closing events are compare-and-sets.
 */
export class ReturnSaga {
  constructor(private readonly deps: CollectKeyDeps) {}

  async apply(r: ReturnRecord, event: ReturnEvent, actor: ReturnActor, reason?: string, patch?: ReturnPatch): Promise<ReturnRecord | undefined> {
    const spec = RETURN_MACHINE[event];
    if (!spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event}`);
    if (!spec.from.includes(r.status)) return undefined;
    const emits = spec.emits;
    return this.deps.returns.transition({
      id: r.id,
      from: spec.from,
      to: spec.to,
      reason: reason ?? `${event} (${actor})`,
      ...(patch ? { patch } : {}),
      ...(emits ? { event: (x: ReturnRecord) => returnEvent(this.deps, emits, x) } : {}),
    });
  }

  async settle(start: ReturnRecord, actor: ReturnActor): Promise<ReturnRecord> {
    let r = start;
    for (let round = 0; round < 8; round++) {
      if (r.parked || !(r.status in RETURN_MONEY)) return r;
      const step = RETURN_MONEY[r.status as keyof typeof RETURN_MONEY];
      const next = await this.step(r, step, actor);
      if (next === 'parked') return this.reload(r);
      // Lost the race (another writer moved it): continue from where it is now.
      r = next ?? (await this.reload(r));
    }
    return r;
  }

  private async step(r: ReturnRecord, step: 'reserve' | 'send' | 'release', actor: ReturnActor): Promise<ReturnRecord | undefined | 'parked'> {
    const { deps } = this;
    if (step === 'reserve') {
      let holdId: string;
      try {
        holdId = await deps.ledger.reserveReturn(r);
      } catch (err) {
        if (!isRefusal(err, RESERVE_REFUSALS)) throw err;
        deps.log.info({ returnId: r.id, depositId: r.depositId, code: err.code }, 'return refused by the ledger: nothing moved');
        return this.apply(r, 'reserve_refused', actor, `the ledger refused the hold: ${err.code}`, { failureCode: err.code, failureMessage: err.message });
      }
      return this.apply(r, 'reserved', actor, undefined, { holdId });
    }
    if (step === 'send') {
      const n = await deps.directory.returnPayment({ returnId: r.id, providerTransferId: r.providerTransferId, amountCents: r.amount });
      if (n.outcome === 'UNAVAILABLE') throw new AppError('SERVICE_UNAVAILABLE', 'La red Bre-B no respondió la devolución; se completará sola.');
      if (n.outcome === 'REFUSED') {
        deps.log.warn({ returnId: r.id, depositId: r.depositId, code: n.code }, 'return refused by the Bre-B network: the hold is released');
        return this.apply(r, 'send_refused', actor, `the network refused the return: ${n.code ?? 'refused'}`, {
          failureCode: n.code ?? 'RETURN_REFUSED',
          failureMessage: 'La red Bre-B rechazó la devolución; el dinero sigue en la billetera.',
        });
      }
      if (!(await this.close(r, () => deps.ledger.commitReturn(r)))) return 'parked';
      return this.apply(r, 'returned', actor, undefined, { returnedAt: n.returnedAt ?? deps.now() });
    }
    if (!(await this.close(r, () => deps.ledger.releaseReturn(r, r.failureMessage ?? 'Devolución rechazada por la red')))) return 'parked';
    return this.apply(r, 'released', actor);
  }

  /**
   * The commit or release of the return's hold. A definite refusal (the hold gone or closed the
   * other way) contradicts what the table allows: the return is parked for an operator, with an error
   * log; false. Anything else that fails is thrown (retried).
   */
  private async close(r: ReturnRecord, call: () => Promise<void>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (err) {
      if (!isRefusal(err, CLOSE_REFUSALS)) throw err;
      await this.deps.returns.park(r.id);
      this.deps.log.error(
        { returnId: r.id, depositId: r.depositId, companyId: r.companyId, state: r.status, code: err.code },
        "money contradiction: the ledger refused to close a return's hold; parked for an operator",
      );
      return false;
    }
  }

  async reload(r: ReturnRecord): Promise<ReturnRecord> {
    return (await this.deps.returns.byId(r.id)) ?? r;
  }
}

export interface CreateReturnInput {
  depositId: string;
  amountCents?: bigint | undefined;
  reason: string;
  description?: string | undefined;
  requestedBy: string;
}

/**
 * `POST /deposits/{id}/returns` for a credited Bre-B payment: the return is recorded (its amount
 * checked against the payment's gross under the payment's lock), then its saga runs in this call as
 * far as it can. The answer: the return PENDING (the network has not answered yet: it finishes on
 * its own, with `deposit.returned`) or RETURNED, or FAILED when the network refused it; a hold the
 * ledger refuses (the wallet cannot cover it) is answered with the ledger's error, the return FAILED.
 */
export class CreateDepositReturn {
  constructor(
    private readonly deps: CollectKeyDeps,
    private readonly saga: ReturnSaga,
  ) {}

  async execute(companyId: string | undefined, input: CreateReturnInput): Promise<ReturnRecord> {
    const { deps } = this;
    if (!/^dep_[a-z0-9]{24}$/.test(input.depositId ?? '')) throw new AppError('DEPOSIT_NOT_FOUND');
    const problems: Array<{ path: string; message: string }> = [];
    if (!(RETURN_REASONS as readonly string[]).includes(input.reason))
      problems.push({ path: 'reason', message: `Debe ser uno de ${RETURN_REASONS.join(', ')}.` });
    if (input.amountCents !== undefined && input.amountCents <= 0n) problems.push({ path: 'amountCents', message: 'Debe ser mayor que cero.' });
    if (input.description !== undefined && input.description.length > 140) problems.push({ path: 'description', message: 'Máximo 140 caracteres.' });
    if (problems.length > 0) throw new AppError('INVALID_REQUEST', undefined, { fields: problems });
    const payment = await deps.store.paymentById(input.depositId);
    // Another company's payment reads as not found; an operator (no company) may return any.
    if (!payment || (companyId && payment.companyId !== companyId)) throw new AppError('DEPOSIT_NOT_FOUND');
    const out = await deps.returns.insert({
      id: newReturnId(),
      depositId: payment.depositId,
      companyId: payment.companyId,
      ...(input.amountCents !== undefined ? { amount: input.amountCents } : {}),
      reason: input.reason as ReturnReason,
      description: input.description?.trim() || null,
      movementId: deps.newId(),
      requestedBy: input.requestedBy || (companyId ? 'company' : 'operator'),
      inflowKey: (viaAssignment) => creditLedgerKey(payment.providerTransferId, viaAssignment),
    });
    if ('refused' in out) {
      switch (out.refused) {
        case 'NOT_FOUND':
          throw new AppError('DEPOSIT_NOT_FOUND');
        case 'NOT_ASSIGNED':
          throw new AppError(
            'INVALID_STATE_TRANSITION',
            out.status === 'UNASSIGNED'
              ? 'El pago no está acreditado a la billetera (UNASSIGNED); devuélvalo completo con POST /deposits/{id}/return.'
              : `Solo un pago acreditado (ASSIGNED) puede devolverse; este está en ${out.status}.`,
          );
        case 'TOO_MANY':
          throw new AppError('INVALID_STATE_TRANSITION', `Un pago admite hasta ${MAX_RETURNS_PER_PAYMENT} devoluciones.`);
        case 'EXCEEDS':
          throw new AppError('RETURN_EXCEEDS_PAYMENT', undefined, {
            grossCents: out.gross.toString(),
            returnedCents: out.returned.toString(),
            returnableCents: (out.gross - out.returned).toString(),
          });
      }
    }
    deps.log.info(
      { returnId: out.id, depositId: out.depositId, companyId: out.companyId, amount: out.amount.toString(), reason: out.reason },
      'return requested',
    );
    let after: ReturnRecord;
    try {
      after = await this.saga.settle(out, companyId ? 'company' : 'operator');
    } catch (err) {
      // The ledger or the network did not answer: the return stays PENDING and the sweeper finishes it.
      deps.log.warn({ returnId: out.id, err: (err as Error).message }, 'return left for the sweeper');
      return this.saga.reload(out);
    }
    if (after.status === 'FAILED' && after.holdId === null && after.failureCode) {
      // The ledger refused the hold: nothing moved; the caller is told why (the return is kept, FAILED).
      const code = after.failureCode as ConstructorParameters<typeof AppError>[0];
      throw new AppError(code, after.failureMessage ?? undefined, { returnId: after.id });
    }
    return after;
  }
}

/** The returns of one payment (another company's payment reads as not found). */
export class ListDepositReturns {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyId: string | undefined, depositId: string): Promise<ReturnRecord[]> {
    if (!/^dep_[a-z0-9]{24}$/.test(depositId ?? '')) throw new AppError('DEPOSIT_NOT_FOUND');
    const payment = await this.deps.store.paymentById(depositId);
    if (!payment || (companyId && payment.companyId !== companyId)) throw new AppError('DEPOSIT_NOT_FOUND');
    return this.deps.returns.byDeposit(depositId);
  }
}
