import type { LedgerDeps } from './deps.js';
import type { InvariantReport } from './ports.js';

/** LEDGER.md invariants 1-5, checked on the whole journal; `ok` only when nothing is listed. */
export class CheckInvariants {
  constructor(private readonly deps: Pick<LedgerDeps, 'store'>) {}

  async execute(): Promise<InvariantReport & { ok: boolean }> {
    const report = await this.deps.store.checkInvariants();
    return { ...report, ok: report.violations.length === 0 };
  }
}
