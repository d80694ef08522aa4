import { AppError } from '../errors/catalogue.js';

/**
 * What every owning service's ListSettlements / FindSettlements (wallet.settlements.v1, the
 * reconciliation's read path) shares: the day and batch rules, and the Bogotá date of a settlement.
 * Bogotá is UTC-5 all year (no daylight saving), so a day is [date 05:00Z, next date 05:00Z) and SQL
 * can index it with the immutable `timezone(interval '-05:00', ts)::date`.
 */
export const SETTLEMENT_BATCH_DEFAULT = 1_000;
export const SETTLEMENT_BATCH_MAX = 5_000;
/** At most this many ids per FindSettlements (the engine looks up 500 at a time). */
export const SETTLEMENT_FIND_MAX_IDS = 500;

/** The SQL date (Bogotá) of a timestamptz expression; the same text as the services' indexes. */
export const bogotaDaySql = (ts: string): string => `(timezone(interval '-05:00', ${ts})::date)`;

const BOGOTA_OFFSET_MS = 5 * 3_600_000;

/** The Bogotá date (YYYY-MM-DD) of an instant. */
export function bogotaDateOf(at: Date): string {
  return new Date(at.getTime() - BOGOTA_OFFSET_MS).toISOString().slice(0, 10);
}

/** A real calendar date YYYY-MM-DD, or INVALID_REQUEST. */
export function checkSettlementDate(date: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const d = m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!)) : undefined;
  if (!d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== date)
    throw new AppError('INVALID_REQUEST', `date ${JSON.stringify(date)} is not YYYY-MM-DD`);
  return date;
}

/** A request's batch size: 0 is the default, anything above the maximum is capped. */
export function settlementBatchSize(requested: number): number {
  return requested <= 0 ? SETTLEMENT_BATCH_DEFAULT : Math.min(requested, SETTLEMENT_BATCH_MAX);
}

/**
 * The external movement a settlement is (one correction per movement, docs/reconciliation.md "One case per external movement"), as the ledger's
 * corrections register names it. The identity both sides of every report line carry: on breb, ach
 * and pse our id (the provider echoes it on each line; a provider id a forged or late callback
 * brought cannot split one payout into two movements), "<rail>:our:<our id>", with ":payment" or
 * ":reversal" on pse (one deposit, two legs); on breb-inbound the network's id (it has no id of
 * ours), "breb-inbound:<provider id>". A line with no id of ours is named by the provider's.
 */
export function externalMovementRef(
  rail: 'breb' | 'ach' | 'pse' | 'breb-inbound',
  ids: { ourId?: string | null; providerId?: string | null },
  leg?: 'payment' | 'reversal' | 'return',
): string {
  const base =
    rail !== 'breb-inbound' && ids.ourId ? `${rail}:our:${ids.ourId}` : ids.providerId ? `${rail}:${ids.providerId}` : `${rail}:our:${ids.ourId ?? ''}`;
  if (rail === 'pse') return `${base}:${leg === 'reversal' ? 'reversal' : 'payment'}`;
  // An inbound payment returned to the payer: its return is a second movement of the network.
  return rail === 'breb-inbound' && leg === 'return' ? `${base}:return` : base;
}

/** The parts of a movement name (`externalMovementRef`'s inverse); undefined when it is not one. */
export function parseExternalMovement(
  ref: string,
): { rail: 'breb' | 'ach' | 'pse' | 'breb-inbound'; ourId?: string; providerId?: string; leg?: 'payment' | 'reversal' | 'return' } | undefined {
  const m = /^(breb|ach|pse|breb-inbound):(?:(our):)?(.+?)(?::(payment|reversal|return))?$/.exec(ref);
  if (!m) return undefined;
  const rail = m[1] as 'breb' | 'ach' | 'pse' | 'breb-inbound';
  const leg = m[4] as 'payment' | 'reversal' | 'return' | undefined;
  if (rail === 'pse' ? leg !== 'payment' && leg !== 'reversal' : rail === 'breb-inbound' ? leg !== undefined && leg !== 'return' : leg !== undefined)
    return undefined;
  return { rail, ...(m[2] ? { ourId: m[3]! } : { providerId: m[3]! }), ...(leg ? { leg } : {}) };
}

/** A Find request's ids, at most SETTLEMENT_FIND_MAX_IDS, or INVALID_REQUEST. */
export function checkFindIds(ids: readonly string[]): readonly string[] {
  if (ids.length > SETTLEMENT_FIND_MAX_IDS) throw new AppError('INVALID_REQUEST', `at most ${SETTLEMENT_FIND_MAX_IDS} ids per call`);
  return ids;
}
