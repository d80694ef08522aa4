/**
 * Balance alerts (docs/balance-alerts.md): a wallet's alert state and the crossings that change it.
 * Pure rules, no I/O.
 *
 *   NORMAL ──available < low──▶ LOW ──available >= low + hysteresis──▶ NORMAL   (balance_low, balance_recovered)
 *   NORMAL ──available > high─▶ HIGH ─available <= high - hysteresis─▶ NORMAL   (balance_high, balance_normal)
 *
 * Each crossing alerts once: staying inside a band (more debits while LOW) changes nothing. A jump
 * across both bands between two evaluations gives both crossings, in order (LOW → NORMAL → HIGH).
 */

export type BalanceAlertState = 'NORMAL' | 'LOW' | 'HIGH';
export type BalanceAlertKind = 'LOW' | 'RECOVERED' | 'HIGH' | 'NORMAL';

export const BALANCE_ALERT_STATES: readonly BalanceAlertState[] = ['NORMAL', 'LOW', 'HIGH'];
export const BALANCE_ALERT_KINDS: readonly BalanceAlertKind[] = ['LOW', 'RECOVERED', 'HIGH', 'NORMAL'];

/** A wallet's thresholds: `low` 0n means none, `high` null means none. */
export interface BalanceAlertSettings {
  low: bigint;
  high: bigint | null;
  hysteresis: bigint;
}

export interface Crossing {
  kind: BalanceAlertKind;
  /** The state entered by this crossing. */
  state: BalanceAlertState;
  /** The threshold crossed: low for LOW/RECOVERED, high for HIGH/NORMAL. */
  threshold: bigint;
}

/** The largest threshold or hysteresis a company may set: 2^53 − 1 centavos (JSON numbers stay exact). */
export const MAX_ALERT_CENTS = 9_007_199_254_740_991n;

/**
 * What is wrong with a set of settings (field → Spanish message); empty when valid. A high
 * threshold must lie above low + hysteresis, so the two bands never overlap (a balance cannot be
 * both recovering from LOW and entering HIGH, or the reverse).
 */
export function settingsProblems(s: BalanceAlertSettings): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const inRange = (v: bigint) => v >= 0n && v <= MAX_ALERT_CENTS;
  if (!inRange(s.low)) out.push(['lowThresholdCents', `Debe estar entre 0 y ${MAX_ALERT_CENTS}.`]);
  if (!inRange(s.hysteresis)) out.push(['hysteresisCents', `Debe estar entre 0 y ${MAX_ALERT_CENTS}.`]);
  if (s.high !== null) {
    if (!inRange(s.high)) out.push(['highThresholdCents', `Debe estar entre 1 y ${MAX_ALERT_CENTS}.`]);
    else if (out.length === 0 && s.high <= s.low + s.hysteresis) out.push(['highThresholdCents', 'Debe ser mayor que lowThresholdCents + hysteresisCents.']);
  }
  return out;
}

/** An alert with no low threshold and no high one is no alert (setting it removes the wallet's). */
export const isDisabled = (s: BalanceAlertSettings): boolean => s.low === 0n && s.high === null;

/** The crossings from `state` given the available balance now, in order; [] when the state holds. */
export function crossings(state: BalanceAlertState, available: bigint, s: BalanceAlertSettings): Crossing[] {
  const out: Crossing[] = [];
  let now = state;
  const hasLow = s.low > 0n;
  const hasHigh = s.high !== null;
  // A state whose threshold was removed is left without an alert (SetBalanceAlert resets it so too).
  if ((now === 'LOW' && !hasLow) || (now === 'HIGH' && !hasHigh)) now = 'NORMAL';
  if (now === 'LOW' && available >= s.low + s.hysteresis) {
    out.push({ kind: 'RECOVERED', state: 'NORMAL', threshold: s.low });
    now = 'NORMAL';
  } else if (now === 'HIGH' && available <= s.high! - s.hysteresis) {
    out.push({ kind: 'NORMAL', state: 'NORMAL', threshold: s.high! });
    now = 'NORMAL';
  }
  if (now === 'NORMAL') {
    if (hasLow && available < s.low) out.push({ kind: 'LOW', state: 'LOW', threshold: s.low });
    else if (hasHigh && available > s.high!) out.push({ kind: 'HIGH', state: 'HIGH', threshold: s.high! });
  }
  return out;
}

/** The state after the crossings (the last one's), or `state` when there are none (NORMAL when its threshold is gone). */
export function stateAfter(state: BalanceAlertState, cs: readonly Crossing[], s: BalanceAlertSettings): BalanceAlertState {
  const last = cs[cs.length - 1];
  if (last) return last.state;
  return (state === 'LOW' && s.low === 0n) || (state === 'HIGH' && s.high === null) ? 'NORMAL' : state;
}
