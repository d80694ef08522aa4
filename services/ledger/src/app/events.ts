import { eventsV1, ledgerV1, walletEventsV1 } from '@wallet/proto';
import type { Entry, PostingKind } from '../domain/postings.js';
import type { WalletRail } from '../domain/rails.js';
import type { OutboxEvent } from './ports.js';
import type { LedgerDeps } from './deps.js';

/** Subjects of the ledger's events (docs/events.md), one per posting kind. */
export const POSTING_SUBJECTS: Readonly<Record<PostingKind, string>> = {
  credit: 'ledger.credited',
  fee_charge: 'ledger.fee_charged',
  reserve: 'ledger.reserved',
  commit: 'ledger.committed',
  release: 'ledger.released',
  inflow: 'ledger.inflow_recorded',
  reversal: 'ledger.inflow_reversed',
  correction: 'ledger.correction_posted',
  // A reconciliation difference accepted by an operator is a correcting entry too (kind tells them apart).
  recon_adjustment: 'ledger.correction_posted',
  // a move between the company's own wallets (docs/wallet-moves.md); its public event is wallet.moved
  move: 'ledger.moved',
};
/** The WALLETS stream's subject for a move (docs/wallet-moves.md, docs/events.md). */
export const WALLET_MOVED_SUBJECT = 'wallet.moved';
export const WALLETS_OPENED_SUBJECT = 'ledger.wallets_opened';

export const protoRail = (r: WalletRail): ledgerV1.Rail => (r === 'BREB' ? ledgerV1.Rail.BREB : ledgerV1.Rail.ACH);

export function postingEvent(
  deps: LedgerDeps,
  p: {
    postingId: string;
    kind: PostingKind;
    companyId: string;
    rail: WalletRail;
    movementId: string | null;
    holdId: string | null;
    entries: Entry[];
    idempotencyKey: string;
  },
): OutboxEvent {
  const id = deps.newId();
  const payload = eventsV1.LedgerPostingRecorded.toJSON({
    eventId: id,
    postingId: p.postingId,
    kind: p.kind,
    companyId: p.companyId,
    rail: protoRail(p.rail),
    movementId: p.movementId ?? undefined,
    holdId: p.holdId ?? undefined,
    entries: p.entries.map((e) => ({ account: e.account, amount: e.amount })),
    occurredAt: deps.now(),
    idempotencyKey: p.idempotencyKey,
  });
  return withTrace(deps, { id, subject: POSTING_SUBJECTS[p.kind], payload });
}

export function walletsOpenedEvent(deps: LedgerDeps, companyId: string, rails: WalletRail[]): OutboxEvent {
  const id = deps.newId();
  const payload = eventsV1.LedgerWalletsOpened.toJSON({ eventId: id, companyId, rails: rails.map(protoRail), occurredAt: deps.now() });
  return withTrace(deps, { id, subject: WALLETS_OPENED_SUBJECT, payload });
}

function withTrace(deps: LedgerDeps, e: OutboxEvent): OutboxEvent {
  const tp = deps.traceparent();
  return tp ? { ...e, traceparent: tp } : e;
}

/** wallet.moved (WALLETS stream): the public event of a move, written in the move's statement. */
export function walletMovedEvent(
  deps: LedgerDeps,
  m: {
    companyId: string;
    moveId: string;
    from: WalletRail;
    to: WalletRail;
    amount: bigint;
    reference: string | null;
    description: string | null;
    debitMovementId: string;
    creditMovementId: string;
    apiKeyId: string | null;
  },
): OutboxEvent {
  const id = deps.newId();
  const payload = walletEventsV1.WalletMoved.toJSON({
    eventId: id,
    companyId: m.companyId,
    moveId: m.moveId,
    fromRail: protoRail(m.from),
    toRail: protoRail(m.to),
    amountCents: m.amount,
    ...(m.reference !== null ? { reference: m.reference } : {}),
    ...(m.description !== null ? { description: m.description } : {}),
    debitMovementId: m.debitMovementId,
    creditMovementId: m.creditMovementId,
    ...(m.apiKeyId !== null ? { apiKeyId: m.apiKeyId } : {}),
    occurredAt: deps.now(),
  });
  // occurredAt: the move's own instant, as its legs' createdAt (microseconds), written by the statement.
  return { ...withTrace(deps, { id, subject: WALLET_MOVED_SUBJECT, payload }), occurredAtOfStatement: true };
}
