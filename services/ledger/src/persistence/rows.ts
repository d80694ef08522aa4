import { centsFromDb, sqlInstant } from '@wallet/platform';
import type { MovementRail, WalletRail } from '../domain/rails.js';
import type { Hold, HoldStatus, Movement, MovementDetails, MovementStatus, MovementType } from '../domain/movements.js';
import type { NewHold, NewMovement, WalletBalance } from '../app/ports.js';

/** A timestamptz as an Instant (ISO 8601 UTC with microseconds, exact, so it can sit in a cursor or be a bound). */
export const isoUs = sqlInstant;

/** Movement columns; bigints as text so no JSON round trip loses precision. */
export function movementCols(a = ''): string {
  const c = (x: string) => `${a}${x}`;
  return `${c('id')}::text as id, ${c('company_id')} as company_id, ${c('type')} as type, ${c('rail')} as rail,
    ${c('wallet_rail')} as wallet_rail, ${c('status')} as status, ${c('amount')}::text as amount,
    ${c('total_fee')}::text as total_fee, ${c('iva_amount')}::text as iva_amount, ${c('net_amount')}::text as net_amount,
    ${c('reference')} as reference, ${c('api_key_id')} as api_key_id, ${c('details')} as details,
    ${isoUs(c('created_at'))} as created_at, ${isoUs(c('completed_at'))} as completed_at, ${c('move_id')}::text as move_id`;
}

export function holdCols(a = ''): string {
  const c = (x: string) => `${a}${x}`;
  return `${c('id')}::text as id, ${c('company_id')} as company_id, ${c('rail')} as rail, ${c('status')} as status,
    ${c('amount')}::text as amount, ${c('fee')}::text as fee, ${c('iva')}::text as iva, ${c('total')}::text as total,
    ${c('fixed_fee')}::text as fixed_fee, ${c('movement_id')}::text as movement_id, ${isoUs(c('created_at'))} as created_at, ${isoUs(c('closed_at'))} as closed_at,
    ${c('return_of')}::text as return_of, ${c('return_account')} as return_account`;
}

export interface MovementRow {
  id: string;
  company_id: string;
  type: string;
  rail: string;
  wallet_rail: string;
  status: string;
  amount: string;
  total_fee: string;
  iva_amount: string;
  net_amount: string;
  reference: string | null;
  api_key_id: string | null;
  details: MovementDetails | string | null;
  created_at: string;
  completed_at: string | null;
  move_id?: string | null;
}

export interface HoldRow {
  id: string;
  company_id: string;
  rail: string;
  status: string;
  amount: string;
  fee: string;
  iva: string;
  total: string;
  fixed_fee: string | null;
  movement_id: string;
  created_at: string;
  closed_at: string | null;
  return_of?: string | null;
  return_account?: string | null;
}

export interface WalletRow {
  company_id: string;
  rail: string;
  available_cents: string;
  pending_out_cents: string;
  version: string;
}

export function toMovement(r: MovementRow): Movement {
  const details = typeof r.details === 'string' ? (JSON.parse(r.details) as MovementDetails) : (r.details ?? {});
  return {
    id: r.id,
    companyId: r.company_id,
    type: r.type as MovementType,
    rail: r.rail as MovementRail,
    walletRail: r.wallet_rail as WalletRail,
    status: r.status as MovementStatus,
    amount: centsFromDb(r.amount),
    totalFee: centsFromDb(r.total_fee),
    ivaAmount: centsFromDb(r.iva_amount),
    netAmount: centsFromDb(r.net_amount),
    reference: r.reference,
    apiKeyId: r.api_key_id,
    details,
    createdAt: r.created_at,
    completedAt: r.completed_at ?? null,
    walletMoveId: r.move_id ?? null,
  };
}

export function toHold(r: HoldRow): Hold {
  return {
    id: r.id,
    companyId: r.company_id,
    rail: r.rail as WalletRail,
    status: r.status as HoldStatus,
    amount: centsFromDb(r.amount),
    fee: centsFromDb(r.fee),
    iva: centsFromDb(r.iva),
    total: centsFromDb(r.total),
    fixedFee: r.fixed_fee === null || r.fixed_fee === undefined ? null : centsFromDb(r.fixed_fee),
    movementId: r.movement_id,
    createdAt: new Date(r.created_at),
    closedAt: r.closed_at ? new Date(r.closed_at) : null,
    returnOf: r.return_of ?? null,
    returnAccount: r.return_account ?? null,
  };
}

export function toWallet(r: WalletRow): WalletBalance {
  return {
    companyId: r.company_id,
    rail: r.rail as WalletRail,
    availableCents: centsFromDb(r.available_cents),
    pendingOutCents: centsFromDb(r.pending_out_cents),
    version: centsFromDb(r.version),
  };
}

/** A movement as the posting statement inserted it (its timestamps are the statement's now()). */
export function insertedMovement(m: NewMovement, now: string): Movement {
  return {
    id: m.id,
    companyId: m.companyId,
    type: m.type,
    rail: m.rail,
    walletRail: m.walletRail,
    status: m.status,
    amount: m.amount,
    totalFee: m.totalFee,
    ivaAmount: m.ivaAmount,
    netAmount: m.netAmount,
    reference: m.reference,
    apiKeyId: m.apiKeyId,
    details: m.details,
    createdAt: now,
    completedAt: m.completed ? now : null,
    walletMoveId: m.walletMoveId ?? null,
  };
}

export function insertedHold(h: NewHold, now: string): Hold {
  return {
    id: h.id,
    companyId: h.companyId,
    rail: h.rail,
    status: 'OPEN',
    amount: h.amount,
    fee: h.fee,
    iva: h.iva,
    total: h.total,
    fixedFee: h.fixedFee,
    movementId: h.movementId,
    createdAt: new Date(now),
    closedAt: null,
    returnOf: h.returnOf ?? null,
    returnAccount: h.returnAccount ?? null,
  };
}
