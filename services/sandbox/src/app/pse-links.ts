import { randomBytes } from 'node:crypto';
import type { Database, Logger } from '@wallet/platform';
import { DELIVERY_WINDOW_MS } from '../domain/callbacks.js';
import type { PseCallbackBody, PseCallbackStatus } from '../domain/pse.js';
import { ProviderError } from './errors.js';
import type { FaultSwitches, PseLinkBook, PseLinkRow } from './ports.js';

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

  /** The provider reverses a paid link: REVERSED callback. 404 unknown, 409 LINK_NOT_PAID. */
  async reverse(depositId: string): Promise<PseLinkRow> {
    const link = await this.db.tx(async (tx) => {
      const l = await this.links.lockLink(tx, depositId);
      if (!l) throw linkNotFound();
      if (l.status !== 'PAID') {
        throw new ProviderError(409, 'LINK_NOT_PAID', `Solo un pago aprobado se puede reversar (estado: ${l.status}).`, { status: l.status });
      }
      const done = await this.links.setReversed(tx, depositId);
      await this.links.insertCallback(tx, done, (eventId) => pseCallbackBody(done, 'REVERSED', eventId, done.reversedAt!), DELIVERY_WINDOW_MS);
      return done;
    });
    this.log.info({ depositId }, 'PSE payment reversed');
    this.wake();
    return link;
  }
}
