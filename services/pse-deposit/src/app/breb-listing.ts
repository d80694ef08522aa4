import type { EventHandler, Logger, SqlTx } from '@wallet/platform';
import { readBrebDepositEvent, readPsePaidEvent } from '../domain/breb-deposit.js';
import type { BrebListing } from './ports.js';
import type { InboundPayment } from './cobro-ports.js';

/** Matches one credited payment to a cobro inside the listing's transaction (app/cobros.ts `matchPayment`). */
export type CobroMatcher = (tx: SqlTx, p: InboundPayment) => Promise<unknown>;

/** The durable consumer (on `deposit.>` of DEPOSITS; NATS 2.9 takes one filter subject) feeding the listing. */
export const BREB_LISTING_CONSUMER = 'pse-deposit-listing';
export const BREB_LISTING_SUBJECT = 'deposit.>';

/**
 * Copies the collect-key service's Bre-B deposits (`deposit.paid` / `deposit.unassigned`, source
 * BREB) into the listing table inside the InboxConsumer's transaction (inbox row + upsert commit
 * together, so a redelivered event id is only acknowledged). Everything else on the stream — this
 * service's own PSE events, unusable payloads — is acknowledged and dropped (logged). A database
 * failure throws, so the event is redelivered.
 */
export function brebListingHandler(listing: BrebListing, log: Logger, now: () => Date = () => new Date(), matcher?: CobroMatcher): EventHandler {
  return async (evt, tx) => {
    // A return of a deposit (docs/returns.md) carries the return, not the deposit: not a listing change.
    if (evt.subject === 'deposit.returned' || evt.subject === 'deposit.return_failed') return;
    // This service's own PSE payments are not listed from events (they are its rows already), but a
    // credited one is matched to its cobro here, as every inbound payment is: one matching path.
    const psePaid = matcher ? readPsePaidEvent(evt.subject, evt.payload, now()) : null;
    if (psePaid && matcher) {
      await matcher(tx, {
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
      });
      return;
    }
    const decision = readBrebDepositEvent(evt.payload, now());
    if (decision.kind === 'ignore') {
      if (decision.level !== 'debug') log[decision.level]({ eventId: evt.id, subject: evt.subject, reason: decision.reason }, 'deposit event not listed');
      return;
    }
    const d = decision.deposit;
    const outcome = await listing.upsert(tx, d, evt.id);
    if (outcome === 'unchanged') {
      const stored = await listing.storedState(tx, d.id);
      if (stored && (stored.source !== 'BREB' || stored.company_id !== d.companyId)) {
        log.error({ eventId: evt.id, depositId: d.id, storedSource: stored.source }, 'Bre-B deposit id clashes with another deposit; not listed');
      } else {
        log.debug(
          { eventId: evt.id, depositId: d.id, status: d.status, storedStatus: stored?.status },
          'Bre-B deposit event changed nothing (repeat or older)',
        );
      }
      return;
    }
    log.info({ eventId: evt.id, depositId: d.id, companyId: d.companyId, status: d.status, outcome }, 'Bre-B deposit listed');
    // A payment credited to the company (ASSIGNED) is matched to its cobro in this same transaction:
    // listed and matched together, or neither (the event is redelivered).
    if (matcher && d.status === 'ASSIGNED') {
      await matcher(tx, {
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
    }
  };
}
