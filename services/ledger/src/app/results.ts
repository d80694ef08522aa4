import { AppError, maskAccount } from '@wallet/platform';
import type { Hold, Movement, MovementDetails } from '../domain/movements.js';
import { DETAIL_FIELDS } from '../domain/movements.js';
import type { WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { StoredPosting } from './ports.js';
import { orNull } from './validation.js';

/** What a money RPC answers: the posting and its movement (absent for unassigned inflows). */
export interface PostingResult {
  postingId: string;
  movement: Movement | null;
  replayed: boolean;
}

/** What a hold RPC answers: the hold and the send's movement. */
export interface HoldResult {
  hold: Hold;
  movement: Movement | null;
  replayed: boolean;
}

/** A replay answers with the records the first call created, as they are now. */
export async function replayPosting(deps: LedgerDeps, companyId: string, p: StoredPosting): Promise<PostingResult> {
  const movement = p.movementId ? ((await deps.store.getMovement(companyId, p.movementId)) ?? null) : null;
  return { postingId: p.id, movement, replayed: true };
}

export async function replayHold(deps: LedgerDeps, companyId: string, p: StoredPosting): Promise<HoldResult> {
  const hold = p.holdId ? await deps.store.getHold(companyId, p.holdId) : undefined;
  if (!hold) throw new AppError('INTERNAL_ERROR', undefined, { reason: 'posting without its hold' });
  const movement = (await deps.store.getMovement(companyId, hold.movementId)) ?? null;
  return { hold: stripHoldView(hold), movement, replayed: true };
}

export function stripHoldView(h: Hold & { feeOperation?: unknown; movementStatus?: unknown }): Hold {
  const { feeOperation: _f, movementStatus: _m, ...hold } = h;
  return hold;
}

/**
 * The wallet a posting needs does not exist: no wallets at all → WALLET_NOT_PROVISIONED; others but
 * not the BREB one → FAST_WALLET_MISSING (as the gateway answers for balances); no ACH wallet →
 * WALLET_NOT_PROVISIONED naming it.
 */
export async function walletMissing(deps: LedgerDeps, companyId: string, rail: WalletRail): Promise<AppError> {
  const wallets = await deps.store.getWallets(companyId);
  if (wallets.length === 0) return new AppError('WALLET_NOT_PROVISIONED');
  return rail === 'BREB' ? new AppError('FAST_WALLET_MISSING') : new AppError('WALLET_NOT_PROVISIONED', 'La empresa no tiene billetera ACH aprovisionada.');
}

/** A debit the guard refused: no wallet, or available does not cover it. */
export async function debitRefused(deps: LedgerDeps, companyId: string, rail: WalletRail): Promise<never> {
  if (!(await deps.store.walletExists(companyId, rail))) throw await walletMissing(deps, companyId, rail);
  throw new AppError('INSUFFICIENT_BALANCE');
}

/** Details as stored: empty strings dropped, the bank account masked to its last 4 digits. */
export function storedDetails(d: MovementDetails | undefined): MovementDetails {
  const out: MovementDetails = {};
  if (!d) return out;
  for (const f of DETAIL_FIELDS) {
    const v = orNull(d[f]);
    if (v !== null) out[f] = f === 'bankAccountNumber' ? (maskAccount(v) ?? undefined) : v;
  }
  return out;
}
