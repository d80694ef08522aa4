import { MoneyExceptionsTable, centsFromDb, currentTraceparent, type Database, type PreparedTx } from '@wallet/platform';
import {
  CLOCK_SHOWN_STATES,
  pendingStepOf,
  statesShownAs,
  type DepositRecord,
  type DepositSource,
  type DepositState,
  type PendingStep,
} from '../domain/deposit.js';
import type { DepositStore, ListCursor, ListFilter, NewDeposit, OutboxEvent, Transition } from '../app/ports.js';
import type { SqlDepositCounts } from './deposit-counts.js';

interface DepositRow {
  id: string;
  traceparent?: string | null;
  company_id: string;
  source: DepositSource;
  status: DepositState;
  amount: string;
  fixed_fee: string;
  variable_fee: string;
  subtotal_fee: string;
  iva_applicable: boolean;
  iva_amount: string;
  total_charged: string;
  net_amount: string;
  currency: string;
  payer_document_type: number | null;
  payer_document_number: string | null;
  payer_first_name: string | null;
  payer_last_name: string | null;
  payer_name: string | null;
  payer_email: string | null;
  payer_phone: string | null;
  payer_bank: string | null;
  internal_ref: string | null;
  paygateway_url: string | null;
  provider_link_id: string | null;
  expires_at: Date | string | null;
  provider_transfer_id: string | null;
  provider_confirmed_at: Date | string | null;
  movement_id: string | null;
  pending_step: PendingStep | null;
  error_message: string | null;
  breb_key_id: string | null;
  breb_key_external_id: string | null;
  breb_key_name: string | null;
  breb_key_value: string | null;
  cobro_id?: string | null;
  created_at: Date | string;
  cursor_at?: string;
}

const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
const dateOrNull = (v: Date | string | null): Date | null => (v == null ? null : date(v));

/** Every column plus the exact created_at (microseconds) for cursors. */
const COLS = `d.*, to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`;

function toDeposit(r: DepositRow): DepositRecord {
  return {
    id: r.id,
    traceparent: r.traceparent ?? null,
    companyId: r.company_id,
    source: r.source,
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
    currency: r.currency,
    payerDocumentType: r.payer_document_type === null ? null : Number(r.payer_document_type),
    payerDocumentNumber: r.payer_document_number,
    payerFirstName: r.payer_first_name,
    payerLastName: r.payer_last_name,
    payerName: r.payer_name,
    payerEmail: r.payer_email,
    payerPhone: r.payer_phone,
    payerBank: r.payer_bank,
    internalRef: r.internal_ref,
    paygatewayUrl: r.paygateway_url,
    providerLinkId: r.provider_link_id,
    expiresAt: dateOrNull(r.expires_at),
    providerTransferId: r.provider_transfer_id,
    providerConfirmedAt: dateOrNull(r.provider_confirmed_at),
    movementId: r.movement_id,
    pendingStep: r.pending_step,
    errorMessage: r.error_message,
    brebKey: r.breb_key_id ? { id: r.breb_key_id, externalId: r.breb_key_external_id ?? '', name: r.breb_key_name ?? '', value: r.breb_key_value ?? '' } : null,
    createdAt: date(r.created_at),
    cobroId: r.cobro_id ?? null,
  };
}

const withCursor = (r: DepositRow) => ({ ...toDeposit(r), cursor: { createdAt: r.cursor_at ?? date(r.created_at).toISOString(), id: r.id } });

/** The event with the trace context of the write (the call or message handled) unless it names one, so its consumers continue that trace. */
async function appendOutbox(tx: PreparedTx, e: OutboxEvent): Promise<void> {
  const traceparent = e.traceparent ?? currentTraceparent();
  await tx.query(`insert into pse_deposit.outbox (id, subject, payload, headers) values ($1::uuid, $2, $3::jsonb, $4::jsonb)`, [
    e.id,
    e.subject,
    JSON.stringify(e.payload),
    JSON.stringify(traceparent ? { traceparent } : {}),
  ]);
}

async function history(tx: PreparedTx, d: DepositRecord, reason: string | null): Promise<void> {
  await tx.query(`insert into pse_deposit.state_history (deposit_id, status, pending_step, reason) values ($1, $2, $3, $4)`, [
    d.id,
    d.status,
    d.pendingStep,
    reason,
  ]);
}

/** The pse_deposit schema. Hot statements run as named prepared statements (Database.prepared / preparedTx). */
export class SqlDepositStore implements DepositStore {
  /** Money exceptions (CONTRACT §10): the platform's table, in this schema. */
  readonly exceptions: MoneyExceptionsTable;

  constructor(
    private readonly db: Database,
    private readonly eventsWritten: () => void = () => {},
    /** The companies' deposit counts (docs/deposit-counts.md): page-style totals read them once they are ready. */
    private readonly counts?: SqlDepositCounts,
  ) {
    this.exceptions = new MoneyExceptionsTable(<R>(sql: string, params: unknown[]) => this.db.prepared<R>(sql, params), 'pse_deposit');
  }

  async insert(d: NewDeposit, event: OutboxEvent): Promise<DepositRecord> {
    const rec = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<DepositRow>(
        `
        insert into pse_deposit.deposits as d (id, company_id, source, status, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable,
          iva_amount, total_charged, net_amount, currency, payer_document_type, payer_document_number, payer_first_name,
          payer_last_name, payer_name, payer_email, payer_phone, internal_ref, api_key_id, paygateway_url, provider_link_id,
          expires_at, movement_id, traceparent, cobro_id)
        values ($1, $2, $3, $4, $5::bigint, $6::bigint, $7::bigint, $8::bigint, $9, $10::bigint, $11::bigint, $12::bigint, $13, $14,
          $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25::timestamptz, $26::uuid, $27, $28)
        returning ${COLS}`,
        [
          d.id,
          d.companyId,
          d.source,
          d.status,
          d.amount.toString(),
          d.fee.fixedFee.toString(),
          d.fee.variableFee.toString(),
          d.fee.subtotalFee.toString(),
          d.fee.ivaApplicable,
          d.fee.ivaAmount.toString(),
          d.fee.totalCharged.toString(),
          d.netAmount.toString(),
          d.currency,
          d.payerDocumentType,
          d.payerDocumentNumber,
          d.payerFirstName,
          d.payerLastName,
          d.payerName,
          d.payerEmail,
          d.payerPhone,
          d.internalRef,
          d.apiKeyId,
          d.paygatewayUrl,
          d.providerLinkId,
          d.expiresAt?.toISOString() ?? null,
          d.movementId,
          // The trace that recorded it: the provider's confirmation and the sweeper's steps link to it.
          currentTraceparent() ?? null,
          d.cobroId ?? null,
        ],
      );
      const rec = toDeposit(rows[0]!);
      await history(tx, rec, 'created');
      await appendOutbox(tx, event);
      return rec;
    });
    this.eventsWritten();
    return rec;
  }

  async byCobro(companyId: string, cobroId: string): Promise<DepositRecord | undefined> {
    const rows = await this.db.prepared<DepositRow>(`select ${COLS} from pse_deposit.deposits d where d.cobro_id = $1 and d.company_id = $2`, [
      cobroId,
      companyId,
    ]);
    return rows[0] && toDeposit(rows[0]);
  }

  async get(companyId: string, id: string): Promise<DepositRecord | undefined> {
    const rows = await this.db.prepared<DepositRow>(`select ${COLS} from pse_deposit.deposits d where d.id = $1 and d.company_id = $2`, [id, companyId]);
    return rows[0] && toDeposit(rows[0]);
  }

  async matchedCobros(ids: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.db.prepared<{ deposit_id: string; cobro_id: string }>(
      `select deposit_id, cobro_id from pse_deposit.cobro_payments where deposit_id = any($1::text[])`,
      [[...ids]],
    );
    return new Map(rows.map((r) => [r.deposit_id, r.cobro_id]));
  }

  async getById(id: string): Promise<DepositRecord | undefined> {
    const rows = await this.db.prepared<DepositRow>(`select ${COLS} from pse_deposit.deposits d where d.id = $1`, [id]);
    return rows[0] && toDeposit(rows[0]);
  }

  async list(companyId: string, f: ListFilter, page: { limit: number; offset: number; after?: ListCursor; withTotal: boolean; now: Date }) {
    // One statement per filter combination, naming only the filters given (a filter disabled by a null
    // parameter stays in the plan: once a connection caches a generic plan for the one shape, every
    // filter walks the company's whole index in created_at order, checking each row). Each shape has an
    // index in the listing's order that leads with its filter: (company_id[, status | source | key],
    // created_at desc, id desc) (pseDepositOnlineIndexes; a plan test in share-and-list.test.ts). A total
    // reads the company's counts (docs/deposit-counts.md), not every deposit it names.
    const params: unknown[] = [companyId];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const conds = ['d.company_id = $1'];
    if (f.source) conds.push(`d.source = ${p(f.source)}`);
    if (f.externalId) conds.push(`d.breb_key_external_id = ${p(f.externalId)}`);
    if (f.brebKeyId) conds.push(`d.breb_key_id = ${p(f.brebKeyId)}`);
    // `status` is what clients see (publicStatus: a pending link past expires_at shows EXPIRED, the
    // money states show as the state they lead from / to): the stored states that can show as it
    // (statesShownAs) narrow first, the same rule in SQL decides where the clock does (a total of the
    // others needs no row, only the status index).
    const states = f.status ? statesShownAs(f.status) : null;
    if (f.status === 'PENDING_CONFIRM' || f.status === 'EXPIRED')
      conds.push(`(case when d.status in ('PENDING_CONFIRM', 'CREDITING')
                         then (case when d.expires_at <= ${p(page.now.toISOString())}::timestamptz then 'EXPIRED' else 'PENDING_CONFIRM' end)
                       when d.status = 'REVERSING' then 'ASSIGNED' else d.status end) = ${p(f.status)}`);
    const where = conds.join(' and ');
    const base = [...params];
    const order = 'order by d.created_at desc, d.id desc';
    const seek = page.after ? ` and (d.created_at, d.id) < (${p(page.after.createdAt)}::timestamptz, ${p(page.after.id)}::text)` : '';
    let rows: DepositRow[];
    if (states) {
      // A status shows several stored states: each one's newest rows from the status index, in its order
      // (no more than the page needs), merged. `status = any(…)` cannot give the order: its plan sorted every
      // row of the company in those states, or walked the company's whole index checking each.
      const inner = p(page.offset + page.limit + 1);
      rows = await this.db.prepared<DepositRow>(
        `select ${COLS} from unnest(${p(states)}::text[]) s(state) cross join lateral (
           select d.* from pse_deposit.deposits d where ${where} and d.status = s.state${seek} ${order} limit ${inner}) d
         ${order} limit ${p(page.limit + 1)} offset ${p(page.offset)}`,
        params,
      );
    } else {
      rows = await this.db.prepared<DepositRow>(
        `select ${COLS} from pse_deposit.deposits d where ${where}${seek} ${order} limit ${p(page.limit + 1)} offset ${p(page.offset)}`,
        params,
      );
    }
    const total = page.withTotal ? await this.total(companyId, f, states, where, base) : null;
    return { items: rows.slice(0, page.limit).map(withCursor), hasMore: rows.length > page.limit, total };
  }

  /**
   * A page-style total. From the company's counts (docs/deposit-counts.md) once they are ready, whatever its
   * history: every filter but a Bre-B key's. The stored states whose public status the clock decides (a
   * pending link shows EXPIRED past expires_at, with no write) are counted from the deposits: few by nature,
   * a link living 24 hours. A key's deposits, and every total before the counts are ready, are counted from
   * the deposits.
   */
  private async total(companyId: string, f: ListFilter, states: DepositState[] | null, where: string, params: unknown[]): Promise<number> {
    if (!this.counts || f.externalId || f.brebKeyId || !(await this.counts.ready())) return this.countRows(where, params, states);
    const clocked = states?.filter((s) => CLOCK_SHOWN_STATES.includes(s)) ?? [];
    const kept = states ? states.filter((s) => !CLOCK_SHOWN_STATES.includes(s)) : null;
    const counted = kept === null || kept.length > 0 ? await this.counts.count(companyId, f.source, kept) : 0;
    return counted + (clocked.length > 0 ? await this.countRows(where, params, clocked) : 0);
  }

  /** The deposits `where` names, in `states` (any when null), counted: by stored state from the status index. */
  private async countRows(where: string, params: unknown[], states: DepositState[] | null): Promise<number> {
    // by stored state: `status = any(…)` has no estimate in a generic plan, which walked the company
    const [c] = states
      ? await this.db.prepared<{ n: string }>(
          `select coalesce(sum(c.n), 0)::text as n from unnest($${params.length + 1}::text[]) s(state) cross join lateral (
             select count(*) as n from pse_deposit.deposits d where ${where} and d.status = s.state) c`,
          [...params, states],
        )
      : await this.db.prepared<{ n: string }>(`select count(*)::text as n from pse_deposit.deposits d where ${where}`, params);
    return Number(c?.n ?? 0);
  }

  async transition(t: Transition): Promise<DepositRecord | undefined> {
    const p = t.patch ?? {};
    const step = pendingStepOf(t.to);
    let wrote = false;
    const rec = await this.db.preparedTx(async (tx) => {
      const rows = await tx.query<DepositRow>(
        `
        update pse_deposit.deposits d set status = $3, pending_step = $4::text,
          step_at = case when $4::text is null then null else now() end,
          provider_transfer_id = case when $5 then $6 else d.provider_transfer_id end,
          provider_confirmed_at = case when $7 then $8::timestamptz else d.provider_confirmed_at end,
          payer_bank = case when $9 then $10 else d.payer_bank end,
          error_message = case when $11 then $12 else d.error_message end,
          failed_at = case when $3 = 'FAILED' and d.status <> 'FAILED' then now() else d.failed_at end,
          reversed_at = case when $3 in ('REVERSING', 'REVERSED') then coalesce(d.reversed_at, now()) else d.reversed_at end,
          updated_at = now()
        where d.id = $1 and d.status = any($2::text[])
        returning ${COLS}`,
        [
          t.id,
          [...t.from],
          t.to,
          step,
          'providerTransferId' in p,
          p.providerTransferId ?? null,
          'providerConfirmedAt' in p,
          p.providerConfirmedAt?.toISOString() ?? null,
          'payerBank' in p,
          p.payerBank ?? null,
          'errorMessage' in p,
          p.errorMessage ?? null,
        ],
      );
      if (!rows[0]) return undefined;
      const rec = toDeposit(rows[0]);
      await history(tx, rec, t.reason ?? null);
      if (t.callback) {
        await tx.query(`insert into pse_deposit.provider_callbacks (event_id, deposit_id, status) values ($1, $2, $3) on conflict do nothing`, [
          t.callback.eventId,
          t.id,
          t.callback.status,
        ]);
      }
      if (t.event) {
        await appendOutbox(tx, t.event(rec));
        wrote = true;
      }
      return rec;
    });
    if (wrote) this.eventsWritten();
    return rec;
  }

  async callbackSeen(eventId: string): Promise<boolean> {
    const rows = await this.db.prepared(`select 1 from pse_deposit.provider_callbacks where event_id = $1`, [eventId]);
    return rows.length > 0;
  }

  async recordCallback(eventId: string, depositId: string, status: string): Promise<boolean> {
    const rows = await this.db.prepared(
      `insert into pse_deposit.provider_callbacks (event_id, deposit_id, status) values ($1, $2, $3)
      on conflict do nothing returning event_id`,
      [eventId, depositId, status],
    );
    return rows.length > 0;
  }

  async dueForExpiry(now: Date, batch: number): Promise<DepositRecord[]> {
    const rows = await this.db.prepared<DepositRow>(
      `select ${COLS} from pse_deposit.deposits d
      where d.status = 'PENDING_CONFIRM' and d.expires_at <= $1::timestamptz order by d.expires_at limit $2`,
      [now.toISOString(), batch],
    );
    return rows.map(toDeposit);
  }

  async leaseStaleSteps(graceSeconds: number, batch: number): Promise<DepositRecord[]> {
    const rows = await this.db.prepared<DepositRow>(
      `
      with due as (
        select id from pse_deposit.deposits
         where status in ('CREDITING', 'REVERSING') and step_at <= now() - make_interval(secs => $1::int)
         order by step_at limit $2 for update skip locked)
      update pse_deposit.deposits d set step_at = now() from due where d.id = due.id
      returning ${COLS}`,
      [graceSeconds, batch],
    );
    return rows.map(toDeposit);
  }

  async park(id: string, state: DepositState): Promise<void> {
    await this.db.prepared(`update pse_deposit.deposits set step_at = null, updated_at = now() where id = $1 and status = $2`, [id, state]);
  }

  // ───────────────────────────── money exceptions ─────────────────────────────
}
