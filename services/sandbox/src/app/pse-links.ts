import { randomBytes } from 'node:crypto';
import type { Database, Logger } from '@wallet/platform';
import { DELIVERY_WINDOW_MS } from '../domain/callbacks.js';
import type { PseCallbackBody, PseCallbackStatus } from '../domain/pse.js';
import { ProviderError } from './errors.js';
import type { FaultSwitches, PseLinkBook, PseLinkRow, PseRefundRow } from './ports.js';

export interface NewLinkRequest {
  depositId: string;
  amountCents: bigint;
  companyName: string;
  payerName: string;
  payerEmail: string;
  description: string | null;
  expiresAt: string;
  callbackUrl: string;
}

export const linkNotFound = () => new ProviderError(404, 'LINK_NOT_FOUND', 'No existe un enlace de pago PSE para ese depósito.');
export const linkExpired = () => new ProviderError(409, 'LINK_EXPIRED', 'El enlace de pago venció: ya no se puede pagar.');
export const alreadyFinal = (status: string) => new ProviderError(409, 'ALREADY_FINAL', `El pago ya tiene un resultado (${status}).`, { status });

export const pseDown = () => new ProviderError(503, 'SERVICE_UNAVAILABLE', 'La pasarela PSE no está disponible.');
export const refundIdTaken = () => new ProviderError(409, 'ALREADY_REFUNDED', 'El refundId ya se usó para otro reembolso (otro depósito o otro valor).');
export const linkRefunded = () => new ProviderError(409, 'ALREADY_REFUNDED', 'El pago tiene reembolsos: ya no se puede reversar.');
export const notPaid = (link: Pick<PseLinkRow, 'status' | 'expired'>) => {
  const state = link.status === 'PENDING' && link.expired ? 'EXPIRED' : link.status;
  return new ProviderError(409, 'NOT_PAID', `Solo un pago aprobado se puede reembolsar (estado: ${state}).`, { status: state });
};
export const refundExceedsPayment = (remainingCents: bigint) =>
  new ProviderError(
    409,
    'REFUND_EXCEEDS_PAYMENT',
    remainingCents > 0n
      ? `El reembolso supera el saldo por reembolsar del pago (quedan ${remainingCents} centavos).`
      : 'El pago ya fue reembolsado por completo.',
    { remainingCents: Number(remainingCents) },
  );

export interface RefundRequest {
  refundId: string;
  depositId: string;
  amountCents: bigint;
}

/** The callback body of a link's event, serialized once so every delivery sends the same bytes. */
export function pseCallbackBody(link: PseLinkRow, status: PseCallbackStatus, eventId: string, occurredAt: string): string {
  const body: PseCallbackBody = {
    eventId,
    depositId: link.depositId,
    providerTransferId: link.providerTransferId,
    status,
    ...(link.payerBank ? { payerBank: link.payerBank } : {}),
    ...(link.paidAt ? { paidAt: link.paidAt } : {}),
    occurredAt,
  };
  return JSON.stringify(body);
}

/**
 * The PSE gateway's link book: create (idempotent on depositId), the payer's decision (pay or
 * reject, once, before expiry) and the provider's reversal of a paid link. Each outcome is
 * written with its signed callback in one transaction; the dispatcher delivers it.
 */
export class PseLinks {
  constructor(
    private readonly db: Database,
    private readonly store: FaultSwitches,
    private readonly links: PseLinkBook,
    private readonly publicUrl: () => string,
    private readonly wake: () => void,
    private readonly log: Logger,
  ) {}

  payUrl(depositId: string): string {
    return `${this.publicUrl().replace(/\/+$/, '')}/pse/pay/${encodeURIComponent(depositId)}`;
  }

  async create(r: NewLinkRequest): Promise<{ link: PseLinkRow; created: boolean }> {
    if ((await this.store.fault('pse')) === 'down') {
      throw new ProviderError(502, 'PSE_PROVIDER_ERROR', 'La pasarela PSE no respondió. Intente de nuevo más tarde.');
    }
    const out = await this.links.insertLink({
      ...r,
      linkId: `lnk_${randomBytes(12).toString('hex')}`,
      providerTransferId: `pse_${randomBytes(12).toString('hex')}`,
    });
    if (!out.created && out.link.amountCents !== r.amountCents) {
      throw new ProviderError(409, 'DEPOSIT_ID_CONFLICT', 'Ya existe un enlace de pago para ese depósito con otro monto.', { linkId: out.link.linkId });
    }
    if (out.created) this.log.info({ depositId: r.depositId, linkId: out.link.linkId }, 'PSE link created');
    return out;
  }

  async get(depositId: string): Promise<PseLinkRow | undefined> {
    return this.links.findLink(depositId);
  }

  /** The payer's decision: PAID or FAILED with its callback. 404 unknown, 409 ALREADY_FINAL / LINK_EXPIRED. */
  async decide(depositId: string, outcome: 'APPROVED' | 'REJECTED', payerBank: string | null): Promise<PseLinkRow> {
    const link = await this.db.tx(async (tx) => {
      const l = await this.links.lockLink(tx, depositId);
      if (!l) throw linkNotFound();
      if (l.status !== 'PENDING') throw alreadyFinal(l.status);
      if (l.expired) throw linkExpired();
      const status = outcome === 'APPROVED' ? 'PAID' : 'FAILED';
      const done = await this.links.setOutcome(tx, depositId, status, payerBank);
      await this.links.insertCallback(tx, done, (eventId) => pseCallbackBody(done, status, eventId, done.outcomeAt!), DELIVERY_WINDOW_MS);
      return done;
    });
    this.log.info({ depositId, status: link.status, payerBank }, 'PSE payment decided');
    this.wake();
    return link;
  }

  /**
   * The product refunds all or part of a paid link to its payer, as many times as it likes while the
   * refunds' sum stays within the paid amount. Each refund is recorded under the product's
   * `refundId`: the same id again with the same link and amount answers the same refund (replayed);
   * with other terms → 409 ALREADY_REFUNDED. An unknown link → 404 LINK_NOT_FOUND; a link not paid
   * (pending, expired, failed, reversed) → 409 NOT_PAID; past the paid amount → 409
   * REFUND_EXCEEDS_PAYMENT; `pse: down` → 503. Decided under the link's row lock, so two refunds
   * racing for its last peso cannot both pass. No callback: the answer is the outcome.
   */
  async refund(r: RefundRequest): Promise<{ refund: PseRefundRow; providerTransferId: string; replayed: boolean }> {
    if ((await this.store.fault('pse')) === 'down') throw pseDown();
    const sameTerms = (x: PseRefundRow) => x.depositId === r.depositId && x.amountCents === r.amountCents;
    const out = await this.db.tx(async (tx) => {
      const link = await this.links.lockLink(tx, r.depositId);
      if (!link) throw linkNotFound();
      const existing = await this.links.findRefund(tx, r.refundId);
      if (existing) {
        if (!sameTerms(existing)) throw refundIdTaken();
        return { refund: existing, link, replayed: true };
      }
      if (link.status !== 'PAID') throw notPaid(link);
      const refunded = await this.links.refundedCents(tx, r.depositId);
      if (refunded + r.amountCents > link.amountCents) throw refundExceedsPayment(link.amountCents - refunded);
      const row = await this.links.insertRefund(tx, r);
      if (row) return { refund: row, link, replayed: false };
      // Another request took the id meanwhile (for another link: one for this link waits for the lock).
      const raced = await this.links.findRefund(tx, r.refundId);
      if (!raced || !sameTerms(raced)) throw refundIdTaken();
      return { refund: raced, link, replayed: true };
    });
    if (!out.replayed) {
      this.log.info({ depositId: r.depositId, refundId: r.refundId, amountCents: r.amountCents.toString() }, 'PSE payment refunded to the payer');
    }
    return { refund: out.refund, providerTransferId: out.link.providerTransferId, replayed: out.replayed };
  }

  /** The provider reverses a paid link: REVERSED callback. 404 unknown, 409 LINK_NOT_PAID, 409 ALREADY_REFUNDED (the link has a refund). */
  async reverse(depositId: string): Promise<PseLinkRow> {
    const link = await this.db.tx(async (tx) => {
      const l = await this.links.lockLink(tx, depositId);
      if (!l) throw linkNotFound();
      if (l.status !== 'PAID') {
        throw new ProviderError(409, 'LINK_NOT_PAID', `Solo un pago aprobado se puede reversar (estado: ${l.status}).`, { status: l.status });
      }
      // A gateway does not reverse a payment it already refunded (in part or in full): the payer would get the money twice.
      if ((await this.links.refundedCents(tx, depositId)) > 0n) throw linkRefunded();
      const done = await this.links.setReversed(tx, depositId);
      await this.links.insertCallback(tx, done, (eventId) => pseCallbackBody(done, 'REVERSED', eventId, done.reversedAt!), DELIVERY_WINDOW_MS);
      return done;
    });
    this.log.info({ depositId }, 'PSE payment reversed');
    this.wake();
    return link;
  }
}
