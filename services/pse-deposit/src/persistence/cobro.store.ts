import { centsFromDb, currentTraceparent, isUniqueViolation, type Database, type PreparedTx, type SqlTx } from '@wallet/platform';
import {
  decideReversal,
  documentKey,
  type AmountTolerance,
  type CobroPaymentRecord,
  type CobroRecord,
  type CobroState,
  type MatchedBy,
  type UnmatchedReason,
} from '../domain/cobro.js';
import { COBRO_MACHINE, type CobroActor, type CobroEvent } from '../domain/cobro-machine.js';
import type { OutboxEvent } from '../app/ports.js';
import type {
  AttachOutcome,
  CobroPatch,
  CobroCursor,
  CobroIssueFacts,
  CobroListFilter,
  CobroStore,
  InboundPayment,
  MatchOutcome,
  NewCobro,
  OwedAutoReturn,
  CobroSettings,
  PaymentReturned,
  PaymentReversed,
  ReversalOutcome,
  UnmatchedPayment,
} from '../app/cobro-ports.js';
import { appendOutbox, COLS, date, dateOrNull, history, paymentsOf, toCobro, toPayment, type CobroRow, type PaymentRow } from './cobro-rows.js';
import { lookupPage, matchedByOf, MatchWrites, stillFound, type MatchEventBuilder } from './cobro-matching.js';

/**
 * The cobros of the pse_deposit schema. Every state change is `transition` (a compare-and-set from the
 * event's `from` states in COBRO_MACHINE, with its history row and outbox event in one transaction)
 * or `match` (the same, under the cobro's row lock, in the inbox transaction of the payment's event).
 */
export class SqlCobroStore implements CobroStore {
  constructor(
    private readonly db: Database,
    private readonly eventsWritten: () => void = () => {},
  ) {}

  /** Stores a new cobro as CREATING; `EXISTS` with the live cobro of that reference when there is one. */
  async insertCreating(c: NewCobro): Promise<{ created: true; cobro: CobroRecord } | { created: false; existing: CobroIssueFacts }> {
    try {
      const rows = await this.db.prepared<CobroRow>(
        // The company is recorded as using cobros in the same statement (the matcher then lists its unmatched payments).
        `with c as (insert into pse_deposit.cobros (id, company_id, reference, state, amount_type, amount, min_amount, max_amount, description,
           expected_payer_document, expected_payer_document_key, expected_payer_name, metadata, overpayment_policy, methods, transaction_id,
           request_hash, iva_applicable, merchant_name, expires_at, created_at, updated_at, traceparent, pse_payer, tolerance_below, tolerance_above)
         values ($1, $2, $3, 'CREATING', $4, $5::bigint, $6::bigint, $7::bigint, $8, $9, $10, $11, $12::jsonb, $13, $14::text[], $15, $16, $17, $18,
           $19::timestamptz, $20::timestamptz, $20::timestamptz, $21, $22::jsonb, $23::bigint, $24::bigint)
         returning *),
         uses as (insert into pse_deposit.cobro_companies (company_id) values ($2) on conflict do nothing)
         select * from c`,
        [
          c.id,
          c.companyId,
          c.reference,
          c.amountType,
          c.amount?.toString() ?? null,
          c.minAmount?.toString() ?? null,
          c.maxAmount?.toString() ?? null,
          c.description,
          c.expectedPayer?.document ?? null,
          documentKey(c.expectedPayer?.document),
          c.expectedPayer?.name ?? null,
          JSON.stringify(c.metadata),
          c.overpaymentPolicy,
          c.methods,
          c.transactionId,
          c.requestHash,
          c.ivaApplicable,
          c.merchantName,
          c.expiresAt.toISOString(),
          c.createdAt.toISOString(),
          currentTraceparent() ?? null,
          c.psePayer ? JSON.stringify(c.psePayer) : null,
          c.toleranceBelow.toString(),
          c.toleranceAbove.toString(),
        ],
      );
      return { created: true, cobro: toCobro(rows[0]!) };
    } catch (err) {
      if (!isUniqueViolation(err, 'cobros_company_reference_uq')) throw err;
      const existing = await this.issueFactsByReference(c.companyId, c.reference);
      if (!existing) throw err; // abandoned between the insert and the read: the caller retries
      return { created: false, existing };
    }
  }

  async issueFactsByReference(companyId: string, reference: string): Promise<CobroIssueFacts | undefined> {
    const rows = await this.db.prepared<CobroRow>(
      `select ${COLS} from pse_deposit.cobros c where company_id = $1 and reference = $2 and state <> 'ABANDONED'`,
      [companyId, reference],
    );
    const r = rows[0];
    return r && { cobro: toCobro(r), ivaApplicable: r.iva_applicable, merchantName: r.merchant_name, issueAttempts: r.issue_attempts };
  }

  async get(companyId: string, id: string): Promise<CobroRecord | undefined> {
    return this.snapshot(async (tx) => {
      const r = await tx.one<CobroRow>(`select ${COLS} from pse_deposit.cobros c where c.id = $1 and c.company_id = $2`, [id, companyId]);
      return r && toCobro(r, await paymentsOf(tx, r.id));
    });
  }

  /**
   * Reads in one snapshot (repeatable read): a cobro and its payments as one commit left them. Two
   * statements outside it could show a payment whose match committed between them with the totals of
   * before it (seen in an e2e: two payments listed, the paid total of one).
   */
  private snapshot<T>(fn: (tx: PreparedTx) => Promise<T>): Promise<T> {
    return this.db.preparedTx(async (tx) => {
      await tx.simple('set transaction isolation level repeatable read, read only');
      return fn(tx);
    });
  }

  /** Newest first by (created_at, id); CREATING and ABANDONED rows are never listed. */
  async list(companyId: string, f: CobroListFilter, limit: number, after: CobroCursor | null): Promise<Array<CobroRecord & { cursor: CobroCursor }>> {
    return this.snapshot((tx) => this.listIn(tx, companyId, f, limit, after));
  }

  private async listIn(
    tx: PreparedTx,
    companyId: string,
    f: CobroListFilter,
    limit: number,
    after: CobroCursor | null,
  ): Promise<Array<CobroRecord & { cursor: CobroCursor }>> {
    const rows = await tx.query<CobroRow>(
      `select ${COLS} from pse_deposit.cobros c
        where c.company_id = $1 and c.state not in ('CREATING', 'ABANDONED')
          and ($2::text is null or c.state = $2) and ($3::text is null or c.reference = $3)
          and ($4::timestamptz is null or c.created_at >= $4) and ($5::timestamptz is null or c.created_at <= $5)
          and ($6::timestamptz is null or (c.created_at, c.id) < ($6::timestamptz, $7::text))
        order by c.created_at desc, c.id desc limit $8`,
      [
        companyId,
        f.status ?? null,
        f.reference ?? null,
        f.createdFrom?.toISOString() ?? null,
        f.createdTo?.toISOString() ?? null,
        after?.createdAt ?? null,
        after?.id ?? null,
        limit,
      ],
    );
    // The page's payments in one read (a cobro has few; the listing shows them as the detail does).
    const payments = new Map<string, CobroPaymentRecord[]>();
    if (rows.length > 0) {
      const all = await tx.query<PaymentRow>(`select * from pse_deposit.cobro_payments where cobro_id = any($1::text[]) order by matched_at, deposit_id`, [
        rows.map((r) => r.id),
      ]);
      for (const p of all) payments.set(p.cobro_id, [...(payments.get(p.cobro_id) ?? []), toPayment(p)]);
    }
    return rows.map((r) => ({ ...toCobro(r, payments.get(r.id) ?? []), cursor: { createdAt: r.cursor_at ?? date(r.created_at).toISOString(), id: r.id } }));
  }

  /**
   * Applies `event` to the cobro when its state is one the event leaves from (COBRO_MACHINE); the
   * history row and the event (built from the changed cobro) commit with it. undefined: another
   * writer moved it first (the caller reads what it became).
   */
  async transition(
    id: string,
    event: CobroEvent,
    actor: CobroActor,
    patch: CobroPatch,
    mkEvent: (c: CobroRecord) => OutboxEvent | null,
  ): Promise<CobroRecord | undefined> {
    const t = COBRO_MACHINE[event];
    if (!t.by.includes(actor)) throw new Error(`cobro event ${event} is not ${actor}'s`);
    const out = await this.db.preparedTx(async (tx) => {
      const before = await tx.one<{ state: CobroState }>(`select state from pse_deposit.cobros where id = $1 for update`, [id]);
      if (!before || !t.from.includes(before.state)) return undefined;
      const rows = await tx.query<CobroRow>(
        `update pse_deposit.cobros set state = $2, updated_at = now(),
           breb_key_id = coalesce($3, breb_key_id), breb_key_value = coalesce($4, breb_key_value), qr_payload = coalesce($5, qr_payload),
           pse_deposit_id = coalesce($6, pse_deposit_id), pse_paygateway_url = coalesce($7, pse_paygateway_url),
           closed_at = case when $2 in ('EXPIRED', 'CANCELLED', 'ABANDONED') then now() else closed_at end
         where id = $1 returning *`,
        [
          id,
          t.to,
          patch.breb?.keyId ?? null,
          patch.breb?.keyValue ?? null,
          patch.breb?.qrPayload ?? null,
          patch.pse?.depositId ?? null,
          patch.pse?.paygatewayUrl ?? null,
        ],
      );
      await history(tx, id, event, before.state, t.to, actor, null);
      const rec = toCobro(rows[0]!, await paymentsOf(tx, id));
      const e = mkEvent(rec);
      if (e) await appendOutbox(tx, e);
      return rec;
    });
    if (out) this.eventsWritten();
    return out;
  }

  /** One more attempt at issuing the key of a CREATING cobro (the sweeper abandons it past its expiry). */
  async countIssueAttempt(id: string): Promise<void> {
    await this.db.prepared(`update pse_deposit.cobros set issue_attempts = issue_attempts + 1 where id = $1`, [id]);
  }

  /** CREATING cobros older than `before` (a creation interrupted or refused by collect-key), for the sweeper. */
  async stuckCreating(before: Date, limit: number): Promise<CobroIssueFacts[]> {
    const rows = await this.db.prepared<CobroRow>(
      `select ${COLS} from pse_deposit.cobros c where c.state = 'CREATING' and c.created_at < $1 order by c.created_at limit $2`,
      [before.toISOString(), limit],
    );
    return rows.map((r) => ({ cobro: toCobro(r), ivaApplicable: r.iva_applicable, merchantName: r.merchant_name, issueAttempts: r.issue_attempts }));
  }

  /** Open cobros whose expiresAt is before `before` (now less the grace for payments in flight). */
  async dueForExpiry(before: Date, limit: number): Promise<string[]> {
    const rows = await this.db.prepared<{ id: string }>(
      `select id from pse_deposit.cobros where state in ('OPEN', 'PARTIALLY_PAID') and expires_at < $1 order by expires_at limit $2`,
      [before.toISOString(), limit],
    );
    return rows.map((r) => r.id);
  }

  /** Closed cobros whose dynamic key is still to be deleted (PAID ones once past their expiry). */
  async keysToClose(now: Date, limit: number): Promise<Array<{ id: string; companyId: string }>> {
    const rows = await this.db.prepared<{ id: string; company_id: string }>(
      `select id, company_id from pse_deposit.cobros
        where key_closed_at is null and breb_key_id is not null
          and (state in ('EXPIRED', 'CANCELLED') or (state = 'PAID' and expires_at < $1))
        order by expires_at limit $2`,
      [now.toISOString(), limit],
    );
    return rows.map((r) => ({ id: r.id, companyId: r.company_id }));
  }

  async markKeyClosed(id: string): Promise<void> {
    await this.db.prepared(`update pse_deposit.cobros set key_closed_at = now() where id = $1 and key_closed_at is null`, [id]);
  }

  /**
   * Matches one credited inbound payment, in the caller's (inbox) transaction: the cobro it names
   * (its dynamic QR's transaction id, else the cobro of the dynamic key it was paid to), else the
   * company's cobro whose reference it carries, else the oldest-expiring open cobro of the company
   * that expects this payer and still has room for the amount. The cobro's row is locked, the decision
   * (decideMatch) taken on what it holds then, and the payment row's primary key (the deposit) makes a
   * second match of the same payment impossible. Nothing found: listed unmatched when the payment
   * named a cobro or its company uses cobros (made one once).
   */
  async match(tx: SqlTx, p: InboundPayment, now: Date, mkEvent: (c: CobroRecord, depositId: string, event: CobroEvent) => OutboxEvent): Promise<MatchOutcome> {
    const done = await tx.one(
      `select 1 as x from pse_deposit.cobro_payments where deposit_id = ? union all select 1 from pse_deposit.cobro_unmatched where deposit_id = ?
       union all select 1 from pse_deposit.cobro_payment_reversals where deposit_id = ?`,
      [p.depositId, p.depositId, p.depositId],
    );
    if (done) return { kind: 'repeat' };

    let row: CobroRow | undefined;
    let matchedBy: MatchedBy | null = null;
    if (p.transactionId) {
      row = await tx.one<CobroRow>(`select * from pse_deposit.cobros where transaction_id = ? and company_id = ? for update`, [p.transactionId, p.companyId]);
      if (row) matchedBy = 'TRANSACTION_ID';
    }
    if (!row && p.cobroId) {
      row = await tx.one<CobroRow>(`select * from pse_deposit.cobros where id = ? and company_id = ? for update`, [p.cobroId, p.companyId]);
      if (row) matchedBy = p.source === 'PSE' ? 'PSE_LINK' : 'DYNAMIC_KEY';
    }
    if (!row && p.reference) {
      row = await tx.one<CobroRow>(`select * from pse_deposit.cobros where company_id = ? and reference = ? and state <> 'ABANDONED' for update`, [
        p.companyId,
        p.reference,
      ]);
      if (row) matchedBy = 'REFERENCE';
    }
    const payerKey = documentKey(p.payerDocument);
    if (!row && payerKey) {
      // The rule: an open cobro that expects this payer, received in time, with room for the amount (a
      // FIXED/RANGE cobro's max not passed; an OPEN-amount one always), the soonest to expire first.
      row = await tx.one<CobroRow>(
        `select * from pse_deposit.cobros
          where company_id = ? and expected_payer_document_key = ? and state in ('OPEN', 'PARTIALLY_PAID') and expires_at >= ?::timestamptz
            and (amount_type = 'OPEN' or paid_amount + ?::bigint <= coalesce(max_amount, amount) + tolerance_above)
          order by expires_at, id limit 1 for update`,
        [p.companyId, payerKey, p.receivedAt.toISOString(), p.amount.toString()],
      );
      // Locked, the row was checked again as it is now (read committed); decideMatch decides on that.
      if (row) matchedBy = 'PAYER_RULE';
    }
    if (!row) {
      // Listed unmatched when it named a cobro, or when its company uses cobros (it made one once): a
      // primary-key read, whatever the size of the cobros table (docs/benchmarks.md "Cobro matching").
      const named = p.transactionId !== null || p.cobroId !== null;
      const usesCobros = named || (await tx.one(`select 1 as x from pse_deposit.cobro_companies where company_id = ?`, [p.companyId]));
      if (!usesCobros) return { kind: 'ignored' };
      const w = new MatchWrites(now);
      const out = w.unmatch(p, null, 'NO_MATCH');
      await w.flush(tx, mkEvent);
      return out;
    }

    return this.apply(tx, row, p, matchedBy!, 'matcher', now, mkEvent, false);
  }

  /**
   * A payment decided against a locked cobro row (MatchWrites): unmatched with its reason, or matched
   * (its row in cobro_payments, the cobro's new total and state under COBRO_MACHINE, history and event).
   * `manual`: a company attaching it by hand (its time of receipt does not bar it; the cobro must be open or PAID).
   */
  private async apply(
    tx: SqlTx,
    row: CobroRow,
    p: InboundPayment,
    matchedBy: MatchedBy,
    actor: CobroActor,
    now: Date,
    mkEvent: MatchEventBuilder,
    manual: boolean,
  ): Promise<MatchOutcome> {
    const w = new MatchWrites(now);
    const out = w.decide(row, p, matchedBy, actor, manual);
    if (await w.flush(tx, mkEvent)) this.eventsWritten();
    return out;
  }

  /**
   * A page of credited payments (the listing consumer's, in order) matched with the outcomes `match`
   * gives one by one, in a constant number of statements: one lookup for the page (lookupPage), one
   * lock of the cobros it found (in id order), the decisions in memory (MatchWrites), one write per
   * table. A payment whose cobro no longer qualifies once locked (a payer rule that an earlier payment
   * of the page filled, a concurrent change) ends the set-based part: what was decided is written and
   * the rest of the page goes through `match`, one by one, in order.
   */
  async matchMany(tx: SqlTx, ps: readonly InboundPayment[], now: Date, mkEvent: MatchEventBuilder): Promise<MatchOutcome[]> {
    const out: MatchOutcome[] = [];
    const oneByOne = async (from: number) => {
      for (const p of ps.slice(from)) out.push(await this.match(tx, p, now, mkEvent));
      return out;
    };
    if (ps.length < 2 || new Set(ps.map((p) => p.depositId)).size !== ps.length) return oneByOne(0);
    const found = await lookupPage(tx, ps);
    const ids = [...new Set(found.flatMap((f) => (f.cobroId && !f.done ? [f.cobroId] : [])))].sort();
    const locked = ids.length > 0 ? await tx.query<CobroRow>(`select * from pse_deposit.cobros where id = any(?::text[]) order by id for update`, [ids]) : [];
    const rows = new Map(locked.map((r) => [r.id, r]));
    const w = new MatchWrites(now);
    for (const [i, p] of ps.entries()) {
      const f = found[i]!;
      if (f.done) out.push({ kind: 'repeat' });
      else if (!f.cobroId || !f.by) {
        // Listed unmatched when it named a cobro, or when its company uses cobros (made one once).
        out.push(p.transactionId === null && p.cobroId === null && !f.uses ? { kind: 'ignored' } : w.unmatch(p, null, 'NO_MATCH'));
      } else {
        const row = rows.get(f.cobroId);
        if (!row || !stillFound(row, f.by, p)) {
          if (await w.flush(tx, mkEvent)) this.eventsWritten();
          return oneByOne(i);
        }
        out.push(w.decide(row, p, matchedByOf(f.by, p), 'matcher', false));
      }
    }
    if (await w.flush(tx, mkEvent)) this.eventsWritten();
    return out;
  }

  /**
   * A company attaches one of its credited payments to one of its cobros by hand (POST
   * /cobros/{id}/payments): the deposit and the cobro are locked, the payment must be ASSIGNED and not
   * matched to another cobro (the same cobro again answers as it is), the cobro must be open or PAID
   * (then the overpayment policy decides), and the payment leaves the unmatched list — one transaction.
   */
  async attach(
    companyId: string,
    cobroId: string,
    depositId: string,
    now: Date,
    mkEvent: (c: CobroRecord, depositId: string, event: CobroEvent) => OutboxEvent,
  ): Promise<AttachOutcome> {
    const out = await this.db.preparedTx(async (tx): Promise<AttachOutcome> => {
      const dep = await tx.one<{
        source: 'BREB' | 'PSE';
        status: string;
        amount: string;
        net_amount: string;
        payer_name: string | null;
        payer_first_name: string | null;
        payer_last_name: string | null;
        payer_document_number: string | null;
        provider_confirmed_at: Date | string | null;
        created_at: Date | string;
      }>(
        `select source, status, amount, net_amount, payer_name, payer_first_name, payer_last_name, payer_document_number, provider_confirmed_at, created_at
           from pse_deposit.deposits where id = $1 and company_id = $2 for update`,
        [depositId, companyId],
      );
      if (!dep) return { kind: 'refused', code: 'DEPOSIT_NOT_FOUND' };
      const row = await tx.one<CobroRow>(
        `select * from pse_deposit.cobros where id = $1 and company_id = $2 and state not in ('CREATING', 'ABANDONED') for update`,
        [cobroId, companyId],
      );
      if (!row) return { kind: 'refused', code: 'COBRO_NOT_FOUND' };
      const matched = await tx.one<{ cobro_id: string }>(`select cobro_id from pse_deposit.cobro_payments where deposit_id = $1`, [depositId]);
      if (matched) {
        if (matched.cobro_id === cobroId) return { kind: 'attached', cobro: toCobro(row, await paymentsOf(tx, cobroId)), repeat: true };
        return { kind: 'refused', code: 'INVALID_STATE_TRANSITION', message: `El pago ya está conciliado con el cobro ${matched.cobro_id}.` };
      }
      if (dep.status !== 'ASSIGNED') {
        return { kind: 'refused', code: 'INVALID_STATE_TRANSITION', message: `Solo se concilia un pago acreditado (ASSIGNED); este está ${dep.status}.` };
      }
      const name = dep.payer_name ?? ([dep.payer_first_name, dep.payer_last_name].filter(Boolean).join(' ') || null);
      const p: InboundPayment = {
        depositId,
        companyId,
        source: dep.source,
        amount: centsFromDb(dep.amount),
        netAmount: centsFromDb(dep.net_amount),
        payerName: name,
        payerDocument: dep.payer_document_number,
        receivedAt: date(dep.provider_confirmed_at ?? dep.created_at),
        transactionId: null,
        cobroId,
        reference: null,
      };
      // Returns made before the attach (kept by applyReturn) come off what the cobro keeps.
      const before = await tx.one<{ sum: string }>(
        `select coalesce(sum(amount), 0)::text as sum from pse_deposit.cobro_payment_returns where deposit_id = $1`,
        [depositId],
      );
      const r = await this.apply(tx, row, { ...p, returned: centsFromDb(before?.sum ?? '0') }, 'MANUAL', 'company', now, mkEvent, true);
      if (r.kind !== 'matched') {
        return {
          kind: 'refused',
          code: 'INVALID_STATE_TRANSITION',
          message: `El cobro está ${row.state}: solo se le concilia un pago mientras está abierto o pagado.`,
        };
      }
      await tx.query(`delete from pse_deposit.cobro_unmatched where deposit_id = $1`, [depositId]);
      return {
        kind: 'attached',
        cobro: toCobro((await tx.one<CobroRow>(`select * from pse_deposit.cobros where id = $1`, [cobroId]))!, await paymentsOf(tx, cobroId)),
        repeat: false,
      };
    });
    if (out.kind === 'attached' && !out.repeat) this.eventsWritten();
    return out;
  }

  /** The company's payments that matched no cobro (newest first), with the cobro each aimed at, if any. */
  async settings(companyId: string): Promise<CobroSettings> {
    const [r] = await this.db.prepared<{ amount_tolerance_cents: string; amount_tolerance_bps: number; settings_updated_at: Date | string | null }>(
      `select amount_tolerance_cents::text as amount_tolerance_cents, amount_tolerance_bps, settings_updated_at from pse_deposit.cobro_companies where company_id = $1`,
      [companyId],
    );
    return r
      ? { tolerance: { cents: centsFromDb(r.amount_tolerance_cents), bps: r.amount_tolerance_bps }, updatedAt: dateOrNull(r.settings_updated_at) }
      : { tolerance: { cents: 0n, bps: 0 }, updatedAt: null };
  }

  async setSettings(companyId: string, t: AmountTolerance, now: Date): Promise<CobroSettings> {
    await this.db.prepared(
      `insert into pse_deposit.cobro_companies (company_id, amount_tolerance_cents, amount_tolerance_bps, settings_updated_at) values ($1, $2::bigint, $3, $4::timestamptz)
       on conflict (company_id) do update set amount_tolerance_cents = excluded.amount_tolerance_cents, amount_tolerance_bps = excluded.amount_tolerance_bps,
         settings_updated_at = excluded.settings_updated_at`,
      [companyId, t.cents.toString(), t.bps, now.toISOString()],
    );
    return { tolerance: t, updatedAt: now };
  }

  async applyReturn(tx: SqlTx, r: PaymentReturned): Promise<'applied' | 'kept' | 'repeat' | 'automatic'> {
    const rows = await tx.query<{ inserted: number; counted: number; matched: boolean; automatic: boolean }>(
      `with pay as (select deposit_id, auto_return_id from pse_deposit.cobro_payments where deposit_id = ? and company_id = ? for update),
         ins as (insert into pse_deposit.cobro_payment_returns (return_id, deposit_id, company_id, amount)
                 select ?, ?, ?, ?::bigint where not exists (select 1 from pay where pay.auto_return_id = ?)
                 on conflict (return_id) do nothing returning amount),
         up as (update pse_deposit.cobro_payments p set returned_cents = p.returned_cents + ins.amount from ins, pay
                 where p.deposit_id = pay.deposit_id returning p.cobro_id, p.disposition, p.reversed_cents, ins.amount),
         -- A reversed payment no longer counts: its later return is kept on the payment only.
         c as (update pse_deposit.cobros c set returned_amount = c.returned_amount + up.amount, updated_at = now() from up
                 where c.id = up.cobro_id and up.disposition = 'COUNTED' and up.reversed_cents = 0 returning c.id)
       select (select count(*) from ins)::int as inserted, (select count(*) from c)::int as counted,
              exists (select 1 from pay) as matched, exists (select 1 from pay where pay.auto_return_id = ?) as automatic`,
      [r.depositId, r.companyId, r.returnId, r.depositId, r.companyId, r.amount.toString(), r.returnId, r.returnId],
    );
    const o = rows[0]!;
    if (o.automatic) return 'automatic';
    if (o.inserted === 0) return 'repeat';
    return o.matched ? 'applied' : 'kept';
  }

  /**
   * A provider's reversal of a payment (docs/cobros.md "Reversals"), in the caller's (inbox) transaction.
   * Once per payment: its row in cobro_payment_reversals (a redelivery, or the same reversal under another
   * event id, finds it; a payment whose reversal came first is never matched after it). Then, under the
   * payment's row lock and its cobro's (the order applyReturn takes them in), the payment is marked reversed
   * and, if it counted, the cobro loses what it counted (and what of it was returned); its EXCESS payments
   * count again while it is short (decideReversal), and its state follows through COBRO_MACHINE, with its
   * history row and `cobro.payment_reversed`. A payment matched to no cobro leaves the unmatched list.
   */
  async applyReversal(tx: SqlTx, r: PaymentReversed, now: Date, mkEvent: MatchEventBuilder): Promise<ReversalOutcome> {
    const fresh = await tx.query<{ deposit_id: string }>(
      `insert into pse_deposit.cobro_payment_reversals (deposit_id, company_id, amount, reversed_at) values (?, ?, ?::bigint, ?::timestamptz)
       on conflict (deposit_id) do nothing returning deposit_id`,
      [r.depositId, r.companyId, r.amount.toString(), r.reversedAt.toISOString()],
    );
    if (fresh.length === 0) return { kind: 'repeat' };
    const pay = await tx.one<PaymentRow>(`select * from pse_deposit.cobro_payments where deposit_id = ? and company_id = ? for update`, [
      r.depositId,
      r.companyId,
    ]);
    if (!pay) {
      const gone = await tx.query(`delete from pse_deposit.cobro_unmatched where deposit_id = ? and company_id = ? returning deposit_id`, [
        r.depositId,
        r.companyId,
      ]);
      return { kind: 'kept', unlisted: gone.length > 0 };
    }
    if (centsFromDb(pay.reversed_cents ?? '0') > 0n) return { kind: 'repeat' };
    const row = (await tx.one<CobroRow>(`select * from pse_deposit.cobros where id = ? for update`, [pay.cobro_id]))!;
    await tx.query(`update pse_deposit.cobro_payments set reversed_cents = amount where deposit_id = ?`, [r.depositId]);
    if (pay.disposition !== 'COUNTED') return { kind: 'applied', cobroId: row.id, counted: 0n, event: null };

    const counted = centsFromDb(pay.amount) - centsFromDb(pay.auto_return_cents);
    // The payments accepted beyond the PAID cobro, in their order: they count again while it is short.
    const excess = await tx.query<{ deposit_id: string; amount: string; returned_cents: string }>(
      `select deposit_id, amount::text as amount, returned_cents::text as returned_cents from pse_deposit.cobro_payments
        where cobro_id = ? and disposition = 'EXCESS' and reversed_cents = 0 order by matched_at, deposit_id for update`,
      [row.id],
    );
    const d = decideReversal(
      toCobro(row),
      counted,
      excess.map((x) => centsFromDb(x.amount)),
      now,
    );
    const promoted = excess.slice(0, d.promote);
    if (promoted.length > 0) {
      await tx.query(`update pse_deposit.cobro_payments set disposition = 'COUNTED' where deposit_id = any(?::text[])`, [promoted.map((x) => x.deposit_id)]);
    }
    const t = d.event ? COBRO_MACHINE[d.event] : null;
    if (d.event && t) {
      if (!t.from.includes(row.state)) throw new Error(`cobro ${row.id}: ${d.event} from ${row.state} is not in the table`);
      if (!t.by.includes('matcher')) throw new Error(`cobro event ${d.event} is not the matcher's`);
    }
    const to = t?.to ?? row.state;
    // What of the payment was returned leaves the cobro's returned amount with it; the promoted payments' returns join it.
    const returned = promoted.reduce((sum, x) => sum + centsFromDb(x.returned_cents), 0n) - centsFromDb(pay.returned_cents ?? '0');
    const [after] = await tx.query<CobroRow>(
      `update pse_deposit.cobros set paid_amount = ?::bigint, returned_amount = returned_amount + ?::bigint, state = ?, updated_at = now(),
         paid_at = case when ? = 'PAID' then paid_at else null end,
         closed_at = case when ? in ('EXPIRED', 'CANCELLED') and closed_at is null then now() else closed_at end
       where id = ? returning *`,
      [d.paidAmount.toString(), returned.toString(), to, to, to, row.id],
    );
    if (d.event && t) {
      await history(tx, row.id, d.event, row.state, t.to, 'matcher', r.depositId);
      await appendOutbox(tx, mkEvent(toCobro(after!, await paymentsOf(tx, row.id)), r.depositId, d.event));
      this.eventsWritten();
    }
    return { kind: 'applied', cobroId: row.id, counted, event: d.event };
  }

  async autoReturnsOwed(limit: number): Promise<OwedAutoReturn[]> {
    const rows = await this.db.prepared<{
      deposit_id: string;
      cobro_id: string;
      company_id: string;
      source: 'BREB' | 'PSE';
      auto_return_cents: string;
      auto_return_id: string;
    }>(
      `select deposit_id, cobro_id, company_id, source, auto_return_cents::text as auto_return_cents, auto_return_id
         from pse_deposit.cobro_payments where auto_return_status = 'OWED' order by matched_at limit $1`,
      [limit],
    );
    return rows.map((r) => ({
      depositId: r.deposit_id,
      cobroId: r.cobro_id,
      companyId: r.company_id,
      source: r.source,
      amount: centsFromDb(r.auto_return_cents),
      returnId: r.auto_return_id,
    }));
  }

  async settleAutoReturn(depositId: string, status: 'REQUESTED' | 'FAILED', error: string | null): Promise<boolean> {
    const rows = await this.db.prepared<{ deposit_id: string }>(
      `update pse_deposit.cobro_payments set auto_return_status = $2, auto_return_error = $3
        where deposit_id = $1 and auto_return_status = 'OWED' returning deposit_id`,
      [depositId, status, error],
    );
    return rows.length > 0;
  }

  async listUnmatched(companyId: string, limit: number, after: CobroCursor | null): Promise<Array<UnmatchedPayment & { cursor: CobroCursor }>> {
    const rows = await this.db.prepared<{
      deposit_id: string;
      cobro_id: string | null;
      reason: UnmatchedReason;
      source: 'BREB' | 'PSE';
      amount: string;
      received_at: Date | string;
      created_at: Date | string;
      cursor_at: string;
      payer_name: string | null;
      payer_document: string | null;
    }>(
      `select u.*, to_char(u.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at,
              d.payer_name, d.payer_document_number as payer_document
         from pse_deposit.cobro_unmatched u left join pse_deposit.deposits d on d.id = u.deposit_id
        where u.company_id = $1 and ($2::timestamptz is null or (u.created_at, u.deposit_id) < ($2::timestamptz, $3::text))
        order by u.created_at desc, u.deposit_id desc limit $4`,
      [companyId, after?.createdAt ?? null, after?.id ?? null, limit],
    );
    return rows.map((r) => ({
      depositId: r.deposit_id,
      cobroId: r.cobro_id,
      reason: r.reason,
      source: r.source,
      amount: centsFromDb(r.amount),
      payerName: r.payer_name,
      payerDocument: r.payer_document,
      receivedAt: date(r.received_at),
      createdAt: date(r.created_at),
      cursor: { createdAt: r.cursor_at, id: r.deposit_id },
    }));
  }
}
