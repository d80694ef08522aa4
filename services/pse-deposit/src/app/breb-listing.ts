import type { BatchEventHandler, EventHandler, Logger, ReceivedEvent, SqlTx } from '@wallet/platform';
import { readBrebDepositEvent, readPsePaidEvent, readReturnedEvent, readReversedEvent, type BrebDeposit } from '../domain/breb-deposit.js';
import type { BrebListing, BrebUpsertOutcome } from './ports.js';
import type { InboundPayment, PaymentReturned, PaymentReversed } from './cobro-ports.js';

/** Matches one credited payment to a cobro inside the listing's transaction (app/cobros.ts `cobroMatcher`). */
export type CobroMatcher = (tx: SqlTx, p: InboundPayment) => Promise<unknown>;
/** Matches a page of credited payments, in order, as one by one would (app/cobros.ts `cobroPageMatcher`). */
export type CobroPageMatcher = (tx: SqlTx, ps: InboundPayment[]) => Promise<unknown>;
/** Takes a payment's return off its cobro (app/cobros.ts `cobroReturnApplier`). */
export type CobroReturnApplier = (tx: SqlTx, r: PaymentReturned) => Promise<unknown>;
/** Takes a provider's reversal of a payment off its cobro (app/cobros.ts `cobroReversalApplier`). */
export type CobroReversalApplier = (tx: SqlTx, r: PaymentReversed) => Promise<unknown>;

/** The durable consumer (on `deposit.>` of DEPOSITS; NATS 2.9 takes one filter subject) feeding the listing. */
export const BREB_LISTING_CONSUMER = 'pse-deposit-listing';
export const BREB_LISTING_SUBJECT = 'deposit.>';

/** What one event is to the listing: a credited PSE payment of this service (to match only), a Bre-B deposit to list, or nothing. */
type Item =
  | { kind: 'pse'; payment: InboundPayment }
  | { kind: 'breb'; d: BrebDeposit }
  | { kind: 'returned'; r: PaymentReturned }
  | { kind: 'reversed'; r: PaymentReversed }
  | { kind: 'skip' };

function read(evt: ReceivedEvent, log: Logger, now: Date, matching: boolean): Item {
  // A return of a deposit (docs/returns.md) carries the return, not the deposit: not a listing change,
  // but one that reached the payer comes off the payment's cobro.
  if (evt.subject === 'deposit.returned') {
    const r = matching ? readReturnedEvent(evt.payload) : null;
    if (r) return { kind: 'returned', r };
    if (matching) log.warn({ eventId: evt.id, subject: evt.subject }, 'deposit return event not usable; not applied to cobros');
    return { kind: 'skip' };
  }
  if (evt.subject === 'deposit.return_failed') return { kind: 'skip' };
  // A payment this service credited and its provider reversed (PSE: debited back): not listed from events, but
  // taken off its cobro. A Bre-B deposit's reversal is listed below, and taken off its cobro after that.
  const reversed = matching ? readReversedEvent(evt.subject, evt.payload, now) : null;
  if (reversed && !isBrebEvent(evt.payload)) return { kind: 'reversed', r: reversed };
  // This service's own PSE payments are not listed from events (they are its rows already), but a
  // credited one is matched to its cobro here, as every inbound payment is: one matching path.
  const psePaid = matching ? readPsePaidEvent(evt.subject, evt.payload, now) : null;
  if (psePaid) {
    return {
      kind: 'pse',
      payment: {
        depositId: psePaid.id,
        companyId: psePaid.companyId,
        source: 'PSE',
        amount: psePaid.amount,
        netAmount: psePaid.net,
        payerName: psePaid.payerName,
        payerDocument: psePaid.payerDocument,
        receivedAt: psePaid.paidAt,
        transactionId: null,
        cobroId: psePaid.cobroId,
        reference: psePaid.reference,
      },
    };
  }
  const decision = readBrebDepositEvent(evt.payload, now);
  if (decision.kind === 'ignore') {
    if (decision.level !== 'debug') log[decision.level]({ eventId: evt.id, subject: evt.subject, reason: decision.reason }, 'deposit event not listed');
    return { kind: 'skip' };
  }
  return { kind: 'breb', d: decision.deposit };
}

/** Whether a deposit event is about a Bre-B deposit (listed from its events). */
const isBrebEvent = (payload: unknown): boolean => (payload as { deposit?: { source?: unknown } } | null)?.deposit?.source === 'BREB';

/** A listed Bre-B deposit's reversal (REVERSED), as the reversal applier sees it. */
const brebReversal = (d: BrebDeposit): PaymentReversed => ({ depositId: d.id, companyId: d.companyId, amount: d.amount, reversedAt: d.eventAt });

/** A listed Bre-B deposit credited to the company (ASSIGNED), as the matcher sees it. */
const brebPayment = (d: BrebDeposit): InboundPayment => ({
  depositId: d.id,
  companyId: d.companyId,
  source: 'BREB',
  amount: d.amount,
  netAmount: d.net,
  payerName: d.payerName,
  payerDocument: d.payerDocument,
  receivedAt: d.providerConfirmedAt ?? d.createdAt,
  transactionId: d.transactionId,
  cobroId: d.cobroId,
  reference: null,
});

/** The log line of a listing write; an 'unchanged' one reads why (a clash with another deposit is an error). */
async function logListing(listing: BrebListing, log: Logger, tx: SqlTx, evt: ReceivedEvent, d: BrebDeposit, outcome: BrebUpsertOutcome): Promise<void> {
  if (outcome !== 'unchanged') {
    log.info({ eventId: evt.id, depositId: d.id, companyId: d.companyId, status: d.status, outcome }, 'Bre-B deposit listed');
    return;
  }
  const stored = await listing.storedState(tx, d.id);
  if (stored && (stored.source !== 'BREB' || stored.company_id !== d.companyId)) {
    log.error({ eventId: evt.id, depositId: d.id, storedSource: stored.source }, 'Bre-B deposit id clashes with another deposit; not listed');
  } else {
    log.debug({ eventId: evt.id, depositId: d.id, status: d.status, storedStatus: stored?.status }, 'Bre-B deposit event changed nothing (repeat or older)');
  }
}

/**
 * Copies the collect-key service's Bre-B deposits (`deposit.paid` / `deposit.unassigned`, source
 * BREB) into the listing table inside the InboxConsumer's transaction (inbox row + upsert commit
 * together, so a redelivered event id is only acknowledged). Everything else on the stream — this
 * service's own PSE events, unusable payloads — is acknowledged and dropped (logged). A database
 * failure throws, so the event is redelivered. A payment credited to the company (ASSIGNED) is
 * matched to its cobro in this same transaction: listed and matched together, or neither.
 */
export function brebListingHandler(
  listing: BrebListing,
  log: Logger,
  now: () => Date = () => new Date(),
  matcher?: CobroMatcher,
  returned?: CobroReturnApplier,
  reversed?: CobroReversalApplier,
): EventHandler {
  return async (evt, tx) => {
    const item = read(evt, log, now(), matcher !== undefined);
    if (item.kind === 'pse') await matcher?.(tx, item.payment);
    if (item.kind === 'returned') await returned?.(tx, item.r);
    if (item.kind === 'reversed') await reversed?.(tx, item.r);
    if (item.kind !== 'breb') return;
    const outcome = await listing.upsert(tx, item.d, evt.id);
    await logListing(listing, log, tx, evt, item.d, outcome);
    if (matcher && outcome !== 'unchanged' && item.d.status === 'ASSIGNED') await matcher(tx, brebPayment(item.d));
    if (matcher && item.d.status === 'REVERSED') await reversed?.(tx, brebReversal(item.d));
  };
}

/**
 * The same for the InboxConsumer's page of fresh events, with the same result as `brebListingHandler`
 * applied to each in order: the page's Bre-B deposits listed with one statement (upsertMany), then its
 * credited payments (PSE and Bre-B, in event order) matched together (CobroPageMatcher), then its
 * returns taken off their cobros (a return follows its payment in the stream). A page that
 * names one deposit twice, or that has a reversal, is applied event by event. Each
 * payment carries its event's trace context, so the cobro event it causes continues that trace.
 */
export function brebListingPageHandler(
  listing: BrebListing,
  log: Logger,
  now: () => Date = () => new Date(),
  matchers?: { one: CobroMatcher; page: CobroPageMatcher; returned: CobroReturnApplier; reversed?: CobroReversalApplier },
): BatchEventHandler {
  const single = brebListingHandler(listing, log, now, matchers?.one, matchers?.returned, matchers?.reversed);
  return async (evts, tx) => {
    const at = now();
    const items = evts.map((evt) => ({ evt, item: read(evt, log, at, matchers !== undefined) }));
    const ids = items.flatMap(({ item }) =>
      item.kind === 'pse' ? [item.payment.depositId] : item.kind === 'breb' ? [item.d.id] : item.kind === 'reversed' ? [item.r.depositId] : [],
    );
    // A page that names one deposit twice is applied event by event (one row is written once per statement); so is one
    // with a reversal (rare): it changes a cobro's state, which the page's later payments must be decided on, in order.
    const reversal = items.some(({ item }) => item.kind === 'reversed' || (item.kind === 'breb' && item.d.status === 'REVERSED'));
    if (new Set(ids).size !== ids.length || (reversal && matchers?.reversed)) {
      for (const evt of evts) await single(evt, tx);
      return;
    }
    const brebs = items.flatMap(({ evt, item }) => (item.kind === 'breb' ? [{ d: item.d, eventId: evt.id }] : []));
    const outcomes = await listing.upsertMany(tx, brebs);
    const payments: InboundPayment[] = [];
    for (const { evt, item } of items) {
      if (item.kind === 'pse') payments.push({ ...item.payment, traceparent: evt.traceparent });
      if (item.kind !== 'breb') continue;
      const outcome = outcomes.get(item.d.id) ?? 'unchanged';
      await logListing(listing, log, tx, evt, item.d, outcome);
      if (outcome !== 'unchanged' && item.d.status === 'ASSIGNED') payments.push({ ...brebPayment(item.d), traceparent: evt.traceparent });
    }
    if (matchers && payments.length > 0) await matchers.page(tx, payments);
    // After the page's matches: a return follows its payment in the stream.
    for (const { item } of items) if (item.kind === 'returned') await matchers?.returned(tx, item.r);
  };
}
