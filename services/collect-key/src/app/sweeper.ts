import { inSagaSpan, PeriodicTask, type ReturnSaga } from '@wallet/platform';
import type { CollectKeyDeps } from './deps.js';
import type { PaymentSaga } from './payment-saga.js';
import type { SettleRegistration } from './settle-registration.js';

/**
 * Every interval, two kinds of unfinished work older than the grace, each leased
 * (`FOR UPDATE SKIP LOCKED`, its timestamp moved ahead) and finished:
 * - REGISTERING keys (a crash, a time-out or an outage between storing the row and the directory's
 *   answer): the registration is asked again (idempotent) and settled by compare-and-set —
 *   ACTIVE when the value is registered to us, FAILED when the directory refuses it, unchanged
 *   while it cannot answer (asked again next time).
 * - payments in a money state (CREDITING / HOLDING) whose step has been in flight (a crash or a
 *   ledger outage between recording the payment and the posting): PaymentSaga.settle runs it again
 *   (the ledger key makes a repeat a replay) and closes it; a parked one (an operator's) is never leased.
 * - returns (docs/returns.md) with a money step in flight: ReturnSaga.settle runs it again.
 */
export class Sweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: CollectKeyDeps,
    private readonly saga: PaymentSaga,
    private readonly returnSaga: ReturnSaga,
    private readonly registration: SettleRegistration,
    private readonly opts: { intervalMs: number; batch: number },
  ) {
    this.task = new PeriodicTask('collect-key sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }

  async tick(): Promise<void> {
    await this.registrations();
    await this.payments();
    await this.returns();
  }

  /** Returns with a money step in flight (domain/return-machine.ts): ReturnSaga.settle runs it again (every step is idempotent). */
  private async returns(): Promise<void> {
    const deps = this.deps;
    try {
      await this.returnSaga.sweep(
        deps.settings.sweeperGraceSeconds,
        this.opts.batch,
        () => this.task.stopping,
        (r, settle) =>
          inSagaSpan(
            `collectkey.sweep return ${r.status}`,
            { traceparent: r.traceparent, attributes: { 'wallet.deposit_return_id': r.id, 'wallet.deposit_return_state': r.status } },
            settle,
          ),
      );
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'sweeper tick failed (returns)');
    }
  }

  private async registrations(): Promise<void> {
    const deps = this.deps;
    try {
      const stale = await deps.store.leaseStaleRegistrations(deps.settings.sweeperGraceSeconds, this.opts.batch);
      for (const k of stale) {
        if (this.task.stopping) return;
        try {
          const s = await this.registration.execute(k);
          if (s.key.state === 'REGISTERING') deps.log.warn({ keyId: k.id }, 'collect key registration still unconfirmed: the directory did not answer');
          else deps.log.info({ keyId: k.id, state: s.key.state, outcome: s.outcome }, 'unfinished collect key registration settled');
        } catch (err) {
          deps.log.warn({ keyId: k.id, err: (err as Error).message }, 'collect key registration retry failed');
        }
      }
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'sweeper tick failed (registrations)');
    }
  }

  private async payments(): Promise<void> {
    const deps = this.deps;
    try {
      const stale = await deps.store.leaseStalePayments(deps.settings.sweeperGraceSeconds, this.opts.batch);
      for (const p of stale) {
        if (this.task.stopping) return;
        try {
          const attributes = { 'wallet.collect_key_payment_id': p.depositId, 'wallet.collect_key_payment_state': p.status };
          const after = await inSagaSpan(`collectkey.sweep ${p.status}`, { traceparent: p.traceparent, attributes }, () => this.saga.settle(p, 'sweeper'));
          deps.log.info({ depositId: p.depositId, from: p.status, to: after.status }, 'unfinished payment step completed');
        } catch (err) {
          deps.log.warn({ depositId: p.depositId, err: (err as Error).message }, 'payment step retry failed');
        }
      }
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'sweeper tick failed (payments)');
    }
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}
