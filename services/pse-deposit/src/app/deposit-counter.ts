import { PeriodicTask, type Logger } from '@wallet/platform';

export interface DepositCountPort {
  /** Folds up to `batch` deltas into the counts; how many it folded. */
  fold(batch?: number): Promise<number>;
  /** Counts the history of the next companies; `done` once every company's is counted; `locked` false: another replica's step runs. */
  backfill(batch?: number): Promise<{ locked: boolean; companies: number; done: boolean }>;
}

export interface CounterRun {
  folded: number;
  /** Companies whose history was counted by this run. */
  companies: number;
  /** The history is counted: totals are read from the counts. */
  done: boolean;
}

/**
 * Keeps the deposit counts (docs/deposit-counts.md) beside the writes, never in them: every
 * `intervalMs`, folds the trigger's deltas into the counts (so a total reads a few rows), and, until it is
 * done, counts the history of the next companies written before the counts existed. Replicas may run it
 * at once (the store makes both steps safe to repeat and to race).
 */
export class DepositCounter {
  private readonly task: PeriodicTask;
  private done = false;

  constructor(
    private readonly store: DepositCountPort,
    private readonly o: { intervalMs: number; foldBatch?: number; backfillBatch?: number },
    private readonly log: Logger,
  ) {
    this.task = new PeriodicTask('deposit counter', o.intervalMs, () => this.run(), log);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Folds every delta there is (a batch at a time), then counts the history while any is left. */
  async run(): Promise<CounterRun> {
    const started = Date.now();
    const out: CounterRun = { folded: 0, companies: 0, done: this.done };
    const foldBatch = this.o.foldBatch ?? 10_000;
    for (;;) {
      const n = await this.store.fold(foldBatch);
      out.folded += n;
      if (n < foldBatch || this.task.stopping) break;
    }
    while (!this.done && !this.task.stopping) {
      const step = await this.store.backfill(this.o.backfillBatch);
      out.companies += step.companies;
      if (!step.locked) break; // another replica is counting: its run goes on, this one looks again next time
      if (step.done) {
        this.done = out.done = true;
        this.log.info({ companies: out.companies, ms: Date.now() - started }, 'deposit counts: the history is counted; totals read the counts');
      }
    }
    return out;
  }
}
