import { AppError } from '@wallet/platform';
import { WALLET_RAILS, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { BatchPostingWrite, PostingWrite, RefusedWallet, StoredPosting } from './ports.js';
import { capExceeded, checkReserveCommand, reserveWrite, type ReserveCommand } from './reserve-funds.js';
import { walletMissing } from './results.js';
import { checkBatchItems, requireCompany } from './validation.js';

export interface ReserveBatchResult {
  /** In the order of the request's items. */
  holdIds: string[];
  replayed: boolean;
}

/**
 * The holds of many sends (a bulk payout, docs/batches.md) in ONE transaction, all or nothing. Each item is
 * a Reserve: checked as one, written as one (same posting kind, entries, hold, TRANSFER_OUT movement,
 * `ledger.reserved` event) under its own idempotency key and request hash, so a later Reserve, Commit,
 * Release or VoidReserve works per transfer as for a single send. Each wallet is debited once, by
 * the sum of its items, in one conditional statement (available ≥ sum), wallets in rail order (the
 * lock order). The keys decide a retry: all applied with the same hashes → the same holds, replayed;
 * any voided → RESERVE_VOIDED; another hash, or only some applied → REFERENCE_CONFLICT.
 */
export class ReserveBatch {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: { items: ReserveCommand[] }): Promise<ReserveBatchResult> {
    const companyId = requireCompany(caller);
    const items = cmd.items;
    checkItems(items);
    const deps = this.deps;

    const built = items.map((item) => reserveWrite(deps, companyId, item));
    const keys = items.map((i) => i.idempotencyKey);
    const hashes = built.map((b) => b.hash);
    // A retry (or a twin that already landed) is answered from the keys without touching a wallet.
    const earlier = existingOutcome(hashes, keys, await deps.store.findPostings(keys));
    if (earlier) return earlier;

    const outcome = await deps.store.recordPostingBatch(
      batchWrite(
        companyId,
        built.map((b) => b.write),
      ),
    );
    if (outcome.status === 'applied') {
      deps.events.nudge();
      return { holdIds: built.map((b) => b.write.posting.holdId!), replayed: false };
    }
    // Not written: a concurrent twin may have taken the keys (or the balance) meanwhile; the keys decide.
    const after = existingOutcome(hashes, keys, await deps.store.findPostings(keys));
    if (after) return after;
    if (outcome.status === 'duplicate') {
      throw new AppError('REFERENCE_CONFLICT', 'El identificador del movimiento de un ítem ya se usó con otra solicitud.');
    }
    throw await refusal(deps, companyId, outcome.refused);
  }
}

/** Every item checked as Reserve checks one, problems named by index; keys and movement ids unique in the batch. */
function checkItems(items: ReserveCommand[]): void {
  checkBatchItems(items, (p, item) => checkReserveCommand(p, item, { computeFee: false }), {
    idempotencyKey: (item) => item.idempotencyKey,
    'movement.id': (item) => item.movement?.id?.toLowerCase(),
  });
  // Over a rail's per-transfer cap: Reserve's own code, naming the first such item.
  for (let i = 0; i < items.length; i++) {
    const code = capExceeded(items[i]!.rail as WalletRail, items[i]!.amount);
    if (code) throw new AppError(code, undefined, { index: i, path: `items.${i}.amount` });
  }
}

/** What the keys already say, given the items' request hashes (null: none of the keys is used). */
function existingOutcome(hashes: string[], keys: string[], found: Map<string, StoredPosting>): ReserveBatchResult | null {
  if (found.size === 0) return null;
  // A voided key: its send was given up by its owner; the batch never applies.
  const voided = keys.findIndex((k) => found.get(k)?.kind === 'void');
  if (voided >= 0) throw new AppError('RESERVE_VOIDED', undefined, { index: voided });
  const other = keys.findIndex((k, i) => {
    const p = found.get(k);
    return p !== undefined && p.requestHash !== hashes[i];
  });
  if (other >= 0) throw new AppError('REFERENCE_CONFLICT', undefined, { index: other });
  if (found.size < keys.length) {
    throw new AppError('REFERENCE_CONFLICT', 'Solo parte de los ítems del lote ya se había reservado; el lote no coincide con el anterior.', {
      applied: found.size,
      items: keys.length,
    });
  }
  return { holdIds: keys.map((k) => found.get(k)!.holdId!), replayed: true };
}

/** Postings of one company as one batch: each wallet's change summed over its items, wallets in rail order. */
function batchWrite(companyId: string, writes: PostingWrite[]): BatchPostingWrite {
  const wallets: BatchPostingWrite['wallets'] = [];
  for (const rail of WALLET_RAILS) {
    const mine = writes.filter((w) => w.wallet?.rail === rail);
    if (mine.length === 0) continue;
    wallets.push({
      rail,
      availableDelta: mine.reduce((s, w) => s + w.wallet!.availableDelta, 0n),
      pendingOutDelta: mine.reduce((s, w) => s + w.wallet!.pendingOutDelta, 0n),
      postings: mine.length,
    });
  }
  return { companyId, wallets, postings: writes.map(({ wallet: _w, ...rest }) => rest) };
}

/**
 * Why the wallets refused: a missing wallet reads as Reserve's (WALLET_NOT_PROVISIONED /
 * FAST_WALLET_MISSING); else INSUFFICIENT_BALANCE with one entry per short wallet (cents as strings).
 */
async function refusal(deps: LedgerDeps, companyId: string, refused: RefusedWallet[]): Promise<AppError> {
  const missing = refused.find((r) => r.missing);
  if (missing) return walletMissing(deps, companyId, missing.rail);
  return new AppError('INSUFFICIENT_BALANCE', undefined, {
    wallets: refused.flatMap((r) =>
      r.missing
        ? []
        : [
            {
              rail: r.rail,
              requiredCents: r.requiredCents.toString(),
              availableCents: r.availableCents.toString(),
              shortfallCents: (r.requiredCents - r.availableCents).toString(),
            },
          ],
    ),
  });
}
