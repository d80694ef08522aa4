/** Rails, their per-transfer caps and the minimum (payments-wallet-api §8). */

export const WALLET_RAILS = ['BREB', 'ACH'] as const;
export type WalletRail = (typeof WALLET_RAILS)[number];
/** A movement's rail: PSE inflows land in the ACH wallet but are listed as PSE. */
export type MovementRail = WalletRail | 'PSE';

export const FEE_OPERATIONS = ['BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW'] as const;
export type FeeOperation = (typeof FEE_OPERATIONS)[number];

export type InflowSource = 'PSE' | 'BREB';

export const MIN_TRANSFER_AMOUNT = 100n;

export const RAIL_CAPS: Readonly<Record<WalletRail, bigint>> = {
  BREB: 1_200_000_000n,
  ACH: 200_000_000_000n,
};

export function isWalletRail(value: unknown): value is WalletRail {
  return value === 'BREB' || value === 'ACH';
}

export function isFeeOperation(value: unknown): value is FeeOperation {
  return typeof value === 'string' && (FEE_OPERATIONS as readonly string[]).includes(value);
}

/** The fee operation of a send on a rail (§2.3: BREB_OUTFLOW for BREB sends, ACH_OUTFLOW for ACH). */
export function outflowFeeOperation(rail: WalletRail): FeeOperation {
  return rail === 'BREB' ? 'BREB_OUTFLOW' : 'ACH_OUTFLOW';
}

/** Where an inflow lands and what it is charged: PSE → ACH wallet, Bre-B → BREB wallet. */
export function inflowRoute(source: InflowSource): { walletRail: WalletRail; operation: FeeOperation; movementRail: MovementRail } {
  return source === 'PSE'
    ? { walletRail: 'ACH', operation: 'PSE_INFLOW', movementRail: 'PSE' }
    : { walletRail: 'BREB', operation: 'BREB_INFLOW', movementRail: 'BREB' };
}

/**
 * The settlement report rails of the reconciliation (docs/reconciliation.md) and the ledger account
 * each one's report speaks about (LEDGER.md "Clearing accounts"): breb -> rail_clearing:BREB,
 * ach -> rail_clearing:ACH, pse -> pse_settlement, breb-inbound -> breb_settlement. `walletRail` is
 * the rail a posting on it is filed under (postings.rail): the wallet rail its money belongs to.
 */
export const CLEARINGS = ['breb', 'ach', 'pse', 'breb-inbound'] as const;
export type Clearing = (typeof CLEARINGS)[number];

export const CLEARING_ACCOUNTS: Readonly<Record<Clearing, { account: string; walletRail: WalletRail }>> = {
  breb: { account: 'rail_clearing:BREB', walletRail: 'BREB' },
  ach: { account: 'rail_clearing:ACH', walletRail: 'ACH' },
  pse: { account: 'pse_settlement', walletRail: 'ACH' },
  'breb-inbound': { account: 'breb_settlement', walletRail: 'BREB' },
};

export function isClearing(value: unknown): value is Clearing {
  return typeof value === 'string' && (CLEARINGS as readonly string[]).includes(value);
}
