import { MoneyExceptionsTable, centsFromDb, currentTraceparent, isUniqueViolation, type Database, type PreparedTx } from '@wallet/platform';
import type { CollectKeyRecord, KeyState, QrRecord } from '../domain/collect-key.js';
import type { PaymentState } from '../domain/payment-machine.js';
import type { CollectKeyStore, KeyCursor, KeyListFilter, OutboxEvent, PaymentRecord } from '../app/ports.js';

interface KeyRow {
  id: string;
  company_id: string;
  external_id: string;
  name: string;
  key_type: string;
  key_value: string;
  state: KeyState;
  iva_applicable: boolean | null;
  anchor_handle: string | null;
  created_at: Date | string;
  deleted_at: Date | string | null;
  cursor_at?: string;
  cobro_id?: string | null;
  cobro_transaction_id?: string | null;
  cobro_amount_cents?: string | null;
  cobro_expires_at?: Date | string | null;
  cobro_qr_payload?: string | null;
}
interface QrRow {
  id: string;
  company_id: string;
  key_id: string;
  reference: string;
  payload: string;
  is_paid: boolean;
  created_at: Date | string;
}
interface PaymentRow {
  deposit_id: string;
  traceparent?: string | null;
  provider_transfer_id: string;
  company_id: string;
  key_id: string;
  key_external_id: string;
  key_name: string;
  key_value: string;
  key_state: KeyState;
  status: PaymentState;
  amount: string;
  fixed_fee: string;
  variable_fee: string;
  subtotal_fee: string;
  iva_applicable: boolean;
  iva_amount: string;
  total_charged: string;
  net_amount: string;
  payer_name: string | null;
  payer_document: string | null;
  payer_bank: string | null;
  received_at: Date | string;
  movement_id: string;
  pending_step: 'CREDIT' | 'HOLD' | 'ASSIGN' | 'RETURN' | null;
  created_at: Date | string;
  returned_at?: Date | string | null;
  transaction_id?: string | null;
  cobro_id?: string | null;
}

const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
const KCOLS = `k.*, to_char(k.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`;
/** States that hold a value and an externalId (the partial unique indexes), and the states clients see. */
const CLAIMING = `('REGISTERING', 'ACTIVE', 'SUSPENDED')`;
const PUBLIC = `('ACTIVE', 'SUSPENDED', 'DELETED')`;
/** Customer keys only: a cobro's key is the cobro's, never listed or found by externalId. */
const CUSTOMER = `k.cobro_id is null`;

const toKey = (r: KeyRow): CollectKeyRecord => ({
  id: r.id,
  companyId: r.company_id,
  externalId: r.external_id,
  name: r.name,
  keyType: r.key_type,
  keyValue: r.key_value,
  state: r.state,
  ivaApplicable: r.iva_applicable === true,
  createdAt: date(r.created_at),
  deletedAt: r.deleted_at == null ? null : date(r.deleted_at),
  anchorHandle: r.anchor_handle ?? null,
  cobro:
    r.cobro_id == null
      ? null
      : {
          cobroId: r.cobro_id,
          transactionId: r.cobro_transaction_id!,
          amountCents: r.cobro_amount_cents == null ? null : centsFromDb(r.cobro_amount_cents),
          expiresAt: date(r.cobro_expires_at!),
          qrPayload: r.cobro_qr_payload!,
        },
});
const toQr = (r: QrRow): QrRecord => ({
  id: r.id,
  companyId: r.company_id,
  keyId: r.key_id,
  type: 'STATIC',
  reference: r.reference,
  payload: r.payload,
  isPaid: r.is_paid,
  createdAt: date(r.created_at),
});
const toPayment = (r: PaymentRow): PaymentRecord => ({
  depositId: r.deposit_id,
  traceparent: r.traceparent ?? null,
  providerTransferId: r.provider_transfer_id,
  companyId: r.company_id,
  key: { id: r.key_id, externalId: r.key_external_id, name: r.key_name, value: r.key_value, state: r.key_state },
  status: r.status,
  amount: centsFromDb(r.amount),
  fee: {
    fixedFee: centsFromDb(r.fixed_fee),
    variableFee: centsFromDb(r.variable_fee),
    subtotalFee: centsFromDb(r.subtotal_fee),
    ivaApplicable: r.iva_applicable,
    ivaAmount: centsFromDb(r.iva_amount),
    totalCharged: centsFromDb(r.total_charged),
  },
  netAmount: centsFromDb(r.net_amount),
  payerName: r.payer_name,
  payerDocument: r.payer_document,
  payerBank: r.payer_bank,
  receivedAt: date(r.received_at),
  movementId: r.movement_id,
  pendingStep: r.pending_step,
  createdAt: date(r.created_at),
  returnedAt: r.returned_at == null ? null : date(r.returned_at),
  transactionId: r.transaction_id ?? null,
  cobroId: r.cobro_id ?? null,
});

/** The event with the trace context of the write (the call or message handled), so its consumers continue that trace. */
async function appendOutbox(tx: PreparedTx, e: OutboxEvent): Promise<void> {
  const traceparent = currentTraceparent();
  await tx.query(`insert into collect_key.outbox (id, subject, payload, headers) values ($1::uuid, $2, $3::jsonb, $4::jsonb)`, [
    e.id,
    e.subject,
    JSON.stringify(e.payload),
    JSON.stringify(traceparent ? { traceparent } : {}),
  ]);
}

/** The `pending_step` a money state owes (a CHECK ties the two). */
const STEPS: Partial<Record<PaymentState, 'CREDIT' | 'HOLD' | 'ASSIGN' | 'RETURN'>> = {
  CREDITING: 'CREDIT',
  HOLDING: 'HOLD',
  ASSIGNING: 'ASSIGN',
  RETURNING: 'RETURN',
};
const stepOf = (s: PaymentState) => STEPS[s] ?? null;

async function paymentHistory(tx: PreparedTx, depositId: string, from: PaymentState | null, to: PaymentState, reason: string): Promise<void> {
  await tx.query(`insert into collect_key.payment_history (deposit_id, from_state, to_state, reason) values ($1, $2, $3, $4)`, [depositId, from, to, reason]);
}

/** The collect_key schema. Statements run as named prepared statements (Database.prepared / preparedTx). */
export class SqlCollectKeyStore implements CollectKeyStore {
  /** Money exceptions (CONTRACT §10): the platform's table, in this schema. */
  readonly exceptions: MoneyExceptionsTable;

  constructor(
    private readonly db: Database,
    private readonly eventsWritten: () => void = () => {},
  ) {
    this.exceptions = new MoneyExceptionsTable(<R>(sql: string, params: unknown[]) => this.db.prepared<R>(sql, params), 'collect_key');
  }

  async insertKey(k: CollectKeyRecord) {
    try {
      const rows = await this.db.prepared<KeyRow>(
        `insert into collect_key.keys as k (id, company_id, external_id, name, key_type, key_value, state, iva_applicable,
          cobro_id, cobro_transaction_id, cobro_amount_cents, cobro_expires_at, cobro_qr_payload)
        values ($1, $2, $3, $4, $5, $6, 'REGISTERING', $7, $8, $9, $10::bigint, $11::timestamptz, $12) returning ${KCOLS}`,
        [
          k.id,
          k.companyId,
          k.externalId,
          k.name,
          k.keyType,
          k.keyValue,
          k.ivaApplicable,
          k.cobro?.cobroId ?? null,
          k.cobro?.transactionId ?? null,
          k.cobro?.amountCents?.toString() ?? null,
          k.cobro?.expiresAt.toISOString() ?? null,
          k.cobro?.qrPayload ?? null,
        ],
      );
      return toKey(rows[0]!);
    } catch (err) {
      // A customer's externalId, or a cobro, already claimed by another key: the caller's next round finds it.
      if (isUniqueViolation(err, 'keys_live_external_uq') || isUniqueViolation(err, 'keys_cobro_uq')) return 'EXTERNAL_TAKEN' as const;
      if (isUniqueViolation(err, 'keys_live_value_uq')) return 'VALUE_TAKEN' as const;
      throw err;
    }
  }

  async liveByExternalId(companyId: string, externalId: string) {
    const rows = await this.db.prepared<KeyRow>(
      `select ${KCOLS} from collect_key.keys k
      where k.company_id = $1 and k.external_id = $2 and k.state in ${CLAIMING} and ${CUSTOMER}`,
      [companyId, externalId],
    );
    return rows[0] && toKey(rows[0]);
  }

  async byExternalId(companyId: string, externalId: string) {
    const rows = await this.db.prepared<KeyRow>(
      `select ${KCOLS} from collect_key.keys k where k.company_id = $1 and k.external_id = $2
      and k.state in ${PUBLIC} and ${CUSTOMER} order by (k.state <> 'DELETED') desc, k.deleted_at desc nulls last, k.created_at desc limit 1`,
      [companyId, externalId],
    );
    return rows[0] && toKey(rows[0]);
  }

  async byId(id: string) {
    const rows = await this.db.prepared<KeyRow>(`select ${KCOLS} from collect_key.keys k where k.id = $1`, [id]);
    return rows[0] && toKey(rows[0]);
  }

  async byValue(value: string) {
    const rows = await this.db.prepared<KeyRow>(
      `select ${KCOLS} from collect_key.keys k where k.key_value = $1 and k.state <> 'FAILED'
      order by (k.state <> 'DELETED') desc, k.created_at desc limit 1`,
      [value],
    );
    return rows[0] && toKey(rows[0]);
  }

  async byCobroId(companyId: string, cobroId: string) {
    const rows = await this.db.prepared<KeyRow>(`select ${KCOLS} from collect_key.keys k where k.company_id = $1 and k.cobro_id = $2 and k.state <> 'FAILED'`, [
      companyId,
      cobroId,
    ]);
    return rows[0] && toKey(rows[0]);
  }

  async byAnchorHandle(anchorHandle: string) {
    const rows = await this.db.prepared<KeyRow>(`select ${KCOLS} from collect_key.keys k where k.anchor_handle = $1`, [anchorHandle]);
    return rows[0] && toKey(rows[0]);
  }

  async byValueAt(value: string, paidAt: Date, withoutAnchorOnly: boolean) {
    const rows = await this.db.prepared<KeyRow>(
      `select ${KCOLS} from collect_key.keys k
      where k.key_value = $1 and k.state <> 'FAILED' and (not $3::boolean or k.anchor_handle is null)
      order by (k.state = 'REGISTERING') desc, (k.created_at <= $2::timestamptz) desc,
        case when k.created_at <= $2::timestamptz then k.created_at end desc nulls last, k.created_at asc limit 1`,
      [value, paidAt.toISOString(), withoutAnchorOnly],
    );
    return rows[0] && toKey(rows[0]);
  }

  async list(companyId: string, f: KeyListFilter, limit: number, after?: KeyCursor) {
    const where = `k.company_id = $1 and k.state in ${PUBLIC} and ${CUSTOMER} and ($2::text is null or k.state = $2) and ($3::text is null or k.external_id = $3)`;
    const rows = after
      ? await this.db.prepared<KeyRow>(
          `select ${KCOLS} from collect_key.keys k where ${where}
          and (k.created_at, k.id) < ($4::timestamptz, $5::text) order by k.created_at desc, k.id desc limit $6`,
          [companyId, f.state ?? null, f.externalId ?? null, after.createdAt, after.id, limit + 1],
        )
      : await this.db.prepared<KeyRow>(
          `select ${KCOLS} from collect_key.keys k where ${where}
          order by k.created_at desc, k.id desc limit $4`,
          [companyId, f.state ?? null, f.externalId ?? null, limit + 1],
        );
    return {
      items: rows.slice(0, limit).map((r) => ({ ...toKey(r), cursor: { createdAt: r.cursor_at ?? date(r.created_at).toISOString(), id: r.id } })),
      hasMore: rows.length > limit,
    };
  }

  async setState(id: string, from: KeyState[], to: KeyState, event?: (k: CollectKeyRecord) => OutboxEvent | null, anchorHandle?: string | null) {
    let wrote = false;
    const rec = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<KeyRow>(
        `update collect_key.keys k set state = $2,
          deleted_at = case when $2 = 'DELETED' then now() else null end, updated_at = now(),
          anchor_handle = coalesce($4::text, k.anchor_handle)
        where k.id = $1 and k.state = any($3::text[]) returning ${KCOLS}`,
        [id, to, from, anchorHandle ?? null],
      );
      if (!rows[0]) return undefined;
      const rec = toKey(rows[0]);
      if (to === 'DELETED') await tx.query(`update collect_key.qrs set revoked_at = now() where key_id = $1 and revoked_at is null`, [id]);
      const e = event?.(rec);
      if (e) {
        await appendOutbox(tx, e);
        wrote = true;
      }
      return rec;
    });
    if (wrote) this.eventsWritten();
    return rec;
  }

  async leaseStaleRegistrations(graceSeconds: number, batch: number) {
    const rows = await this.db.prepared<KeyRow>(
      `
      with due as (
        select id from collect_key.keys
         where state = 'REGISTERING' and updated_at <= now() - make_interval(secs => $1::int)
         order by updated_at limit $2 for update skip locked)
      update collect_key.keys k set updated_at = now() from due where k.id = due.id
      returning ${KCOLS}`,
      [graceSeconds, batch],
    );
    return rows.map(toKey);
  }

  async liveQr(keyId: string) {
    const rows = await this.db.prepared<QrRow>(`select * from collect_key.qrs where key_id = $1 and revoked_at is null`, [keyId]);
    return rows[0] && toQr(rows[0]);
  }

  async insertQr(q: QrRecord, event: (q: QrRecord) => OutboxEvent) {
    try {
      const rec = await this.db.preparedTx(async (tx) => {
        const rows = await tx.query<QrRow>(
          `insert into collect_key.qrs (id, company_id, key_id, reference, payload)
          values ($1, $2, $3, $4, $5) returning *`,
          [q.id, q.companyId, q.keyId, q.reference, q.payload],
        );
        const rec = toQr(rows[0]!);
        await appendOutbox(tx, event(rec));
        return rec;
      });
      this.eventsWritten();
      return rec;
    } catch (err) {
      if (isUniqueViolation(err, 'qrs_live_key_uq')) return undefined;
      throw err;
    }
  }

  async qr(id: string) {
    const rows = await this.db.prepared<QrRow>(`select * from collect_key.qrs where id = $1`, [id]);
    return rows[0] && toQr(rows[0]);
  }

  async recordIntent(p: PaymentRecord, eventId: string) {
    return this.db.preparedTx(async (tx) => {
      await tx.query(`insert into collect_key.provider_events (event_id, provider_transfer_id) values ($1, $2) on conflict do nothing`, [
        eventId,
        p.providerTransferId,
      ]);
      const rows = await tx.query<PaymentRow>(
        `insert into collect_key.payments (deposit_id, provider_transfer_id, company_id, key_id,
          key_external_id, key_name, key_value, key_state, status, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable,
          iva_amount, total_charged, net_amount, payer_name, payer_document, payer_bank, received_at, movement_id, pending_step, step_at, traceparent,
          transaction_id, cobro_id)
        values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::bigint, $11::bigint, $12::bigint, $13::bigint, $14, $15::bigint, $16::bigint,
          $17::bigint, $18, $19, $20, $21::timestamptz, $22::uuid, $23, now(), $24, $25, $26)
        on conflict (provider_transfer_id) do nothing returning *`,
        [
          p.depositId,
          p.providerTransferId,
          p.companyId,
          p.key.id,
          p.key.externalId,
          p.key.name,
          p.key.value,
          p.key.state,
          p.status,
          p.amount.toString(),
          p.fee.fixedFee.toString(),
          p.fee.variableFee.toString(),
          p.fee.subtotalFee.toString(),
          p.fee.ivaApplicable,
          p.fee.ivaAmount.toString(),
          p.fee.totalCharged.toString(),
          p.netAmount.toString(),
          p.payerName,
          p.payerDocument,
          p.payerBank,
          p.receivedAt.toISOString(),
          p.movementId,
          stepOf(p.status),
          // The trace that recorded it (the network's notification): the sweeper's steps link to it.
          currentTraceparent() ?? null,
          p.transactionId ?? null,
          p.cobroId ?? null,
        ],
      );
      if (rows[0]) {
        await paymentHistory(tx, p.depositId, null, p.status, 'notified by the network');
        return { payment: toPayment(rows[0]), created: true };
      }
      const existing = await tx.query<PaymentRow>(`select * from collect_key.payments where provider_transfer_id = $1`, [p.providerTransferId]);
      return { payment: toPayment(existing[0]!), created: false };
    });
  }

  async paymentByTransfer(providerTransferId: string) {
    const rows = await this.db.prepared<PaymentRow>(`select * from collect_key.payments where provider_transfer_id = $1`, [providerTransferId]);
    return rows[0] && toPayment(rows[0]);
  }

  async providerIdsOf(depositIds: readonly string[]): Promise<Map<string, string>> {
    if (depositIds.length === 0) return new Map();
    const rows = await this.db.prepared<{ d: string; p: string }>(
      `select deposit_id as d, provider_transfer_id as p from collect_key.payments where deposit_id = any($1::text[])`,
      [[...depositIds]],
    );
    return new Map(rows.map((r) => [r.d, r.p]));
  }

  async paymentById(depositId: string) {
    const rows = await this.db.prepared<PaymentRow>(`select * from collect_key.payments where deposit_id = $1`, [depositId]);
    return rows[0] && toPayment(rows[0]);
  }

  async transitionPayment(t: Parameters<CollectKeyStore['transitionPayment']>[0]) {
    let wrote = false;
    const f = t.patch?.fee;
    const k = t.patch?.key;
    const rec = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<PaymentRow & { prev: PaymentState }>(
        `
        update collect_key.payments p set status = $3, pending_step = $4::text,
          step_at = case when $4::text is null then null else now() end, updated_at = now(),
          fixed_fee = coalesce($5::bigint, p.fixed_fee), variable_fee = coalesce($6::bigint, p.variable_fee),
          subtotal_fee = coalesce($7::bigint, p.subtotal_fee), iva_applicable = coalesce($8::boolean, p.iva_applicable),
          iva_amount = coalesce($9::bigint, p.iva_amount), total_charged = coalesce($10::bigint, p.total_charged),
          net_amount = coalesce($11::bigint, p.net_amount),
          key_id = coalesce($12, p.key_id), key_external_id = coalesce($13, p.key_external_id), key_name = coalesce($14, p.key_name),
          key_value = coalesce($15, p.key_value), key_state = coalesce($16, p.key_state),
          returned_at = coalesce($17::timestamptz, p.returned_at)
        from (select deposit_id, status as prev from collect_key.payments where deposit_id = $1 for update) old
        where p.deposit_id = old.deposit_id and p.status = any($2::text[])
        returning p.*, old.prev`,
        [
          t.depositId,
          [...t.from],
          t.to,
          stepOf(t.to),
          f?.fixedFee.toString() ?? null,
          f?.variableFee.toString() ?? null,
          f?.subtotalFee.toString() ?? null,
          f?.ivaApplicable ?? null,
          f?.ivaAmount.toString() ?? null,
          f?.totalCharged.toString() ?? null,
          t.patch?.netAmount?.toString() ?? null,
          k?.id ?? null,
          k?.externalId ?? null,
          k?.name ?? null,
          k?.value ?? null,
          k?.state ?? null,
          t.patch?.returnedAt?.toISOString() ?? null,
        ],
      );
      if (!rows[0]) return undefined;
      const rec = toPayment(rows[0]);
      await paymentHistory(tx, t.depositId, rows[0].prev, t.to, t.reason);
      if (t.event) {
        await appendOutbox(tx, t.event(rec));
        wrote = true;
      }
      return rec;
    });
    if (wrote) this.eventsWritten();
    return rec;
  }

  async parkPayment(depositId: string, state: PaymentState) {
    await this.db.prepared(`update collect_key.payments set step_at = null, updated_at = now() where deposit_id = $1 and status = $2`, [depositId, state]);
  }

  async leaseStalePayments(graceSeconds: number, batch: number) {
    const rows = await this.db.prepared<PaymentRow>(
      `
      with due as (
        select deposit_id from collect_key.payments
         where status in ('CREDITING', 'HOLDING', 'ASSIGNING', 'RETURNING') and step_at <= now() - make_interval(secs => $1::int)
         order by step_at limit $2 for update skip locked)
      update collect_key.payments p set step_at = now() from due where p.deposit_id = due.deposit_id
      returning p.*`,
      [graceSeconds, batch],
    );
    return rows.map(toPayment);
  }
}
