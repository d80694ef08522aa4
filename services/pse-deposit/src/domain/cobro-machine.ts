/**
 * A cobro's life as ONE table (docs/cobros.md "States"): every way its state moves, who moves it,
 * and the event written with the move. Every writer (the creation call, the matcher of inbound
 * payments, the company's cancel, the sweeper of any replica) applies an event from here with a
 * compare-and-set of the state under the cobro's row lock, with its outbox event in the same
 * transaction: of a payment and the expiry racing for one cobro exactly one wins, and the loser's
 * payment is listed unmatched, never counted against a closed cobro.
 *
 * A cobro moves no money: the payments matched to it were credited by their own sagas (collect-key's
 * inbound payment, the PSE deposit). What follows a close is the dynamic key's deletion at
 * collect-key, run only after the close was won (`key_closed_at` still empty), and retried by the sweeper until
 * done. A PAID cobro keeps its key until `expiresAt`, so a second payment is still matched (and
 * decided by the overpayment policy) rather than held as a payment to a deleted key.
 *
 * PAID is at rest, not final: the provider may reverse a payment it counted (a PSE payment debited back),
 * and the cobro's state then follows its new paid total (`decideReversal`): still PAID, OPEN or PARTIALLY_PAID
 * while it can still be paid (before its expiresAt), EXPIRED once it cannot.
 */
import { exitsOf as tableExits, stateTableMermaid } from '@wallet/platform';
import type { CobroState } from './cobro.js';

/** The `cobro.*` subjects a move writes. */
export type CobroSubject = 'created' | 'partially_paid' | 'paid' | 'expired' | 'cancelled' | 'payment_reversed';

export const COBRO_STATES = ['CREATING', 'OPEN', 'PARTIALLY_PAID', 'PAID', 'EXPIRED', 'CANCELLED', 'ABANDONED'] as const satisfies readonly CobroState[];

/**
 * `creator`: the CreateCobro call (or its retry); `matcher`: the inbound payment consumer (a payment's match, and its provider's
 * reversal); `company`: an API key or dashboard user (cancel, attach by hand).
 */
export type CobroActor = 'creator' | 'matcher' | 'company' | 'sweeper';

export const COBRO_EVENTS = [
  'issued',
  'abandon',
  'partially_paid',
  'paid',
  'expire',
  'cancel',
  'reversed_to_open',
  'reversed_to_partial',
  'reversed_still_paid',
  'reversed_to_expired',
] as const;
export type CobroEvent = (typeof COBRO_EVENTS)[number];

export interface CobroTransition {
  from: readonly CobroState[];
  to: CobroState;
  by: readonly CobroActor[];
  /** The `cobro.*` subject written with the move. */
  emits?: CobroSubject;
  /** The dynamic key is deleted after this move (the sweeper retries until collect-key confirms). */
  closesKey?: 'now' | 'at_expiry';
  why: string;
}

export const COBRO_MACHINE: Readonly<Record<CobroEvent, CobroTransition>> = {
  issued: {
    from: ['CREATING'],
    to: 'OPEN',
    by: ['creator', 'sweeper'],
    emits: 'created',
    why: 'collect-key issued the dynamic key and QR (idempotent on the cobro id): the cobro is shown and payable',
  },
  abandon: {
    from: ['CREATING'],
    to: 'ABANDONED',
    by: ['sweeper'],
    why: 'the key could not be issued before the cobro expired: never shown, its reference is free again',
  },
  partially_paid: {
    from: ['OPEN', 'PARTIALLY_PAID'],
    to: 'PARTIALLY_PAID',
    // company: a payment it attached by hand (POST /cobros/{id}/payments).
    by: ['matcher', 'company'],
    emits: 'partially_paid',
    why: 'a payment received by expiresAt was matched and the total is still short of the amount (or the minimum)',
  },
  paid: {
    from: ['OPEN', 'PARTIALLY_PAID'],
    to: 'PAID',
    by: ['matcher', 'company'],
    emits: 'paid',
    closesKey: 'at_expiry',
    why: 'a payment received by expiresAt completed the amount (an OPEN-amount cobro: its first payment)',
  },
  expire: {
    from: ['OPEN', 'PARTIALLY_PAID'],
    to: 'EXPIRED',
    by: ['sweeper'],
    emits: 'expired',
    closesKey: 'now',
    why: 'expiresAt passed (plus the grace for payments still on their way); what was paid stays credited',
  },
  cancel: {
    from: ['OPEN', 'PARTIALLY_PAID'],
    to: 'CANCELLED',
    by: ['company'],
    emits: 'cancelled',
    closesKey: 'now',
    why: 'the company cancelled it; what was paid stays credited (a return is a separate, explicit act)',
  },
  // ── the provider reversed a payment the cobro counted (a PSE payment debited back: docs/cobros.md "Reversals") ──
  reversed_to_open: {
    from: ['PARTIALLY_PAID', 'PAID'],
    to: 'OPEN',
    by: ['matcher'],
    emits: 'payment_reversed',
    why: 'a counted payment was reversed and no counted payment is left (a PAID one only before its expiresAt): it takes payments again',
  },
  reversed_to_partial: {
    from: ['PARTIALLY_PAID', 'PAID'],
    to: 'PARTIALLY_PAID',
    by: ['matcher'],
    emits: 'payment_reversed',
    why: 'a counted payment was reversed and what is left is short of the amount (a PAID one only before its expiresAt)',
  },
  reversed_still_paid: {
    from: ['PAID'],
    to: 'PAID',
    by: ['matcher'],
    emits: 'payment_reversed',
    why: 'a counted payment was reversed and what is left still completes the amount (a payment beyond it was accepted)',
  },
  reversed_to_expired: {
    from: ['PAID'],
    to: 'EXPIRED',
    by: ['matcher'],
    emits: 'payment_reversed',
    closesKey: 'now',
    why: 'a counted payment of a PAID cobro past its expiresAt was reversed and what is left is short: no payment can complete it any more',
  },
};

export const exitsOf = (s: CobroState): CobroEvent[] => tableExits(COBRO_EVENTS, COBRO_MACHINE, s);

/** The table as a Mermaid state diagram (docs/cobros.md embeds it; a test keeps the two equal). */
export function cobroMachineMermaid(): string {
  return stateTableMermaid({
    events: COBRO_EVENTS,
    table: COBRO_MACHINE,
    entries: [{ to: 'CREATING' }],
    finals: ['EXPIRED', 'CANCELLED', 'ABANDONED'],
    label: (e, t) => `${e} (${t.by.join(', ')})`,
  });
}
