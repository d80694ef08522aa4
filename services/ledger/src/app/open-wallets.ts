import { isWalletRail, WALLET_RAILS, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { walletsOpenedEvent } from './events.js';
import type { WalletBalance } from './ports.js';
import { Problems, requireCompany } from './validation.js';

/**
 * Provisions a company's wallets at zero. Idempotent: rails that exist are left alone; the
 * answer is every wallet of the company. `ledger.wallets_opened` names the rails created now.
 */
export class OpenWallets {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { rails: string[] }): Promise<WalletBalance[]> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    cmd.rails.forEach((r, i) => {
      if (!isWalletRail(r)) p.add(`rails[${i}]`, 'must be BREB or ACH');
    });
    p.throwIfAny();
    const rails = WALLET_RAILS.filter((r) => cmd.rails.includes(r)) as WalletRail[];
    if (rails.length > 0) {
      const { created } = await this.deps.store.openWallets(companyId, rails, (c) => walletsOpenedEvent(this.deps, companyId, c));
      if (created.length > 0) this.deps.events.nudge();
    }
    return this.deps.store.getWallets(companyId);
  }
}
