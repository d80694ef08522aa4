import { compareInstants, instantFromDate, parseInstant, type Instant } from '@wallet/platform';
import { isWalletRail, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { walletMissing } from './results.js';
import { Problems, requireCompany } from './validation.js';

export interface BalanceAtView {
  rail: WalletRail;
  at: Instant;
  availableCents: bigint;
  pendingOutCents: bigint;
  postings: bigint;
}

/**
 * A wallet's balance at a past instant, from the journal alone: the sum of the entries on
 * wallet_available / wallet_pending_out of every posting of the company created at or before `at`
 * (a posting's created_at is its transaction's time), read as the wallet's last balance checkpoint
 * at or before `at` plus the postings since (docs/balance-checkpoints.md), so its cost does not
 * grow with the company's history. Before the wallet's first posting: zeros.
 * `at` after the ledger's clock: VALIDATION_ERROR (the future has no balance yet). A wallet the
 * company does not have: WALLET_NOT_PROVISIONED / FAST_WALLET_MISSING, as for postings.
 */
export class GetBalanceAt {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { rail: string; at: string | undefined }): Promise<BalanceAtView> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    if (!isWalletRail(cmd.rail)) p.add('rail', 'must be BREB or ACH');
    // An instant at microsecond precision, compared in Postgres as given (a line's own postedAt counts it).
    const at = cmd.at ? parseInstant(cmd.at) : null;
    if (!cmd.at) p.add('at', 'is required');
    else if (!at) p.add('at', 'must be an RFC 3339 instant with its offset');
    else if (compareInstants(at, instantFromDate(this.deps.now())) > 0) p.add('at', 'must not be in the future');
    p.throwIfAny();
    const rail = cmd.rail as WalletRail;
    const b = await this.deps.store.balanceAt(companyId, rail, at!);
    if (!b) throw await walletMissing(this.deps, companyId, rail);
    return { rail, at: at!, ...b };
  }
}
