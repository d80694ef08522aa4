import { AppError } from '@wallet/platform';
import {
  DEPOSIT_MACHINE,
  MONEY_STATES,
  OUTCOME_TABLE,
  linkDue,
  outcomeOf,
  paidInTime,
  type Actor,
  type DepositEvent,
  type ExceptionKind,
  type PseState,
  type Verdict,
} from '../domain/deposit-machine.js';
import { publicStatus, type DepositRecord } from '../domain/deposit.js';
import type { DepositDeps } from './deps.js';
import { depositEvent } from './events.js';
import type { DepositPatch } from './ports.js';

export const MESSAGES = {
  failed: 'El pago fue rechazado',
  reversed: 'Pago reversado por el proveedor PSE',
};

/** A provider's outcome as received (callback), for the table and for a money exception's `theirs`. */
export interface ProviderOutcome {
  eventId: string;
  status: 'PAID' | 'FAILED' | 'REVERSED';
  providerTransferId: string | null;
  payerBank: string | null;
  /** PAID: the provider's signed payment time (or the callback's occurredAt). */
  paidAt: Date;
  errorMessage: string | null;
}

export type OutcomeResult =
  /** This outcome moved the deposit (false: a repeat, lost to another writer, or a contradiction). */
  | { kind: 'handled'; deposit: DepositRecord; applied: boolean }
  /** Not applicable yet: answer SERVICE_UNAVAILABLE, record nothing, the provider delivers it again. */
  | { kind: 'retry'; deposit: DepositRecord };

/** Ledger answers that are a definite "no" (anything else is retried: the ledger may be down or slow). */
const REFUSALS = [
  'WALLET_NOT_PROVISIONED',
  'FAST_WALLET_MISSING',
  'REFERENCE_CONFLICT',
  'INVALID_REQUEST',
  'FEE_EXCEEDS_AMOUNT',
  'TRANSACTION_NOT_FOUND',
  'INVALID_STATE_TRANSITION',
];
const refused = (err: unknown): err is AppError => err instanceof AppError && REFUSALS.includes(err.code);

/**
 * The PSE deposit saga's one writer. Every change of a PSE deposit's state goes through `apply`,
 * which looks the event up in `DEPOSIT_MACHINE`, checks its guard and runs its compare-and-set
 * (state + history + outbox event + callback id, one transaction); the money step a won transition
 * owes runs in `settle`, only after the win. Every step is safe to run twice and concurrently: the
 * ledger calls carry keys derived from the deposit id, and the closing events are compare-and-sets.
 */
export class DepositSaga {
  constructor(private readonly deps: DepositDeps) {}

  /**
   * Applies one event of the table to `d` (as read by the caller). Returns the deposit as the
   * transition left it, or undefined when the guard does not hold or the state was not one the event
   * leaves from (another writer won). Only a winner goes on to the money step.
   */
  async apply(
    d: DepositRecord,
    event: DepositEvent,
    actor: Actor,
    o: {
      patch?: DepositPatch;
      reason?: string;
      paidAt?: Date | null;
      callback?: { eventId: string; status: string };
    } = {},
  ): Promise<DepositRecord | undefined> {
    const { deps } = this;
    const spec = DEPOSIT_MACHINE[event];
    if (!spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event}`);
    if (!spec.from.includes(d.status as PseState)) return undefined;
    if (
      spec.guard &&
      !spec.guard.holds({
        state: d.status as PseState,
        expiresAt: d.expiresAt,
        now: deps.now(),
        paidAt: o.paidAt ?? null,
        paidGraceSeconds: deps.settings.paidGraceSeconds,
      })
    ) {
      return undefined;
    }
    const emits = spec.emits;
    return deps.store.transition({
      id: d.id,
      from: spec.from,
      to: spec.to,
      reason: o.reason ?? `${event} (${actor})`,
      ...(o.patch ? { patch: o.patch } : {}),
      ...(o.callback ? { callback: o.callback } : {}),
      ...(emits ? { event: (r: DepositRecord) => depositEvent(deps, emits, r) } : {}),
    });
  }

  /**
   * The money step a deposit in CREDITING or REVERSING owes, then the event that closes it. Only
   * the winner of the move into that state (or, after a crash, the sweeper; or an operator's retry)
   * gets here. Any other state: returned as it is. A ledger error that may be transient is thrown
   * (the caller answers an error; the sweeper runs the step again after its grace); a definite
   * refusal opens a money exception and parks the deposit for an operator.
   */
  async settle(d: DepositRecord, actor: Actor = 'sweeper'): Promise<DepositRecord> {
    const { deps } = this;
    const owed = MONEY_STATES[d.status as PseState];
    if (!owed) return d;
    try {
      if (owed.step === 'credit') await deps.ledger.recordPseInflow(d);
      else await deps.ledger.reversePseInflow(d, d.errorMessage ?? MESSAGES.reversed);
    } catch (err) {
      if (!refused(err)) throw err;
      await this.contradiction(d, owed.step === 'credit' ? 'CREDIT_REFUSED' : 'REVERSAL_REFUSED', { source: 'ledger', code: err.code, message: err.message });
      await deps.store.park(d.id, d.status);
      return this.reload(d);
    }
    const next = await this.apply(d, owed.closes[0]!, actor);
    return next ?? this.reload(d);
  }

  /** A PENDING_CONFIRM link past expiresAt is expired first by whoever finds it (what clients already see). */
  async refresh(d: DepositRecord, actor: Actor): Promise<DepositRecord> {
    if (d.status !== 'PENDING_CONFIRM' || !linkDue(d.expiresAt, this.deps.now())) return d;
    const expired = await this.apply(d, 'expire', actor, { reason: 'link expired unpaid' });
    if (expired) this.deps.log.info({ depositId: d.id, by: actor }, 'PSE link expired');
    return expired ?? this.reload(d);
  }

  /**
   * A provider's outcome (PAID / FAILED / REVERSED) through `OUTCOME_TABLE`: applied, a harmless
   * repeat, a contradiction (money exception), or "not yet". A lost compare-and-set is read again
   * and decided again in the state the winner left.
   */
  async providerOutcome(d0: DepositRecord, o: ProviderOutcome): Promise<OutcomeResult> {
    const { deps } = this;
    const callback = { eventId: o.eventId, status: o.status };
    let d = d0;
    for (let attempt = 0; ; attempt++) {
      d = await this.refresh(d, 'provider');
      const outcome = outcomeOf(o.status, d.expiresAt, o.paidAt, deps.settings.paidGraceSeconds);
      const verdict: Verdict = OUTCOME_TABLE[outcome][d.status as PseState];
      if ('apply' in verdict) {
        const won = await this.apply(d, verdict.apply, 'provider', { ...this.applyArgs(verdict.apply, o), callback });
        if (won) return { kind: 'handled', deposit: await this.settle(won, 'provider'), applied: true };
        if (attempt >= 3) throw new AppError('SERVICE_UNAVAILABLE'); // contended: the provider retries
        d = await this.reload(d);
        continue;
      }
      if ('retry' in verdict) {
        const pastWindow = d.expiresAt !== null && !paidInTime(d.expiresAt, deps.now(), deps.settings.paidGraceSeconds);
        if (verdict.thenException && pastWindow) await this.contradiction(d, verdict.thenException, this.theirs(o));
        deps.log.warn({ depositId: d.id, status: o.status, state: d.status, eventId: o.eventId }, 'provider outcome ahead of our state: asked to retry');
        return { kind: 'retry', deposit: d };
      }
      if ('exception' in verdict) {
        await this.contradiction(d, verdict.exception, this.theirs(o));
        await deps.store.recordCallback(o.eventId, d.id, o.status);
        // A money step in flight is finished whatever the provider says now: it was won first.
        return { kind: 'handled', deposit: await this.settle(d, 'provider'), applied: false };
      }
      await deps.store.recordCallback(o.eventId, d.id, o.status);
      return { kind: 'handled', deposit: await this.settle(d, 'provider'), applied: false };
    }
  }

  private applyArgs(event: DepositEvent, o: ProviderOutcome): { patch?: DepositPatch; reason: string; paidAt?: Date } {
    switch (event) {
      case 'paid':
        return {
          patch: { providerTransferId: o.providerTransferId, providerConfirmedAt: o.paidAt, payerBank: o.payerBank },
          paidAt: o.paidAt,
          reason: 'paid at the provider',
        };
      case 'failed':
        return { patch: { errorMessage: o.errorMessage ?? MESSAGES.failed, ...(o.payerBank ? { payerBank: o.payerBank } : {}) }, reason: 'payment failed' };
      case 'reversed':
        return { patch: { errorMessage: o.errorMessage ?? MESSAGES.reversed }, reason: 'reversed by the provider' };
      default:
        return { reason: event };
    }
  }

  private theirs(o: ProviderOutcome): Record<string, unknown> {
    return {
      source: 'callback',
      eventId: o.eventId,
      status: o.status,
      providerTransferId: o.providerTransferId,
      payerBank: o.payerBank,
      paidAt: o.paidAt.toISOString(),
      errorMessage: o.errorMessage,
    };
  }

  /**
   * A provider outcome or a ledger answer that contradicts our state: a money exception (one per
   * kind and deposit), an error log (the metric counts it at scrape time). Nothing moves here.
   */
  async contradiction(d: DepositRecord, kind: ExceptionKind, theirs: Record<string, unknown>): Promise<void> {
    const { deps } = this;
    const now = deps.now();
    const { opened, exception } = await deps.store.exceptions.open({
      id: deps.newExceptionId(),
      kind,
      companyId: d.companyId,
      rail: 'PSE',
      resourceId: d.id,
      ours: {
        state: d.status,
        status: publicStatus(d.status, d.expiresAt, now),
        amount: d.amount.toString(),
        netAmount: d.netAmount.toString(),
        expiresAt: d.expiresAt?.toISOString() ?? null,
        paidAt: d.providerConfirmedAt?.toISOString() ?? null,
        providerTransferId: d.providerTransferId,
        paidGraceSeconds: deps.settings.paidGraceSeconds,
      },
      theirs,
    });
    deps.log.error(
      { depositId: d.id, companyId: d.companyId, exceptionId: exception.id, kind, state: d.status, opened, theirs },
      'money exception: an outcome contradicts the PSE deposit',
    );
  }

  async reload(d: DepositRecord): Promise<DepositRecord> {
    return (await this.deps.store.getById(d.id)) ?? d;
  }
}
