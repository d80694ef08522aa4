import { randomUUID } from 'node:crypto';
import type { Database, Tx } from '@wallet/platform';
import type { PseStatus } from '../domain/pse.js';
import type { NewPseLink, PseLinkBook, PseLinkRow, PseRefundRow } from '../app/ports.js';

/** The PSE gateway's SQL: payment links and their outcome callbacks (times from the database clock). */

interface RawLink {
  link_id: string;
  deposit_id: string;
  provider_transfer_id: string;
  amount_cents: string;
  company_name: string;
  payer_name: string;
  payer_email: string;
  description: string | null;
  expires_at: string;
  callback_url: string;
  status: PseStatus;
  payer_bank: string | null;
  paid_at: string | null;
  outcome_at: string | null;
  reversed_at: string | null;
  expired: boolean;
}

const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${col}`;
const LINK_COLS = `link_id, deposit_id, provider_transfer_id, amount_cents::text as amount_cents, company_name, payer_name, payer_email,
  description, ${iso('expires_at')}, callback_url, status, payer_bank, ${iso('paid_at')}, ${iso('outcome_at')}, ${iso('reversed_at')},
  (expires_at <= clock_timestamp()) as expired`;

function toLink(r: RawLink): PseLinkRow {
  return {
    linkId: r.link_id,
    depositId: r.deposit_id,
    providerTransferId: r.provider_transfer_id,
    amountCents: BigInt(r.amount_cents),
    companyName: r.company_name,
    payerName: r.payer_name,
    payerEmail: r.payer_email,
    description: r.description,
    expiresAt: r.expires_at,
    callbackUrl: r.callback_url,
    status: r.status,
    payerBank: r.payer_bank,
    paidAt: r.paid_at,
    outcomeAt: r.outcome_at,
    reversedAt: r.reversed_at,
    expired: r.expired === true || (r.expired as unknown) === 't',
  };
}

interface RawRefund {
  refund_id: string;
  deposit_id: string;
  amount_cents: string;
  refunded_at: string;
}
const REFUND_COLS = `refund_id, deposit_id, amount_cents::text as amount_cents, ${iso('refunded_at')}`;
const toRefund = (r: RawRefund): PseRefundRow => ({
  refundId: r.refund_id,
  depositId: r.deposit_id,
  amountCents: BigInt(r.amount_cents),
  refundedAt: r.refunded_at,
});

export class PseStore implements PseLinkBook {
  constructor(private readonly db: Database) {}

  /** Inserts the link unless its depositId is known; returns the stored row and whether it is new. */
  async insertLink(l: NewPseLink): Promise<{ link: PseLinkRow; created: boolean }> {
    const [inserted] = await this.db.query<RawLink>(
      `insert into sandbox.pse_links (link_id, deposit_id, provider_transfer_id, amount_cents, company_name, payer_name, payer_email,
         description, expires_at, callback_url)
       values (?, ?, ?, ?::bigint, ?, ?, ?, ?, ?::timestamptz, ?)
       on conflict (deposit_id) do nothing
       returning ${LINK_COLS}`,
      [
        l.linkId,
        l.depositId,
        l.providerTransferId,
        l.amountCents.toString(),
        l.companyName,
        l.payerName,
        l.payerEmail,
        l.description,
        l.expiresAt,
        l.callbackUrl,
      ],
    );
    if (inserted) return { link: toLink(inserted), created: true };
    const existing = await this.findLink(l.depositId);
    if (!existing) throw new Error(`PSE link ${l.depositId} vanished after a conflicting insert`);
    return { link: existing, created: false };
  }

  async findLink(depositId: string): Promise<PseLinkRow | undefined> {
    const [r] = await this.db.query<RawLink>(`select ${LINK_COLS} from sandbox.pse_links where deposit_id = ?`, [depositId]);
    return r ? toLink(r) : undefined;
  }

  async lockLink(tx: Tx, depositId: string): Promise<PseLinkRow | undefined> {
    const r = await tx.one<RawLink>(`select ${LINK_COLS} from sandbox.pse_links where deposit_id = ? for update`, [depositId]);
    return r ? toLink(r) : undefined;
  }

  /** Records a payer's outcome on a locked pending link. */
  async setOutcome(tx: Tx, depositId: string, status: 'PAID' | 'FAILED', payerBank: string | null): Promise<PseLinkRow> {
    const r = await tx.one<RawLink>(
      `update sandbox.pse_links set status = ?, payer_bank = ?, outcome_at = clock_timestamp(),
              paid_at = case when ? = 'PAID' then clock_timestamp() end
        where deposit_id = ? and status = 'PENDING' returning ${LINK_COLS}`,
      [status, payerBank, status, depositId],
    );
    if (!r) throw new Error(`PSE link ${depositId} is not pending`);
    return toLink(r);
  }

  async setReversed(tx: Tx, depositId: string): Promise<PseLinkRow> {
    const r = await tx.one<RawLink>(
      `update sandbox.pse_links set status = 'REVERSED', reversed_at = clock_timestamp()
        where deposit_id = ? and status = 'PAID' returning ${LINK_COLS}`,
      [depositId],
    );
    if (!r) throw new Error(`PSE link ${depositId} is not paid`);
    return toLink(r);
  }

  async findRefund(tx: Tx, refundId: string): Promise<PseRefundRow | undefined> {
    const r = await tx.one<RawRefund>(`select ${REFUND_COLS} from sandbox.pse_refunds where refund_id = ?`, [refundId]);
    return r ? toRefund(r) : undefined;
  }

  async refundedCents(tx: Tx, depositId: string): Promise<bigint> {
    const r = await tx.one<{ sum: string }>(`select coalesce(sum(amount_cents), 0)::text as sum from sandbox.pse_refunds where deposit_id = ?`, [depositId]);
    return BigInt(r?.sum ?? '0');
  }

  /** Inserts the refund (undefined when a racing request took its id first). */
  async insertRefund(tx: Tx, r: { refundId: string; depositId: string; amountCents: bigint }): Promise<PseRefundRow | undefined> {
    const row = await tx.one<RawRefund>(
      `insert into sandbox.pse_refunds (refund_id, deposit_id, amount_cents) values (?, ?, ?::bigint)
       on conflict (refund_id) do nothing returning ${REFUND_COLS}`,
      [r.refundId, r.depositId, r.amountCents.toString()],
    );
    return row ? toRefund(row) : undefined;
  }

  /**
   * Schedules a callback (due now) for the link, numbered after the link's earlier ones, in the
   * caller's transaction (which holds the link's lock); returns its eventId.
   */
  async insertCallback(tx: Tx, link: PseLinkRow, body: (eventId: string) => string, deliveryWindowMs: number): Promise<string> {
    const eventId = randomUUID();
    await tx.query(
      `insert into sandbox.callbacks (event_id, transaction_id, seq, callback_url, body, expires_at)
       values (?::uuid, ?, (select coalesce(max(seq), 0) + 1 from sandbox.callbacks where transaction_id = ?), ?, ?,
               clock_timestamp() + ?::bigint * interval '1 millisecond')`,
      [eventId, link.depositId, link.depositId, link.callbackUrl, body(eventId), deliveryWindowMs],
    );
    return eventId;
  }
}
