import { PeriodicTask, processGauge, type Logger } from '@wallet/platform';
import type { CheckInvariants } from './check-invariants.js';

/**
 * The ledger's own watch over its journal (docs/ledger-check.md): every `intervalMs`, the invariants
 * checked on what was sealed since the verified cut, and the cut moved when they held (the first run,
 * with no cut yet, checks the whole journal). What moves the cut is only a check that found nothing;
 * a violation is logged with its offenders and shown as `wallet_ledger_self_check_violations`, and
 * the cut stays where the journal last held, so every later run reports it again until it is mended.
 * Two replicas: a run that raced another's recording fails harmlessly (the cut is updated only where
 * it is still what the run's snapshot saw) and the next run starts from the other's cut.
 *
 * The full check stays `npm run ledger:check` (the CronJob): the incremental one reads only what is
 * new, so damage to rows it does not reread (an old entry rewritten) is the full check's and the
 * journal's verification's to find.
 */
export class LedgerSelfCheck {
  private readonly task: PeriodicTask;
  private readonly violationsGauge = processGauge(
    'wallet_ledger_self_check_violations',
    "violations the ledger's last self-check found in its journal (0: the invariants held)",
  );
  private readonly cutGauge = processGauge(
    'wallet_ledger_verified_cut_timestamp_seconds',
    "when the ledger's self-check last found the journal whole and moved its verified cut",
  );

  constructor(
    private readonly check: CheckInvariants,
    o: { intervalMs: number },
    private readonly log: Logger,
  ) {
    this.task = new PeriodicTask('ledger self-check', o.intervalMs, () => this.run(), log);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** One check (incremental from the cut; full when there is none) that records the cut if it held. */
  async run(): Promise<{ ok: boolean; violations: number }> {
    const started = Date.now();
    const r = await this.check.execute({ mode: 'incremental', record: true });
    this.violationsGauge.set(r.violations.length);
    if (!r.ok) {
      this.log.error(
        { violations: r.violations.length, first: r.violations.slice(0, 5), since: r.since?.seq.toString() ?? null, mode: r.mode },
        'ledger self-check: the journal breaks its invariants; the verified cut stays where it last held',
      );
      return { ok: false, violations: r.violations.length };
    }
    if (r.cut) this.cutGauge.set(Date.parse(r.cut.verifiedAt) / 1000);
    this.log.info(
      { mode: r.mode, from: r.since?.seq.toString() ?? null, to: r.cut?.seq.toString() ?? r.since?.seq.toString() ?? null, ms: Date.now() - started },
      'ledger self-check: the journal holds',
    );
    return { ok: true, violations: 0 };
  }
}
