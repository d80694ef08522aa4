import { Accounts } from './accounts.js';
import type { Clearing, FeeOperation, InflowSource, WalletRail } from './rails.js';
import { CLEARING_ACCOUNTS, inflowRoute } from './rails.js';

/** One signed line of a posting: + increases the account, − decreases it. */
export interface Entry {
  account: string;
  amount: bigint;
}

export type PostingKind = 'credit' | 'fee_charge' | 'reserve' | 'commit' | 'release' | 'inflow' | 'reversal' | 'correction' | 'recon_adjustment' | 'move';
/** A stored posting's kind: a money kind, or `void`, which moves no money and claims a Reserve's key so that it never applies (VoidReserve). */
export type StoredPostingKind = PostingKind | 'void';

/** A balanced set of entries plus what it does to the one company wallet it touches (if any). */
export interface PostingDraft {
  kind: PostingKind;
  entries: Entry[];
  wallet: WalletChange | null;
}

export interface WalletChange {
  companyId: string;
  rail: WalletRail;
  availableDelta: bigint;
  pendingOutDelta: bigint;
}

export class UnbalancedPostingError extends Error {
  constructor(kind: string, sum: bigint) {
    super(`posting ${kind} does not sum to zero (sum ${sum})`);
    this.name = 'UnbalancedPostingError';
  }
}

export function sumEntries(entries: readonly Entry[]): bigint {
  return entries.reduce((s, e) => s + e.amount, 0n);
}

/**
 * Drops zero lines (a zero fee is no entry), asserts the rest sums to zero, and derives the
 * wallet change from the entries themselves, so the stored balance and the journal cannot disagree.
 */
function draft(kind: PostingKind, lines: Entry[], wallet: { companyId: string; rail: WalletRail } | null): PostingDraft {
  const entries = lines.filter((e) => e.amount !== 0n);
  const sum = sumEntries(entries);
  if (sum !== 0n || entries.length < 2) throw new UnbalancedPostingError(kind, sum);
  let change: WalletChange | null = null;
  if (wallet) {
    const avail = Accounts.walletAvailable(wallet.companyId, wallet.rail);
    const pending = Accounts.walletPendingOut(wallet.companyId, wallet.rail);
    change = {
      ...wallet,
      availableDelta: sumEntries(entries.filter((e) => e.account === avail)),
      pendingOutDelta: sumEntries(entries.filter((e) => e.account === pending)),
    };
  }
  return { kind, entries, wallet: change };
}

function positive(name: string, v: bigint): void {
  if (v <= 0n) throw new RangeError(`${name} must be positive`);
}
function nonNegative(name: string, v: bigint): void {
  if (v < 0n) throw new RangeError(`${name} must not be negative`);
}

/**
 * An operator's write-off of a payout the rail made after we released its hold (money exception
 * RAIL_COMPLETED_AFTER_RELEASE): operational_losses −amount; rail_clearing +amount. No company wallet moves.
 */
export function writeOffPayoutPosting(rail: WalletRail, amount: bigint): PostingDraft {
  positive('amount', amount);
  return draft(
    'correction',
    [
      { account: Accounts.operationalLosses, amount: -amount },
      { account: Accounts.railClearing(rail), amount },
    ],
    null,
  );
}

/**
 * A reconciliation difference accepted on the provider's side (PostClearingAdjustment): the
 * clearing account of the report +delta; reconciliation_differences(that account) −delta. `delta`
 * is signed and non-zero (the break's difference_cents). No company wallet moves.
 */
export function clearingAdjustmentPosting(clearing: Clearing, delta: bigint): PostingDraft {
  if (delta === 0n) throw new RangeError('delta must not be zero');
  const account = CLEARING_ACCOUNTS[clearing].account;
  return draft(
    'recon_adjustment',
    [
      { account, amount: delta },
      { account: Accounts.reconciliationDifferences(account), amount: -delta },
    ],
    null,
  );
}

/**
 * A move X between the company's own wallets (docs/wallet-moves.md): wallet_available(from) −X;
 * wallet_available(to) +X. No fee. `wallet` is the debited wallet; `counterWallet` the credited one.
 */
export function movePosting(companyId: string, from: WalletRail, to: WalletRail, amount: bigint): PostingDraft & { counterWallet: WalletChange } {
  positive('amount', amount);
  if (from === to) throw new RangeError('a move needs two different wallets');
  const d = draft(
    'move',
    [
      { account: Accounts.walletAvailable(companyId, from), amount: -amount },
      { account: Accounts.walletAvailable(companyId, to), amount },
    ],
    { companyId, rail: from },
  );
  return { ...d, counterWallet: { companyId, rail: to, availableDelta: amount, pendingOutDelta: 0n } };
}

/** Admin credit X (BALANCE_ADD): funding −X; wallet_available +X. */
export function creditPosting(companyId: string, rail: WalletRail, amount: bigint): PostingDraft {
  positive('amount', amount);
  return draft(
    'credit',
    [
      { account: Accounts.funding, amount: -amount },
      { account: Accounts.walletAvailable(companyId, rail), amount },
    ],
    { companyId, rail },
  );
}

/** Admin fee charge: wallet_available −(fee+IVA); fee_revenue +fee; iva_payable +IVA. */
export function feeChargePosting(companyId: string, rail: WalletRail, operation: FeeOperation, fee: bigint, iva: bigint): PostingDraft {
  positive('fee', fee);
  nonNegative('iva', iva);
  return draft(
    'fee_charge',
    [
      { account: Accounts.walletAvailable(companyId, rail), amount: -(fee + iva) },
      { account: Accounts.feeRevenue(operation), amount: fee },
      { account: Accounts.ivaPayable, amount: iva },
    ],
    { companyId, rail },
  );
}

export interface HoldAmounts {
  amount: bigint;
  fee: bigint;
  iva: bigint;
}

export function holdTotal(h: HoldAmounts): bigint {
  return h.amount + h.fee + h.iva;
}

/** Send accepted (reserve): wallet_available −T; wallet_pending_out +T. */
export function reservePosting(companyId: string, rail: WalletRail, h: HoldAmounts): PostingDraft {
  positive('amount', h.amount);
  nonNegative('fee', h.fee);
  nonNegative('iva', h.iva);
  const total = holdTotal(h);
  return draft(
    'reserve',
    [
      { account: Accounts.walletAvailable(companyId, rail), amount: -total },
      { account: Accounts.walletPendingOut(companyId, rail), amount: total },
    ],
    { companyId, rail },
  );
}

/**
 * Send completed (commit): pending_out −T; rail_clearing +amount; fee_revenue +fee; iva_payable +IVA.
 * A return's hold (ReserveReturn) names the settlement account the inflow came from instead
 * (`returnAccount`: breb_settlement, pse_settlement): the money goes back the way it came.
 */
export function commitPosting(companyId: string, rail: WalletRail, operation: FeeOperation, h: HoldAmounts & { returnAccount?: string | null }): PostingDraft {
  return draft(
    'commit',
    [
      { account: Accounts.walletPendingOut(companyId, rail), amount: -holdTotal(h) },
      { account: h.returnAccount ?? Accounts.railClearing(rail), amount: h.amount },
      { account: Accounts.feeRevenue(operation), amount: h.fee },
      { account: Accounts.ivaPayable, amount: h.iva },
    ],
    { companyId, rail },
  );
}

/** Send failed, rejected or expired (release): pending_out −T; wallet_available +T. */
export function releasePosting(companyId: string, rail: WalletRail, h: HoldAmounts): PostingDraft {
  const total = holdTotal(h);
  return draft(
    'release',
    [
      { account: Accounts.walletPendingOut(companyId, rail), amount: -total },
      { account: Accounts.walletAvailable(companyId, rail), amount: total },
    ],
    { companyId, rail },
  );
}

/**
 * PSE paid / Bre-B to a live key: settlement −G; wallet_available +N; fee_revenue +fee;
 * iva_payable +IVA, with N = G − fee − IVA > 0.
 */
export function inflowPosting(companyId: string, source: InflowSource, gross: bigint, fee: bigint, iva: bigint, fromUnassigned = false): PostingDraft {
  positive('gross', gross);
  nonNegative('fee', fee);
  nonNegative('iva', iva);
  const net = gross - fee - iva;
  positive('net', net);
  const route = inflowRoute(source);
  return draft(
    'inflow',
    [
      { account: source === 'PSE' ? Accounts.pseSettlement : fromUnassigned ? Accounts.unassignedFunds('BREB') : Accounts.brebSettlement, amount: -gross },
      { account: Accounts.walletAvailable(companyId, route.walletRail), amount: net },
      { account: Accounts.feeRevenue(route.operation), amount: fee },
      { account: Accounts.ivaPayable, amount: iva },
    ],
    { companyId, rail: route.walletRail },
  );
}

/** Bre-B to a deleted or suspended key: breb_settlement −G; unassigned_funds(BREB) +G; no wallet. */
export function unassignedInflowPosting(gross: bigint): PostingDraft {
  positive('gross', gross);
  return draft(
    'inflow',
    [
      { account: Accounts.brebSettlement, amount: -gross },
      { account: Accounts.unassignedFunds('BREB'), amount: gross },
    ],
    null,
  );
}

/** A held Bre-B payment returned to the payer: unassigned_funds(BREB) −G; breb_settlement +G (the hold's entries negated). */
export function unassignedReturnPosting(gross: bigint): PostingDraft {
  positive('gross', gross);
  return draft(
    'reversal',
    [
      { account: Accounts.unassignedFunds('BREB'), amount: -gross },
      { account: Accounts.brebSettlement, amount: gross },
    ],
    null,
  );
}

/**
 * Provider reversal of an assigned inflow (PSE reversed): the inflow posting's entries negated.
 * The one posting allowed to take wallet_available below zero (LEDGER.md).
 */
export function reversalPosting(companyId: string, source: InflowSource, gross: bigint, fee: bigint, iva: bigint): PostingDraft {
  const original = inflowPosting(companyId, source, gross, fee, iva);
  const route = inflowRoute(source);
  return draft(
    'reversal',
    original.entries.map((e) => ({ account: e.account, amount: -e.amount })),
    { companyId, rail: route.walletRail },
  );
}
