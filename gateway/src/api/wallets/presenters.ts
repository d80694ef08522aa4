import { balanceAlertCrossingOfRecord, balanceAlertEventView, balanceAlertSettingsView, centsToNumber, formatInstant, type Instant } from '@wallet/platform';
import { bogotaIso } from '../csv-cells.js';
import { ledgerV1 } from '@wallet/proto';

/** Proto ↔ HTTP edge mappings: the only place gRPC enums and bigints become API strings/numbers. */

export type ApiRail = 'BREB' | 'ACH';
export type ApiMovementRail = ApiRail | 'PSE';

const RAIL_TO_PROTO: Record<ApiRail, ledgerV1.Rail> = { BREB: ledgerV1.Rail.BREB, ACH: ledgerV1.Rail.ACH };

export function railToProto(rail: ApiRail): ledgerV1.Rail {
  return RAIL_TO_PROTO[rail];
}

export function railFromProto(rail: ledgerV1.Rail): ApiMovementRail {
  switch (rail) {
    case ledgerV1.Rail.BREB:
      return 'BREB';
    case ledgerV1.Rail.ACH:
      return 'ACH';
    case ledgerV1.Rail.PSE:
      return 'PSE';
    default:
      throw new Error(`unexpected rail from the ledger: ${String(rail)}`);
  }
}

/** Strips the proto enum prefix: MOVEMENT_TYPE_BALANCE_ADD → BALANCE_ADD. */
function enumName(value: string, prefix: string): string {
  return value.startsWith(prefix) ? value.slice(prefix.length) : value;
}

/** A movement's type as the API writes it (`BALANCE_ADD`). */
export const movementTypeToApi = (t: ledgerV1.MovementType): string => enumName(t, 'MOVEMENT_TYPE_');
/** A movement's status as the API writes it (`COMPLETED`). */
export const movementStatusToApi = (s: ledgerV1.MovementStatus): string => enumName(s, 'MOVEMENT_STATUS_');

export interface ApiWallet {
  rail: ApiRail;
  type: 'FAST' | 'ACH';
  availableCents: string;
  pendingOutCents: string;
  totalCents: string;
  version: number;
  maxTransferAmount: number;
}

/** §2.1: balances as strings (big-integer safe), version and maxTransferAmount as numbers. */
export function walletToApi(w: ledgerV1.Wallet): ApiWallet {
  const rail = railFromProto(w.rail);
  if (rail === 'PSE') throw new Error('the ledger returned a PSE wallet');
  return {
    rail,
    type: rail === 'BREB' ? 'FAST' : 'ACH',
    availableCents: w.availableCents.toString(),
    pendingOutCents: w.pendingOutCents.toString(),
    totalCents: (w.availableCents + w.pendingOutCents).toString(),
    version: Number(w.version),
    maxTransferAmount: centsToNumber(w.maxTransferAmount),
  };
}

export interface ApiMovement {
  id: string;
  type: string;
  rail: ApiMovementRail;
  status: string;
  amount: string;
  totalFee: string;
  ivaAmount: string;
  netAmount: string;
  targetName: string | null;
  targetDocument: string | null;
  reference: string | null;
  createdAt: string;
  completedAt: string | null;
  walletMoveId: string | null;
}

/** §2.6 movement (transaction listing item): money as strings. */
export function movementToApi(m: ledgerV1.Movement): ApiMovement {
  return {
    id: m.id,
    type: movementTypeToApi(m.type),
    rail: railFromProto(m.rail),
    status: movementStatusToApi(m.status),
    amount: m.amount.toString(),
    totalFee: m.totalFee.toString(),
    ivaAmount: m.ivaAmount.toString(),
    netAmount: m.netAmount.toString(),
    targetName: m.details?.targetName ?? null,
    targetDocument: m.details?.targetDocument ?? null,
    reference: m.reference ?? null,
    // The journal's instants, exactly (microseconds): each works as a listing's or statement's bound.
    createdAt: formatInstant(m.createdAt),
    completedAt: m.completedAt ? formatInstant(m.completedAt) : null,
    walletMoveId: m.walletMoveId ?? null,
  };
}

export type ApiFeeOperation = 'BREB_OUTFLOW' | 'ACH_OUTFLOW' | 'PSE_INFLOW' | 'BREB_INFLOW';

const FEE_OP_TO_PROTO: Record<ApiFeeOperation, ledgerV1.FeeOperation> = {
  BREB_OUTFLOW: ledgerV1.FeeOperation.BREB_OUTFLOW,
  ACH_OUTFLOW: ledgerV1.FeeOperation.ACH_OUTFLOW,
  PSE_INFLOW: ledgerV1.FeeOperation.PSE_INFLOW,
  BREB_INFLOW: ledgerV1.FeeOperation.BREB_INFLOW,
};

export function feeOperationToProto(op: ApiFeeOperation): ledgerV1.FeeOperation {
  return FEE_OP_TO_PROTO[op];
}

export function feeConfigToApi(f: ledgerV1.FeeConfig) {
  return {
    operation: enumName(f.operation, 'FEE_OPERATION_'),
    companyId: f.companyId ?? null,
    fixedFeeCents: centsToNumber(f.fixedFeeCents),
    variableBps: f.variableBps,
    updatedAt: formatInstant(f.updatedAt ?? new Date()),
  };
}

/** §2.6 detail: the listing fields plus bank, masked account, memo and the rail's error. */
export function movementDetailToApi(m: ledgerV1.Movement) {
  const d = m.details;
  return {
    ...movementToApi(m),
    bankName: d?.bankName ?? null,
    bankAccountType: d?.bankAccountType ?? null,
    bankAccountNumber: d?.bankAccountNumber ?? null,
    description: d?.description ?? null,
    errorMessage: d?.errorMessage ?? null,
    batchId: d?.batchId ?? null,
  };
}

/** A statement as a file download: `extracto-<rail>-<from>-<to>.<ext>`, the bounds' dates in Bogotá. */
const STATEMENT_TYPES = {
  csv: 'text/csv; charset=utf-8',
  pdf: 'application/pdf',
  sta: 'text/plain; charset=us-ascii',
  xml: 'application/xml; charset=utf-8',
} as const;

export function statementFile(period: { rail: string; from: Instant; to: Instant }, ext: keyof typeof STATEMENT_TYPES, body: unknown) {
  const day = (i: Instant) => bogotaIso(i).slice(0, 10);
  return {
    status: 200,
    body,
    headers: {
      'Content-Type': STATEMENT_TYPES[ext],
      'Content-Disposition': `attachment; filename="extracto-${period.rail}-${day(period.from)}-${day(period.to)}.${ext}"`,
      'Cache-Control': 'private, no-store',
    },
  };
}

/** GET /wallets/alerts (and the dashboard's): both wallets' settings and state. */
export function balanceAlertsToApi(r: ledgerV1.GetBalanceAlertsResponse) {
  return { items: r.alerts.map(balanceAlertSettingsView) };
}

/** GET /wallets/alerts/history (and the dashboard's): a page of crossings, newest first. */
export function balanceAlertPageToApi(r: ledgerV1.ListBalanceAlertEventsResponse) {
  return { items: r.items.map((e) => balanceAlertEventView(balanceAlertCrossingOfRecord(e))), nextCursor: r.nextCursor ?? null, hasMore: r.hasMore };
}
