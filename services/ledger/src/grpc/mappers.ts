import { ledgerV1 } from '@wallet/proto';
import type { FeeBreakdown } from '../domain/fees.js';
import { DETAIL_FIELDS, type Hold, type Movement, type MovementDetails } from '../domain/movements.js';
import type { MovementSpecCommand } from '../app/movement-spec.js';
import type { CommitCommand } from '../app/commit-hold.js';
import type { ReserveCommand } from '../app/reserve-funds.js';
import type { MoveResult } from '../app/move-funds.js';
import type { BalanceAlertEventRecord, BalanceAlertRecord, FeeConfigRecord, WalletBalance } from '../app/ports.js';
import { protoAlertKind, protoAlertState } from '../app/balance-alerts.js';

/**
 * proto ⇄ application values. Proto enums are string enums ('RAIL_BREB'); the application speaks
 * the names the API documents ('BREB'). Unknown or unspecified values pass through as
 * 'UNSPECIFIED'/'UNRECOGNIZED' and are refused by the use case's validation, with the field named.
 */
export function enumName(value: string | undefined, prefix: string): string {
  if (value === undefined) return 'UNSPECIFIED';
  return value.startsWith(prefix) ? value.slice(prefix.length) : value;
}

export const railName = (v: ledgerV1.Rail | undefined) => enumName(v, 'RAIL_');
export const movementTypeName = (v: ledgerV1.MovementType | undefined) => enumName(v, 'MOVEMENT_TYPE_');
export const movementStatusName = (v: ledgerV1.MovementStatus | undefined) => enumName(v, 'MOVEMENT_STATUS_');
export const feeOperationName = (v: ledgerV1.FeeOperation | undefined) => enumName(v, 'FEE_OPERATION_');
export const inflowSourceName = (v: ledgerV1.InflowSource | undefined) => enumName(v, 'INFLOW_SOURCE_');

export const toProtoRail = (r: string): ledgerV1.Rail => ledgerV1.Rail[r as keyof typeof ledgerV1.Rail] ?? ledgerV1.Rail.UNRECOGNIZED;
const toProtoType = (t: string) => ledgerV1.MovementType[t as keyof typeof ledgerV1.MovementType] ?? ledgerV1.MovementType.UNRECOGNIZED;
const toProtoStatus = (s: string) => ledgerV1.MovementStatus[s as keyof typeof ledgerV1.MovementStatus] ?? ledgerV1.MovementStatus.UNRECOGNIZED;
const toProtoHoldStatus = (s: string) => ledgerV1.HoldStatus[s as keyof typeof ledgerV1.HoldStatus] ?? ledgerV1.HoldStatus.UNRECOGNIZED;
const toProtoOperation = (o: string) => ledgerV1.FeeOperation[o as keyof typeof ledgerV1.FeeOperation] ?? ledgerV1.FeeOperation.UNRECOGNIZED;

export function detailsFromProto(d: ledgerV1.MovementDetails | undefined): MovementDetails | undefined {
  if (!d) return undefined;
  const out: MovementDetails = {};
  for (const f of DETAIL_FIELDS) if (d[f] !== undefined) out[f] = d[f];
  return out;
}

export function movementSpecFromProto(s: ledgerV1.MovementSpec | undefined): MovementSpecCommand | undefined {
  if (!s) return undefined;
  const details = detailsFromProto(s.details);
  return {
    status: movementStatusName(s.status),
    ...(s.id !== undefined ? { id: s.id } : {}),
    ...(s.reference !== undefined ? { reference: s.reference } : {}),
    ...(s.apiKeyId !== undefined ? { apiKeyId: s.apiKeyId } : {}),
    ...(details ? { details } : {}),
  };
}

/** A CommitRequest as the use case takes it: the same for Commit and for each CommitBatch item. */
export function commitFromProto(r: ledgerV1.CommitRequest): CommitCommand {
  const x = r.expected;
  return {
    idempotencyKey: r.idempotencyKey,
    holdId: r.holdId,
    ...(x ? { expected: { rail: railName(x.rail), amount: x.amount, fee: x.fee, iva: x.iva, movementId: x.movementId } } : {}),
  };
}

/**
 * A ReserveRequest as the use case takes it: the same for Reserve and for each ReserveBatch item, so
 * the two hash a send alike (the request hash is over this object).
 */
export function reserveFromProto(r: ledgerV1.ReserveRequest): ReserveCommand {
  const fee = feeFromProto(r.fee);
  const movement = movementSpecFromProto(r.movement);
  return {
    idempotencyKey: r.idempotencyKey,
    rail: railName(r.rail),
    amount: r.amount,
    ...(fee !== undefined ? { fee } : {}),
    ...(movement !== undefined ? { movement } : {}),
    ...(r.computeFee !== undefined ? { computeFee: { ivaApplicable: r.computeFee.ivaApplicable } } : {}),
  };
}

export function feeFromProto(f: ledgerV1.FeeBreakdown | undefined): FeeBreakdown | undefined {
  return (
    f && {
      fixedFee: f.fixedFee,
      variableFee: f.variableFee,
      subtotalFee: f.subtotalFee,
      ivaApplicable: f.ivaApplicable,
      ivaAmount: f.ivaAmount,
      totalCharged: f.totalCharged,
    }
  );
}

export function feeToProto(f: FeeBreakdown): ledgerV1.FeeBreakdown {
  return { ...f };
}

export function movementToProto(m: Movement): ledgerV1.Movement {
  const details: ledgerV1.MovementDetails = {};
  for (const f of DETAIL_FIELDS) if (m.details[f] != null) details[f] = m.details[f];
  return {
    id: m.id,
    type: toProtoType(m.type),
    rail: toProtoRail(m.rail),
    walletRail: toProtoRail(m.walletRail),
    status: toProtoStatus(m.status),
    amount: m.amount,
    totalFee: m.totalFee,
    ivaAmount: m.ivaAmount,
    netAmount: m.netAmount,
    ...(m.reference !== null ? { reference: m.reference } : {}),
    ...(m.apiKeyId !== null ? { apiKeyId: m.apiKeyId } : {}),
    details,
    createdAt: m.createdAt,
    ...(m.completedAt ? { completedAt: m.completedAt } : {}),
    ...(m.walletMoveId ? { walletMoveId: m.walletMoveId } : {}),
  };
}

export function moveToProto(r: MoveResult): ledgerV1.MoveResult {
  return { moveId: r.moveId, debit: movementToProto(r.debit), credit: movementToProto(r.credit), replayed: r.replayed };
}

export function holdToProto(h: Hold): ledgerV1.Hold {
  return {
    id: h.id,
    rail: toProtoRail(h.rail),
    status: toProtoHoldStatus(h.status),
    amount: h.amount,
    fee: h.fee,
    iva: h.iva,
    total: h.total,
    movementId: h.movementId,
    createdAt: h.createdAt,
    ...(h.closedAt ? { closedAt: h.closedAt } : {}),
    ...(h.fixedFee !== null ? { fixedFee: h.fixedFee } : {}),
  };
}

export function walletToProto(w: WalletBalance & { maxTransferAmount?: bigint }): ledgerV1.Wallet {
  return {
    rail: toProtoRail(w.rail),
    availableCents: w.availableCents,
    pendingOutCents: w.pendingOutCents,
    version: w.version,
    maxTransferAmount: w.maxTransferAmount ?? 0n,
  };
}

export function feeConfigToProto(c: FeeConfigRecord): ledgerV1.FeeConfig {
  return {
    operation: toProtoOperation(c.operation),
    ...(c.companyId !== null ? { companyId: c.companyId } : {}),
    fixedFeeCents: c.fixedFeeCents,
    variableBps: c.variableBps,
    updatedAt: c.updatedAt,
  };
}

export function balanceAlertToProto(a: BalanceAlertRecord): ledgerV1.BalanceAlert {
  return {
    rail: toProtoRail(a.rail),
    enabled: a.settings !== null,
    lowThresholdCents: a.settings?.low ?? 0n,
    ...(a.settings?.high != null ? { highThresholdCents: a.settings.high } : {}),
    hysteresisCents: a.settings?.hysteresis ?? 0n,
    state: protoAlertState(a.state),
    ...(a.updatedAt ? { updatedAt: a.updatedAt } : {}),
    walletExists: a.walletExists,
    availableCents: a.availableCents,
  };
}

export function balanceAlertEventToProto(e: BalanceAlertEventRecord): ledgerV1.BalanceAlertEvent {
  return {
    id: e.id,
    rail: toProtoRail(e.rail),
    kind: protoAlertKind(e.kind),
    state: protoAlertState(e.state),
    availableCents: e.availableCents,
    thresholdCents: e.thresholdCents,
    lowThresholdCents: e.settings.low,
    ...(e.settings.high !== null ? { highThresholdCents: e.settings.high } : {}),
    hysteresisCents: e.settings.hysteresis,
    occurredAt: e.occurredAt,
  };
}
