import { maxTransferAmount, ZERO_FEE_SCHEDULE } from '../domain/fees.js';
import { outflowFeeOperation } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { WalletBalance } from './ports.js';
import { requireCompany } from './validation.js';

export interface WalletView extends WalletBalance {
  maxTransferAmount: bigint;
}

/**
 * The company's wallets (BREB first) with the largest sendable amount of each, after its
 * outflow fee and IVA and under its rail cap. No wallets → an empty list (the gateway answers
 * WALLET_NOT_PROVISIONED / FAST_WALLET_MISSING).
 */
export class GetBalances {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { ivaApplicable: boolean }): Promise<WalletView[]> {
    const companyId = requireCompany(caller);
    const wallets = await this.deps.store.getWallets(companyId);
    if (wallets.length === 0) return [];
    const schedules = await this.deps.store.feeSchedules(companyId, wallets.map((w) => outflowFeeOperation(w.rail)));
    return wallets.map((w) => ({
      ...w,
      maxTransferAmount: maxTransferAmount(w.availableCents, schedules.get(outflowFeeOperation(w.rail)) ?? ZERO_FEE_SCHEDULE, cmd.ivaApplicable, w.rail),
    }));
  }
}
