import { inSagaSpan, PeriodicTask } from '@wallet/platform';
import type { BatchRunner } from './batch-runner.js';
import type { BatchDeps } from './deps.js';

/**
 * Resumes batches between steps (a crash, a ledger outage) and closes finished ones: leases due
 * batches (FOR UPDATE SKIP LOCKED, moved ahead by a lease), so replicas never work on the same one.
 */
export class BatchSweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: BatchDeps,
    private readonly runner: BatchRunner,
    private readonly opts: { intervalMs: number; batch: number; leaseMs?: number; fundingLeaseMs?: number },
  ) {
    this.task = new PeriodicTask('batch sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }
  stop(): Promise<void> {
    return this.task.stop();
  }

  async tick(): Promise<number> {
    // A FUNDING batch's lease outlasts a funding attempt (ReserveBatch's deadline is 60 s): two
    // replicas never fund one batch at once. Any other look (dispatch pages, close, settle an
    // approval) is idempotent and its items carry leases of their own, so its lease is as short as
    // the transfer sweeper's: a replica killed mid-look delays the batch 30 s, not 2 minutes.
    const due = await this.deps.batches.leaseDue(this.opts.batch, this.opts.leaseMs ?? 30_000, this.opts.fundingLeaseMs ?? 120_000);
    await Promise.all(
      due.map((b) =>
        inSagaSpan(`batch.sweep ${b.state}`, { traceparent: b.traceparent, attributes: { 'wallet.batch_id': b.id, 'wallet.batch_state': b.state } }, () =>
          this.runner.resume(b),
        ).catch((err: unknown) => {
          this.deps.log.warn({ batchId: b.id, state: b.state, err: (err as Error).message }, 'batch sweeper could not resume a batch; will retry');
          return this.deps.batches.reschedule(b.id, b.state, 5_000).catch(() => undefined);
        }),
      ),
    );
    return due.length;
  }
}
