import { inSagaSpan, PeriodicTask, type ReturnSaga } from '@wallet/platform';
import type { DepositDeps } from './deps.js';
import type { DepositSaga } from './deposit-saga.js';

/**
 * Every interval, through the saga's table like every other writer: PENDING_CONFIRM links whose
 * expiresAt has passed → `expire` (EXPIRED + deposit.expired; a compare-and-set, so of two replicas,
 * or a replica and a callback, exactly one expires a link); then money steps left unfinished in
 * CREDITING / REVERSING longer than SWEEPER_GRACE_SECONDS (the owner crashed or the ledger failed)
 * are leased (`FOR UPDATE SKIP LOCKED`, step_at moved ahead) and settled. The grace only decides
 * when the sweeper looks; the compare-and-sets decide who wins.
 */
export class Sweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: DepositDeps,
    private readonly saga: DepositSaga,
    private readonly opts: { intervalMs: number; batch: number },
    /** Refunds with a money step in flight (docs/returns.md): settled again after the grace. */
    private readonly returns?: ReturnSaga,
  ) {
    this.task = new PeriodicTask('pse-deposit sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }

  async tick(): Promise<void> {
    const deps = this.deps;
    try {
      const due = await deps.store.dueForExpiry(deps.now(), this.opts.batch);
      let expired = 0;
      for (const d of due) {
        if (this.task.stopping) return;
        const attributes = { 'wallet.deposit_id': d.id, 'wallet.deposit_state': d.status };
        if (
          await inSagaSpan('deposit.sweep expire', { traceparent: d.traceparent, attributes }, () =>
            this.saga.apply(d, 'expire', 'sweeper', { reason: 'link expired unpaid' }),
          )
        )
          expired++;
      }
      if (expired > 0) deps.log.info({ count: expired }, 'PSE links expired');
      if (this.task.stopping) return;
      const stale = await deps.store.leaseStaleSteps(deps.settings.sweeperGraceSeconds, this.opts.batch);
      for (const d of stale) {
        if (this.task.stopping) return;
        try {
          const attributes = { 'wallet.deposit_id': d.id, 'wallet.deposit_state': d.status };
          const done = await inSagaSpan(`deposit.sweep ${d.status}`, { traceparent: d.traceparent, attributes }, () => this.saga.settle(d, 'sweeper'));
          deps.log.info({ depositId: d.id, from: d.status, to: done.status }, 'unfinished deposit step settled');
        } catch (err) {
          deps.log.warn({ depositId: d.id, state: d.status, err: (err as Error).message }, 'deposit step retry failed');
        }
      }
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'sweeper tick failed');
    }
    if (!this.returns || this.task.stopping) return;
    try {
      await this.returns.sweep(
        deps.settings.sweeperGraceSeconds,
        this.opts.batch,
        () => this.task.stopping,
        (r, settle) =>
          inSagaSpan(
            `deposit.sweep return ${r.status}`,
            { traceparent: r.traceparent, attributes: { 'wallet.deposit_return_id': r.id, 'wallet.deposit_return_state': r.status } },
            settle,
          ),
      );
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'sweeper tick failed (returns)');
    }
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}
