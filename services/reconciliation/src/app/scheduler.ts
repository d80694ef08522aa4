import type { Logger } from '@wallet/platform';
import { bogotaDate, type ReportRail } from '../domain/report.js';
import type { ReconcileDay, RunEnded } from './reconcile-day.js';

/** One replica owns a scheduled (rail, date), retries included (persistence `ScheduleClaims`). */
export interface ScheduleClaims {
  /** True when this replica now holds the day (new, or taken over from a holder that stopped beating). */
  claim(rail: ReportRail, date: string, holder: string): Promise<boolean>;
  beat(rail: ReportRail, date: string, holder: string): Promise<void>;
  done(rail: ReportRail, date: string, holder: string): Promise<void>;
}

/** A daily trigger (croner in production; tests fire by hand). */
export interface Trigger {
  stop(): void;
}
export type TriggerFactory = (rail: ReportRail, cron: string, timezone: string, fire: () => void) => Trigger;

export interface SchedulerOptions {
  /** The cron of each rail ("off": that rail is not scheduled). */
  schedules: Partial<Record<ReportRail, string>>;
  timezone: string;
  /** Attempts per scheduled day (the first included). */
  retryAttempts: number;
  /** The first retry's delay; each next one doubles it. */
  retryBaseMs: number;
  /** This replica's name in the claims. */
  holder: string;
}

export interface SchedulerDeps {
  day: ReconcileDay;
  claims: ScheduleClaims;
  triggers: TriggerFactory;
  log: Logger;
  now?: () => Date;
  /** Waits `ms` (aborted by stop). Injected by tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const RETRIED = new Set(['ReportNotAvailableError', 'ReportFetchError']);

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** The day before `now`'s Bogotá date. */
export function previousBogotaDay(now: Date): string {
  const today = bogotaDate(now);
  const t = new Date(`${today}T00:00:00.000Z`);
  t.setUTCDate(t.getUTCDate() - 1);
  return t.toISOString().slice(0, 10);
}

/**
 * Reconciles, for each scheduled rail, the previous Bogotá day at its cron (in RECON_TIMEZONE).
 * One replica runs a scheduled day (a claim in `reconciliation.schedule_claims`, and at most one
 * RUNNING run per (rail, date) whatever the trigger). A run that FAILED because the report is not
 * published yet or could not be fetched is tried again after `retryBaseMs`, doubling, up to
 * `retryAttempts` in all. Runs have trigger SCHEDULE, requested_by "scheduler".
 */
export class Scheduler {
  private readonly triggers: Trigger[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly opts: SchedulerOptions,
  ) {}

  start(): void {
    for (const [rail, cron] of Object.entries(this.opts.schedules) as Array<[ReportRail, string]>) {
      if (!cron || cron === 'off') continue;
      this.triggers.push(
        this.deps.triggers(rail, cron, this.opts.timezone, () => {
          void this.fire(rail);
        }),
      );
    }
  }

  /** The cron fired for `rail`: the previous Bogotá day, with its retries. Resolves with the last run (undefined: another replica has the day). */
  fire(rail: ReportRail, at?: Date): Promise<RunEnded | undefined> {
    const date = previousBogotaDay(at ?? this.deps.now?.() ?? new Date());
    const p = this.runDay(rail, date);
    const tracked = p.catch((err) => {
      this.deps.log.error({ err, rail, date }, 'scheduled reconciliation failed');
    });
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return p;
  }

  private async runDay(rail: ReportRail, date: string): Promise<RunEnded | undefined> {
    const { claims, day, log } = this.deps;
    const { holder } = this.opts;
    if (!(await claims.claim(rail, date, holder))) {
      log.info({ rail, date }, 'scheduled reconciliation: another replica has this day');
      return undefined;
    }
    const sleep = this.deps.sleep ?? defaultSleep;
    let last: RunEnded | undefined;
    try {
      for (let attempt = 1; attempt <= this.opts.retryAttempts; attempt++) {
        if (this.abort.signal.aborted) break;
        const started = await day.begin(rail, date, 'SCHEDULE', 'scheduler');
        if (started.alreadyRunning) {
          log.info({ rail, date, runId: started.run.id }, 'scheduled reconciliation: a run of this day is already under way');
          return { run: started.run };
        }
        last = await day.execute(started.run, this.abort.signal);
        if (last.run.status !== 'FAILED' || !last.error || !RETRIED.has(last.error.name)) break;
        if (attempt === this.opts.retryAttempts) {
          log.error({ rail, date, runId: last.run.id, attempts: attempt, detail: last.run.detail }, 'scheduled reconciliation gave up');
          break;
        }
        const delay = this.opts.retryBaseMs * 2 ** (attempt - 1);
        log.warn({ rail, date, runId: last.run.id, attempt, retryInMs: delay, detail: last.run.detail }, 'scheduled reconciliation will retry');
        await claims.beat(rail, date, holder);
        await sleep(delay, this.abort.signal);
      }
    } finally {
      if (!this.abort.signal.aborted) await claims.done(rail, date, holder);
    }
    return last;
  }

  async stop(): Promise<void> {
    for (const t of this.triggers) t.stop();
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }
}
