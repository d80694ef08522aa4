import { ledgerV1, type walletEventsV1 } from '@wallet/proto';
import { centsToNumber } from '../money/money.js';
import { formatInstant, parseInstant, type Instant } from '../time/instant.js';

/**
 * Balance alerts (docs/balance-alerts.md) as the API and the webhooks show them: the ONE builder of
 * a crossing (GET /wallets/alerts/history items, and the `wallet.balance_*` webhooks' data) and of a
 * wallet's alert settings (GET /wallets/alerts, PUT /wallets/{rail}/alerts).
 */

export type BalanceAlertKindName = 'LOW' | 'RECOVERED' | 'HIGH' | 'NORMAL';
export type BalanceAlertStateName = 'NORMAL' | 'LOW' | 'HIGH';

/** The webhook event type (and the WALLETS subject) of each crossing. */
export const BALANCE_ALERT_EVENT_TYPES = {
  LOW: 'wallet.balance_low',
  RECOVERED: 'wallet.balance_recovered',
  HIGH: 'wallet.balance_high',
  NORMAL: 'wallet.balance_normal',
} as const satisfies Record<BalanceAlertKindName, string>;
export type BalanceAlertEventType = (typeof BALANCE_ALERT_EVENT_TYPES)[BalanceAlertKindName];

const strip = (v: string, prefix: string) => (v.startsWith(prefix) ? v.slice(prefix.length) : v);

function walletRail(r: ledgerV1.Rail): 'BREB' | 'ACH' {
  if (r === ledgerV1.Rail.BREB) return 'BREB';
  if (r === ledgerV1.Rail.ACH) return 'ACH';
  throw new Error(`a balance alert names a wallet by BREB or ACH, not ${String(r)}`);
}

export function balanceAlertKindName(k: ledgerV1.BalanceAlertKind): BalanceAlertKindName {
  const name = strip(String(k), 'BALANCE_ALERT_KIND_');
  if (name === 'LOW' || name === 'RECOVERED' || name === 'HIGH' || name === 'NORMAL') return name;
  throw new Error(`not a balance alert kind: ${String(k)}`);
}

export function balanceAlertStateName(s: ledgerV1.BalanceAlertState): BalanceAlertStateName {
  const name = strip(String(s), 'BALANCE_ALERT_STATE_');
  return name === 'LOW' || name === 'HIGH' ? name : 'NORMAL';
}

/** A crossing, whichever message told it: the ledger's history item or the WALLETS event. */
export interface BalanceAlertCrossing {
  id: string;
  rail: ledgerV1.Rail;
  kind: ledgerV1.BalanceAlertKind;
  state: ledgerV1.BalanceAlertState;
  availableCents: bigint;
  thresholdCents: bigint;
  lowThresholdCents: bigint;
  highThresholdCents?: bigint | undefined;
  hysteresisCents: bigint;
  occurredAt: Instant;
}

/** A crossing as GET /wallets/alerts/history lists it and as the `wallet.balance_*` webhooks carry it. */
export function balanceAlertEventView(e: BalanceAlertCrossing) {
  const kind = balanceAlertKindName(e.kind);
  return {
    id: e.id,
    type: BALANCE_ALERT_EVENT_TYPES[kind],
    rail: walletRail(e.rail),
    kind,
    state: balanceAlertStateName(e.state),
    availableCents: e.availableCents.toString(),
    thresholdCents: centsToNumber(e.thresholdCents),
    lowThresholdCents: e.lowThresholdCents > 0n ? centsToNumber(e.lowThresholdCents) : null,
    highThresholdCents: e.highThresholdCents ? centsToNumber(e.highThresholdCents) : null,
    hysteresisCents: centsToNumber(e.hysteresisCents),
    occurredAt: formatInstant(e.occurredAt),
  };
}

/** The ledger's history item (ListBalanceAlertEvents). */
export const balanceAlertCrossingOfRecord = (e: ledgerV1.BalanceAlertEvent): BalanceAlertCrossing => e;

/** The WALLETS event (`wallet.balance_*`): `occurredAt` is the history row's instant, with its microseconds. */
export function balanceAlertCrossingOfEvent(e: walletEventsV1.WalletBalanceAlert): BalanceAlertCrossing {
  const occurredAt = parseInstant(e.occurredAt);
  if (!e.alertId || !occurredAt) throw new Error('wallet.balance_* without alertId or occurredAt');
  return {
    id: e.alertId,
    rail: e.rail,
    kind: e.kind,
    state: e.state,
    availableCents: e.availableCents,
    thresholdCents: e.thresholdCents,
    lowThresholdCents: e.lowThresholdCents,
    highThresholdCents: e.highThresholdCents,
    hysteresisCents: e.hysteresisCents,
    occurredAt,
  };
}

/** A wallet's alert settings and state as GET /wallets/alerts and PUT /wallets/{rail}/alerts show them. */
export function balanceAlertSettingsView(a: ledgerV1.BalanceAlert) {
  return {
    rail: walletRail(a.rail),
    enabled: a.enabled,
    lowThresholdCents: a.enabled && a.lowThresholdCents > 0n ? centsToNumber(a.lowThresholdCents) : null,
    highThresholdCents: a.enabled && a.highThresholdCents ? centsToNumber(a.highThresholdCents) : null,
    hysteresisCents: a.enabled ? centsToNumber(a.hysteresisCents) : 0,
    state: balanceAlertStateName(a.state),
    availableCents: a.availableCents.toString(),
    updatedAt: a.updatedAt ? formatInstant(a.updatedAt) : null,
  };
}
