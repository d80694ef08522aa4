import type { FeeOperation, WalletRail } from './rails.js';

/**
 * Account names of the journal (LEDGER.md "Accounts"). Company wallets are per company × rail;
 * system accounts are per rail, per operation or single. A company id never contains ':'
 * (checked at the edge), so names split unambiguously.
 */
export const Accounts = {
  walletAvailable: (companyId: string, rail: WalletRail) => `wallet_available:${companyId}:${rail}`,
  walletPendingOut: (companyId: string, rail: WalletRail) => `wallet_pending_out:${companyId}:${rail}`,
  railClearing: (rail: WalletRail) => `rail_clearing:${rail}`,
  feeRevenue: (operation: FeeOperation) => `fee_revenue:${operation}`,
  ivaPayable: 'iva_payable',
  pseSettlement: 'pse_settlement',
  brebSettlement: 'breb_settlement',
  unassignedFunds: (rail: WalletRail) => `unassigned_funds:${rail}`,
  funding: 'funding',
  /** Losses we absorb when an operator resolves a money exception against us (a write-off). */
  operationalLosses: 'operational_losses',
  /**
   * The other side of a reconciliation adjustment (PostClearingAdjustment): what a provider's report
   * said about a settlement account that our records did not, accepted by an operator. One per
   * clearing account, named after it: `reconciliation_differences:rail_clearing:BREB`,
   * `reconciliation_differences:pse_settlement`, ...
   */
  reconciliationDifferences: (clearingAccount: string) => `reconciliation_differences:${clearingAccount}`,
} as const;

/** A company id usable inside account names and as a tenant key. */
export const COMPANY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
