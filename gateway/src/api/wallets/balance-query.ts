import { AppError, type CallContext } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { walletToApi, type ApiWallet } from './presenters.js';
import type { TaxRegime } from '../../app/company-admin.js';

export interface BalanceView {
  currency: 'COP';
  wallets: ApiWallet[];
  consolidated: { availableCents: string; pendingOutCents: string; totalCents: string; currency: 'COP' };
}

/** GET /wallets/balance (§4.1): the company's wallets, BREB first, with consolidated totals. */
export class BalanceQuery {
  constructor(private readonly ledger: LedgerClient) {}

  async get(taxRegime: TaxRegime, call: CallContext): Promise<BalanceView> {
    // maxTransferAmount includes IVA on the fee only for companies in the common regime.
    const { wallets } = await this.ledger.getBalances({ ivaApplicable: taxRegime === 'COMMON' }, call);
    if (wallets.length === 0) throw new AppError('WALLET_NOT_PROVISIONED');
    const breb = wallets.find((w) => w.rail === ledgerV1.Rail.BREB);
    if (!breb) throw new AppError('FAST_WALLET_MISSING');
    const ach = wallets.find((w) => w.rail === ledgerV1.Rail.ACH);
    const ordered = ach ? [breb, ach] : [breb];
    let available = 0n;
    let pending = 0n;
    for (const w of ordered) {
      available += w.availableCents;
      pending += w.pendingOutCents;
    }
    return {
      currency: 'COP',
      wallets: ordered.map(walletToApi),
      consolidated: {
        availableCents: available.toString(),
        pendingOutCents: pending.toString(),
        totalCents: (available + pending).toString(),
        currency: 'COP',
      },
    };
  }
}
