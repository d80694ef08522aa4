import { PeriodicTask } from '@wallet/platform';
import type { DepositDeps } from './deps.js';
import type { DepositSteps } from './deposit-steps.js';
import { depositEvent } from './events.js';

/**
 * Every interval: PENDING_CONFIRM links past expires_at (+ the paid grace, so an in-time payment
 * whose callback is a little late is still credited) → EXPIRED + deposit.expired, batched with
 * `FOR UPDATE SKIP LOCKED` so replicas never take the same rows; and money steps left unfinished
 * (a crash between recording a PAID/REVERSED outcome and the ledger call) are leased and finished.
 */
export class Sweeper {
  private readonly task: PeriodicTask;

  constructor(private readonly deps: DepositDeps, private readonly steps: DepositSteps, private readonly opts: { intervalMs: number; batch: number }) {
    this.task = new PeriodicTask('pse-deposit sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }

  async tick(): Promise<void> {
    const deps = this.deps;
    try {
      const expired = await deps.store.expireDue(deps.settings.paidGraceSeconds, this.opts.batch, (d) => depositEvent(deps, 'expired', d));
      if (expired.length > 0) deps.log.info({ count: expired.length }, 'PSE links expired');
      if (this.task.stopping) return;
      const stale = await deps.store.leaseStaleSteps(deps.settings.sweeperGraceSeconds, this.opts.batch);
      for (const d of stale) {
        if (this.task.stopping) return;
        try {
          await this.steps.resume(d);
          deps.log.info({ depositId: d.id, step: d.pendingStep }, 'unfinished deposit step completed');
        } catch (err) {
          deps.log.warn({ depositId: d.id, step: d.pendingStep, err: (err as Error).message }, 'deposit step retry failed');
        }
      }
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'sweeper tick failed');
    }
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}
