import { centsFromDb, currentTraceparent, type Database, type SqlTx } from '@wallet/platform';
import type {
  AutoReturn,
  AmountType,
  CobroMethod,
  CobroPaymentRecord,
  CobroPsePayer,
  CobroRecord,
  CobroState,
  Disposition,
  MatchedBy,
  OverpaymentPolicy,
} from '../domain/cobro.js';
import type { CobroActor } from '../domain/cobro-machine.js';
import type { OutboxEvent } from '../app/ports.js';

/** The cobros' rows as Postgres hands them, and their reading into the app's records (shared by the store and the page matcher). */

export interface CobroRow {
  id: string;
  company_id: string;
  reference: string;
  state: CobroState;
  amount_type: AmountType;
  amount: string | null;
  min_amount: string | null;
  max_amount: string | null;
  paid_amount: string;
  returned_amount?: string;
  tolerance_below?: string;
  tolerance_above?: string;
  description: string | null;
  expected_payer_document: string | null;
  expected_payer_name: string | null;
  metadata: Record<string, unknown>;
  overpayment_policy: OverpaymentPolicy;
  methods: CobroMethod[];
  transaction_id: string;
  breb_key_id: string | null;
  breb_key_value: string | null;
  qr_payload: string | null;
  pse_payer: CobroPsePayer | null;
  pse_deposit_id: string | null;
  pse_paygateway_url: string | null;
  request_hash: string;
  iva_applicable: boolean;
  merchant_name: string;
  issue_attempts: number;
  expires_at: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
  paid_at: Date | string | null;
  closed_at: Date | string | null;
  key_closed_at: Date | string | null;
  cursor_at?: string;
}

export interface PaymentRow {
  deposit_id: string;
  cobro_id: string;
  source: 'BREB' | 'PSE';
  amount: string;
  net_amount: string;
  matched_by: MatchedBy;
  disposition: Disposition;
  payer_name: string | null;
  payer_document: string | null;
  received_at: Date | string;
  matched_at: Date | string;
  auto_return_cents: string;
  auto_return_id: string | null;
  auto_return_status: AutoReturn['status'] | null;
  auto_return_error: string | null;
  returned_cents?: string;
  reversed_cents?: string;
}

export const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
export const dateOrNull = (v: Date | string | null): Date | null => (v == null ? null : date(v));
export const centsOrNull = (v: string | null): bigint | null => (v == null ? null : centsFromDb(v));
export const COLS = `c.*, to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`;

export function toPayment(r: PaymentRow): CobroPaymentRecord {
  return {
    depositId: r.deposit_id,
    source: r.source,
    amount: centsFromDb(r.amount),
    netAmount: centsFromDb(r.net_amount),
    matchedBy: r.matched_by,
    disposition: r.disposition,
    payerName: r.payer_name,
    payerDocument: r.payer_document,
    receivedAt: date(r.received_at),
    matchedAt: date(r.matched_at),
    autoReturn:
      r.auto_return_id && r.auto_return_status
        ? { returnId: r.auto_return_id, amount: centsFromDb(r.auto_return_cents), status: r.auto_return_status, error: r.auto_return_error }
        : null,
    returned: centsFromDb(r.returned_cents ?? '0'),
    reversed: centsFromDb(r.reversed_cents ?? '0'),
  };
}

/** A cobro row as the app sees it (payments attached by the caller when it read them). */
export function toCobro(r: CobroRow, payments: CobroPaymentRecord[] = []): CobroRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    reference: r.reference,
    state: r.state,
    amountType: r.amount_type,
    amount: centsOrNull(r.amount),
    minAmount: centsOrNull(r.min_amount),
    maxAmount: centsOrNull(r.max_amount),
    paidAmount: centsFromDb(r.paid_amount),
    returnedAmount: centsFromDb(r.returned_amount ?? '0'),
    toleranceBelow: centsFromDb(r.tolerance_below ?? '0'),
    toleranceAbove: centsFromDb(r.tolerance_above ?? '0'),
    description: r.description,
    expectedPayer: r.expected_payer_document || r.expected_payer_name ? { document: r.expected_payer_document, name: r.expected_payer_name } : null,
    metadata: r.metadata ?? {},
    overpaymentPolicy: r.overpayment_policy,
    methods: r.methods,
    transactionId: r.transaction_id,
    breb: r.breb_key_id && r.breb_key_value && r.qr_payload ? { keyId: r.breb_key_id, keyValue: r.breb_key_value, qrPayload: r.qr_payload } : null,
    pse: r.pse_deposit_id && r.pse_paygateway_url ? { depositId: r.pse_deposit_id, paygatewayUrl: r.pse_paygateway_url } : null,
    psePayer: r.pse_payer ?? null,
    requestHash: r.request_hash,
    expiresAt: date(r.expires_at),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    paidAt: dateOrNull(r.paid_at),
    closedAt: dateOrNull(r.closed_at),
    payments,
  };
}

/** Writes the outbox row of a cobro event in the caller's transaction (`?` placeholders: both transaction kinds). */
export async function appendOutbox(tx: SqlTx, e: OutboxEvent): Promise<void> {
  const traceparent = e.traceparent ?? currentTraceparent();
  await tx.query(`insert into pse_deposit.outbox (id, subject, payload, headers) values (?::uuid, ?, ?::jsonb, ?::jsonb)`, [
    e.id,
    e.subject,
    JSON.stringify(e.payload),
    JSON.stringify(traceparent ? { traceparent } : {}),
  ]);
}

export async function history(tx: SqlTx, cobroId: string, event: string, from: CobroState | null, to: CobroState, actor: CobroActor, depositId: string | null) {
  await tx.query(`insert into pse_deposit.cobro_history (cobro_id, event, from_state, to_state, actor, deposit_id) values (?, ?, ?, ?, ?, ?)`, [
    cobroId,
    event,
    from,
    to,
    actor,
    depositId,
  ]);
}

export async function paymentsOf(q: SqlTx | Database, cobroId: string): Promise<CobroPaymentRecord[]> {
  const sql = `select * from pse_deposit.cobro_payments where cobro_id = ? order by matched_at, deposit_id`;
  const rows = 'prepared' in q ? await q.prepared<PaymentRow>(sql, [cobroId]) : await q.query<PaymentRow>(sql, [cobroId]);
  return rows.map(toPayment);
}
