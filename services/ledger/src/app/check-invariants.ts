import type { LedgerDeps } from './deps.js';
import type { JournalCheckOptions, JournalCheckReport, JournalCut } from './ports.js';

/**
 * LEDGER.md invariants 1-8, checked on the whole journal or, incremental, on what was sealed since the
 * verified cut (docs/ledger-check.md); `ok` only when nothing is listed. `record`: a check that held
 * moves the cut (the ledger's self-check does; the RPC only reads).
 */
export class CheckInvariants {
  constructor(private readonly deps: Pick<LedgerDeps, 'store'>) {}

  async execute(o: JournalCheckOptions & { record?: boolean } = {}): Promise<JournalCheckReport & { cut?: JournalCut; ok: boolean }> {
    const report = await this.deps.store.checkInvariants(o);
    return { ...report, ok: report.violations.length === 0 };
  }
}
