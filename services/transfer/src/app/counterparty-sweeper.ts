import { PeriodicTask } from '@wallet/platform';
import type { CounterpartyDeps, CounterpartyVerifier } from './counterparty-verifier.js';

/**
 * Finishes counterparty verifications whose step did not: a prenote never submitted (the rail was
 * down, or the process stopped after committing the attempt: submitted again, the rail is idempotent
 * on the prenote id), a prenote submitted with no callback for COUNTERPARTY_PRENOTE_CHECK_SECONDS
 * (asked about at the rail, a settled answer applied), a Bre-B lookup the directory could not answer.
 * Each tick leases the due PENDING counterparties (FOR UPDATE SKIP LOCKED, moved ahead by a lease),
 * so replicas never work on the same one at once.
 */
export class CounterpartySweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: CounterpartyDeps,
    private readonly verifier: CounterpartyVerifier,
    private readonly opts: { intervalMs: number; batch: number; leaseMs?: number },
  ) {
    this.task = new PeriodicTask('counterparty sweeper', opts.intervalMs, () => this.tick(), deps.log);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  async tick(): Promise<number> {
    const { deps } = this;
    const due = await deps.counterparties.leaseDue(this.opts.batch, this.opts.leaseMs ?? 30_000);
    await Promise.all(
      due.map((c) =>
        this.verifier.run(c, 'sweeper').catch(async (err: unknown) => {
          deps.log.warn({ counterpartyId: c.id, err: (err as Error).message }, 'counterparty sweeper could not resume a verification; will retry');
          await deps.counterparties.reschedule(c.id, c.verificationId, deps.counterpartySettings.retryMs).catch(() => undefined);
        }),
      ),
    );
    return due.length;
  }
}
