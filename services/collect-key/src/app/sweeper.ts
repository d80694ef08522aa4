import { PeriodicTask } from '@wallet/platform';
import type { CollectKeyDeps } from './deps.js';
import type { PaymentSteps } from './incoming-payment.js';

/**
 * Every interval: payments whose ledger step has been in flight longer than the grace (a crash or a
 * ledger outage between recording the intent and the posting) are leased (`FOR UPDATE SKIP LOCKED`,
 * step_at moved ahead) and finished. The ledger key makes a repeat a replay.
 */
export class Sweeper {
  private readonly task: PeriodicTask;

  constructor(private readonly deps: CollectKeyDeps, private readonly steps: PaymentSteps, private readonly opts: { intervalMs: number; batch: number }) {
    this.task = new PeriodicTask('collect-key sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }

  async tick(): Promise<void> {
    const deps = this.deps;
    try {
      const stale = await deps.store.leaseStalePayments(deps.settings.sweeperGraceSeconds, this.opts.batch);
      for (const p of stale) {
        if (this.task.stopping) return;
        try {
          await this.steps.finish(p);
          deps.log.info({ depositId: p.depositId, step: p.pendingStep }, 'unfinished payment step completed');
        } catch (err) {
          deps.log.warn({ depositId: p.depositId, err: (err as Error).message }, 'payment step retry failed');
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
