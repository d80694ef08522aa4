import { runKey, type Database, type Logger } from '@wallet/platform';
import { randomUUID } from 'node:crypto';
import { ScheduleStore, type RunClaim, type RunRow } from '../../persistence/schedule.store.js';
import { nextAfter } from './schedule-rules.js';
import type { SchedulerClock } from './clock.js';
import type { RunExecutor } from './run-executor.js';

const store = new ScheduleStore();

export interface SchedulerSettings {
  batch: number;
  concurrency: number;
  runLeaseSeconds: number;
}

/**
 * Starts the runs that are due (docs/schedules.md), on every replica at once:
 *
 * 1. **Claim**: in one transaction, due ACTIVE schedules are locked with `for update skip locked`
 *    (another replica takes others), each one's run is recorded (unique per schedule and nominal
 *    time) and the schedule moves on to its next run. A run is therefore claimed once; runs missed
 *    while no replica ran are each claimed once, in order, one per look (the next look takes the
 *    next, still due).
 * 2. **Make**: each claimed run, leased for `runLeaseSeconds`, asks its send or move under its key
 *    (RunExecutor). A run whose replica died before it ended is taken again once its lease ran out;
 *    the key makes the second asking answer what the first made.
 */
export class Scheduler {
  constructor(
    private readonly db: Database,
    private readonly executor: Pick<RunExecutor, 'execute'>,
    private readonly clock: SchedulerClock,
    private readonly settings: SchedulerSettings,
    private readonly log: Logger,
  ) {}

  /** One look: claims what is due (batch after batch while a batch came full) and makes the runs; then the runs whose lease ran out. */
  async tick(isStopping: () => boolean = () => false): Promise<{ claimed: number; made: number }> {
    let claimed = 0;
    let made = 0;
    for (;;) {
      if (isStopping()) break;
      const now = this.clock.now().toISOString();
      const ids = await this.claim(now);
      claimed += ids.length;
      if (ids.length > 0) {
        const runs = await store.leaseRuns(this.db, { ids, now, leaseSeconds: this.settings.runLeaseSeconds, limit: ids.length });
        made += await this.make(runs);
      }
      if (ids.length < this.settings.batch) break;
    }
    if (!isStopping()) {
      const now = this.clock.now().toISOString();
      const stale = await store.leaseRuns(this.db, { now, leaseSeconds: this.settings.runLeaseSeconds, limit: this.settings.batch });
      if (stale.length > 0) this.log.info({ runs: stale.length }, 'schedule runs whose lease ran out are tried again under their keys');
      made += await this.make(stale);
    }
    return { claimed, made };
  }

  /** Claims due runs: records them and moves their schedules on, in one transaction; answers the recorded runs' ids. */
  async claim(now: string): Promise<string[]> {
    return this.db.tx(async (tx) => {
      const due = await store.lockDue(tx, now, this.settings.batch);
      const claims: RunClaim[] = [];
      for (const s of due) {
        const run = s.next!;
        claims.push({
          run: {
            id: randomUUID(),
            scheduleId: s.id,
            companyId: s.companyId,
            seq: run.seq,
            nominalAt: run.nominalAt,
            nominalLocal: run.nominalLocal,
            dueAt: run.dueAt,
            runKey: runKey(s.id, run),
            action: s.action,
          },
          next: nextAfter(s.rule, { seq: run.seq, nominalAt: run.nominalAt }),
        });
      }
      return store.recordClaims(tx, claims, now, this.settings.runLeaseSeconds);
    });
  }

  private async make(runs: readonly RunRow[]): Promise<number> {
    let i = 0;
    let made = 0;
    const worker = async () => {
      while (i < runs.length) {
        const run = runs[i++]!;
        try {
          await this.executor.execute(run);
          made++;
        } catch (err) {
          // Left STARTING: the lease runs out and a replica tries again under the same key.
          this.log.warn({ err: (err as Error).message, runId: run.id }, 'schedule run could not be ended; it will be tried again');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.settings.concurrency, runs.length) }, worker));
    return made;
  }
}
