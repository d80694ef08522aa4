import { centsToNumber } from '../money/money.js';
import { formatInstant, parseInstant, type Instant } from '../time/instant.js';
import { ledgerV1, type walletEventsV1 } from '@wallet/proto';

/** What a move between a company's own wallets is (docs/wallet-moves.md), whichever message told it. */
export interface WalletMove {
  id: string;
  fromRail: ledgerV1.Rail;
  toRail: ledgerV1.Rail;
  amountCents: bigint;
  reference: string | undefined;
  description: string | undefined;
  debitTransactionId: string;
  creditTransactionId: string;
  /** The posting's instant, at the journal's microsecond precision. */
  createdAt: Instant;
}

const WALLET_RAILS: Partial<Record<ledgerV1.Rail, 'BREB' | 'ACH'>> = { [ledgerV1.Rail.BREB]: 'BREB', [ledgerV1.Rail.ACH]: 'ACH' };

function walletRail(r: ledgerV1.Rail): 'BREB' | 'ACH' {
  const rail = WALLET_RAILS[r];
  if (!rail) throw new Error(`a move names a wallet by BREB or ACH, not ${String(r)}`);
  return rail;
}

/** Empty strings mean "not given" (proto3 cannot tell them apart on every client). */
const text = (s: string | undefined) => (s === undefined || s === '' ? null : s);

/**
 * A move as the API shows it (the gateway's WalletMoveSchema: POST /wallets/moves, GET
 * /wallets/moves/{id}) and as the `wallet.moved` webhook carries it: the ONE builder of both.
 */
export function walletMoveView(m: WalletMove) {
  return {
    id: m.id,
    from: walletRail(m.fromRail),
    to: walletRail(m.toRail),
    amountCents: centsToNumber(m.amountCents),
    status: 'COMPLETED' as const,
    reference: text(m.reference),
    description: text(m.description),
    debitTransactionId: m.debitTransactionId,
    creditTransactionId: m.creditTransactionId,
    createdAt: formatInstant(m.createdAt),
  };
}

/** The ledger's answer to Move / GetMove: both legs, the debit's instant is the posting's. */
export function walletMoveOfResult(r: ledgerV1.MoveResult): WalletMove {
  const { debit, credit } = r;
  if (!debit || !credit) throw new Error(`move ${r.moveId} without its two legs`);
  return {
    id: r.moveId,
    fromRail: debit.rail,
    toRail: credit.rail,
    amountCents: debit.amount,
    reference: debit.reference,
    description: debit.details?.description,
    debitTransactionId: debit.id,
    creditTransactionId: credit.id,
    createdAt: debit.createdAt,
  };
}

/**
 * The `wallet.moved` event. `occurredAt` as the payload wrote it (proto3 JSON, RFC 3339): decoded,
 * a Timestamp becomes a millisecond `Date`, so the text is read when there is one to keep the
 * microseconds the API answers.
 */
export function walletMoveOfEvent(e: walletEventsV1.WalletMoved, occurredAtText?: unknown): WalletMove {
  const exact = typeof occurredAtText === 'string' ? parseInstant(occurredAtText) : null;
  return {
    id: e.moveId,
    fromRail: e.fromRail,
    toRail: e.toRail,
    amountCents: e.amountCents,
    reference: e.reference,
    description: e.description,
    debitTransactionId: e.debitMovementId,
    creditTransactionId: e.creditMovementId,
    createdAt: exact ?? formatInstant(e.occurredAt ?? new Date(0)),
  };
}
