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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: DepositDeps, private readonly steps: DepositSteps, private readonly opts: { intervalMs: number; batch: number }) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => { if (!this.running) this.running = this.tick().finally(() => { this.running = undefined; }); }, this.opts.intervalMs);
    this.timer.unref();
  }

  async tick(): Promise<void> {
    const deps = this.deps;
    try {
      const expired = await deps.store.expireDue(deps.settings.paidGraceSeconds, this.opts.batch, (d) => depositEvent(deps, 'expired', d));
      if (expired.length > 0) deps.log.info({ count: expired.length }, 'PSE links expired');
      if (this.stopped) return;
      const stale = await deps.store.leaseStaleSteps(deps.settings.sweeperGraceSeconds, this.opts.batch);
      for (const d of stale) {
        if (this.stopped) return;
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

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
