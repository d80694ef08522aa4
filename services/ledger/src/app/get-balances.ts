import { maxTransferAmount, ZERO_FEE_SCHEDULE } from '../domain/fees.js';
import { outflowFeeOperation, type FeeOperation, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { WalletBalance } from './ports.js';
import { requireCompany } from './validation.js';

const OUTFLOW_OPERATIONS: Readonly<Record<WalletRail, FeeOperation>> = { BREB: outflowFeeOperation('BREB'), ACH: outflowFeeOperation('ACH') };

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
    const wallets = await this.deps.store.walletsWithSchedules(companyId, OUTFLOW_OPERATIONS);
    return wallets.map(({ schedule, ...w }) => ({
      ...w,
      maxTransferAmount: maxTransferAmount(w.availableCents, schedule ?? ZERO_FEE_SCHEDULE, cmd.ivaApplicable, w.rail),
    }));
  }
}
