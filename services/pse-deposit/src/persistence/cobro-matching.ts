import { currentTraceparent, type SqlTx } from '@wallet/platform';
import { autoReturnId, decideMatch, documentKey, type CobroRecord, type Disposition, type MatchedBy, type UnmatchedReason } from '../domain/cobro.js';
import { COBRO_MACHINE, type CobroActor, type CobroEvent } from '../domain/cobro-machine.js';
import type { OutboxEvent } from '../app/ports.js';
import type { InboundPayment, MatchOutcome } from '../app/cobro-ports.js';
import { centsOrNull, toCobro, toPayment, type CobroRow, type PaymentRow } from './cobro-rows.js';

export type MatchEventBuilder = (c: CobroRecord, depositId: string, event: CobroEvent) => OutboxEvent;

interface Counted {
  p: InboundPayment;
  cobroId: string;
  returned: bigint;
  matchedBy: MatchedBy;
  disposition: Disposition;
  returnCents: bigint;
}

/**
 * What matching payments writes, gathered in their order against locked cobro rows, then written by
 * `flush` with one statement per table: the payments, the cobros' new totals and states, their
 * history, the unmatched list, the events. A row is updated in memory as each payment counts, so the
 * next payment of a page is decided on the cobro as the one before left it, as one by one would; an
 * event carries its cobro as it was right after its own payment. The one-payment matcher, the
 * attach by hand and the page matcher (SqlCobroStore) all decide and write through it.
 */
export class MatchWrites {
  private readonly counted: Counted[] = [];
  private readonly unmatched: Array<{ p: InboundPayment; cobroId: string | null; reason: UnmatchedReason }> = [];
  private readonly history: Array<{ cobroId: string; event: CobroEvent; from: string; to: string; actor: CobroActor; depositId: string }> = [];
  /** Each cobro a payment counted for: its row as the last payment left it, and whether it became PAID here. */
  private readonly touched = new Map<string, { row: CobroRow; paidNow: boolean }>();
  private readonly events: Array<{ seq: number; row: CobroRow; paidNow: boolean; depositId: string; event: CobroEvent; traceparent: string | undefined }> = [];

  constructor(private readonly now: Date) {}

  /** Listed unmatched (`cobroId`: the cobro it aimed at, when it named one). */
  unmatch(p: InboundPayment, cobroId: string | null, reason: UnmatchedReason): MatchOutcome {
    this.unmatched.push({ p, cobroId, reason });
    return { kind: 'unmatched', cobroId, reason };
  }

  /**
   * Decides `p` against the locked `row` (decideMatch; COBRO_MACHINE checks the transition and its
   * actor) and updates `row` in memory. `manual`: a company attaching it by hand (its time of receipt
   * does not bar it; an unmatched decision is only answered, not listed).
   */
  decide(row: CobroRow, p: InboundPayment, matchedBy: MatchedBy, actor: CobroActor, manual: boolean): MatchOutcome {
    const cobro = toCobro(row);
    const d = decideMatch(cobro, { amount: p.amount, receivedAt: manual ? cobro.expiresAt : p.receivedAt });
    if (d.kind === 'unmatched') return manual ? { kind: 'unmatched', cobroId: cobro.id, reason: d.reason } : this.unmatch(p, cobro.id, d.reason);
    const t = d.event ? COBRO_MACHINE[d.event] : null;
    if (d.event && t) {
      if (!t.from.includes(cobro.state)) throw new Error(`cobro ${cobro.id}: ${d.event} from ${cobro.state} is not in the table`);
      if (!t.by.includes(actor)) throw new Error(`cobro event ${d.event} is not ${actor}'s`);
    }
    const returned = p.returned ?? 0n;
    this.counted.push({ p, cobroId: cobro.id, returned, matchedBy, disposition: d.disposition, returnCents: d.returnCents });
    // Money already returned to the payer of a payment that counts comes off what the cobro keeps.
    if (returned > 0n && d.disposition === 'COUNTED') row.returned_amount = (BigInt(row.returned_amount ?? '0') + returned).toString();
    let paidNow = this.touched.get(cobro.id)?.paidNow ?? false;
    if (d.event && t) {
      this.history.push({ cobroId: cobro.id, event: d.event, from: row.state, to: t.to, actor, depositId: p.depositId });
      row.state = t.to;
      row.paid_amount = d.paidAmount.toString();
      paidNow ||= t.to === 'PAID';
      this.events.push({ seq: this.counted.length - 1, row: { ...row }, paidNow, depositId: p.depositId, event: d.event, traceparent: p.traceparent });
    }
    this.touched.set(cobro.id, { row, paidNow });
    return { kind: 'matched', cobroId: cobro.id, matchedBy, disposition: d.disposition, event: d.event };
  }

  /** Writes what was decided, one statement per table; returns how many events it wrote. */
  async flush(tx: SqlTx, mkEvent: MatchEventBuilder): Promise<number> {
    const now = this.now.toISOString();
    const c = this.counted;
    if (c.length > 0) {
      await tx.query(
        `insert into pse_deposit.cobro_payments (deposit_id, cobro_id, company_id, source, amount, net_amount, matched_by, disposition, payer_name, payer_document,
           received_at, matched_at, auto_return_cents, auto_return_id, auto_return_status, returned_cents)
         select deposit_id, cobro_id, company_id, source, amount, net_amount, matched_by, disposition, payer_name, payer_document, received_at,
           -- After the cobro's last payment and a microsecond apart in their order: a cobro lists its payments in the order
           -- they were matched, whatever the clock's resolution.
           greatest(?::timestamptz, (select max(x.matched_at) + interval '1 microsecond' from pse_deposit.cobro_payments x where x.cobro_id = v.cobro_id))
             + (ord - 1) * interval '1 microsecond',
           auto_return_cents, auto_return_id, auto_return_status, returned_cents
           from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[],
             ?::bigint[], ?::text[], ?::text[], ?::bigint[]) with ordinality
             as v(deposit_id, cobro_id, company_id, source, amount, net_amount, matched_by, disposition, payer_name, payer_document, received_at,
               auto_return_cents, auto_return_id, auto_return_status, returned_cents, ord)`,
        [
          now,
          c.map((x) => x.p.depositId),
          c.map((x) => x.cobroId),
          c.map((x) => x.p.companyId),
          c.map((x) => x.p.source),
          c.map((x) => x.p.amount.toString()),
          c.map((x) => x.p.netAmount.toString()),
          c.map((x) => x.matchedBy),
          c.map((x) => x.disposition),
          c.map((x) => x.p.payerName),
          c.map((x) => x.p.payerDocument),
          c.map((x) => x.p.receivedAt.toISOString()),
          c.map((x) => x.returnCents.toString()),
          c.map((x) => (x.returnCents > 0n ? autoReturnId(x.p.depositId) : null)),
          c.map((x) => (x.returnCents > 0n ? 'OWED' : null)),
          c.map((x) => x.returned.toString()),
        ],
      );
    }
    let txNow: Date | undefined;
    if (this.touched.size > 0) {
      const t = [...this.touched.values()].sort((a, b) => (a.row.id < b.row.id ? -1 : 1));
      const rows = await tx.query<{ now: Date }>(
        `update pse_deposit.cobros c set state = v.state, paid_amount = v.paid_amount, returned_amount = v.returned_amount, updated_at = now(),
           paid_at = case when v.paid_now then now() else c.paid_at end
           from unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::boolean[]) as v(id, state, paid_amount, returned_amount, paid_now)
          where c.id = v.id returning now() as now`,
        [
          t.map((x) => x.row.id),
          t.map((x) => x.row.state),
          t.map((x) => x.row.paid_amount),
          t.map((x) => x.row.returned_amount ?? '0'),
          t.map((x) => x.paidNow),
        ],
      );
      txNow = rows[0]?.now;
    }
    const h = this.history;
    if (h.length > 0) {
      await tx.query(
        `insert into pse_deposit.cobro_history (cobro_id, event, from_state, to_state, actor, deposit_id)
         select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])`,
        [h.map((x) => x.cobroId), h.map((x) => x.event), h.map((x) => x.from), h.map((x) => x.to), h.map((x) => x.actor), h.map((x) => x.depositId)],
      );
    }
    const u = this.unmatched;
    if (u.length > 0) {
      await tx.query(
        `insert into pse_deposit.cobro_unmatched (deposit_id, company_id, cobro_id, reason, source, amount, received_at, created_at)
         select deposit_id, company_id, cobro_id, reason, source, amount, received_at, ?::timestamptz
           from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::timestamptz[])
             as v(deposit_id, company_id, cobro_id, reason, source, amount, received_at)
         on conflict (deposit_id) do nothing`,
        [
          now,
          u.map((x) => x.p.depositId),
          u.map((x) => x.p.companyId),
          u.map((x) => x.cobroId),
          u.map((x) => x.reason),
          u.map((x) => x.p.source),
          u.map((x) => x.p.amount.toString()),
          u.map((x) => x.p.receivedAt.toISOString()),
        ],
      );
    }
    if (this.events.length === 0) return 0;
    // Each event shows its cobro's payments up to its own: the ones counted here after it are left out.
    const seqOf = new Map(c.map((x, i) => [x.p.depositId, i]));
    const all = await tx.query<PaymentRow>(`select * from pse_deposit.cobro_payments where cobro_id = any(?::text[]) order by matched_at, deposit_id`, [
      [...new Set(this.events.map((e) => e.row.id))],
    ]);
    const out = this.events.map((e) => {
      const row: CobroRow = { ...e.row, updated_at: txNow ?? e.row.updated_at, paid_at: e.paidNow ? (txNow ?? e.row.paid_at) : e.row.paid_at };
      const payments = all.filter((r) => r.cobro_id === e.row.id && (seqOf.get(r.deposit_id) ?? -1) <= e.seq).map(toPayment);
      const oe = mkEvent(toCobro(row, payments), e.depositId, e.event);
      const traceparent = oe.traceparent ?? e.traceparent ?? currentTraceparent();
      return { ...oe, headers: JSON.stringify(traceparent ? { traceparent } : {}) };
    });
    await tx.query(
      `insert into pse_deposit.outbox (id, subject, payload, headers)
       select id::uuid, subject, payload::jsonb, headers::jsonb from unnest(?::text[], ?::text[], ?::text[], ?::text[]) as v(id, subject, payload, headers)`,
      [out.map((e) => e.id), out.map((e) => e.subject), out.map((e) => JSON.stringify(e.payload)), out.map((e) => e.headers)],
    );
    return out.length;
  }
}

/** What the page lookup found for one payment: already handled, the cobro it points at and how, whether its company uses cobros. */
export interface PageFind {
  done: boolean;
  cobroId: string | null;
  by: 'TRANSACTION_ID' | 'ID' | 'REFERENCE' | 'PAYER_RULE' | null;
  uses: boolean;
}

/** The page lookup (exported for the benchmark, which explains it as the service runs it). */
export const PAGE_LOOKUP_SQL = `with p as (
       select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::bigint[])
         with ordinality as p(deposit_id, company_id, transaction_id, cobro_id, reference, payer_key, received_at, amount, ord))
     select p.ord::int as ord, seen.x is not null as done, m.id as cobro_id, m.by, uses.x is not null as uses
     from p
     -- Lateral probes by primary key (never a hashed subplan over the whole table: flat in its size).
     left join lateral (
       (select 1 as x from pse_deposit.cobro_payments x where x.deposit_id = p.deposit_id)
       union all (select 1 from pse_deposit.cobro_unmatched u where u.deposit_id = p.deposit_id)
       -- A payment reversed before its match arrived (events out of order) is never matched.
       union all (select 1 from pse_deposit.cobro_payment_reversals r where r.deposit_id = p.deposit_id) limit 1) seen on true
     left join lateral (select 1 as x from pse_deposit.cobro_companies cc where cc.company_id = p.company_id limit 1) uses on true
     left join lateral (
       select x.id, x.by from (
         (select c.id, 'TRANSACTION_ID'::text as by, 1 as k from pse_deposit.cobros c
           where p.transaction_id is not null and c.transaction_id = p.transaction_id and c.company_id = p.company_id limit 1)
         union all
         (select c.id, 'ID'::text, 2 from pse_deposit.cobros c where p.cobro_id is not null and c.id = p.cobro_id and c.company_id = p.company_id)
         union all
         (select c.id, 'REFERENCE'::text, 3 from pse_deposit.cobros c
           where p.reference is not null and c.company_id = p.company_id and c.reference = p.reference and c.state <> 'ABANDONED' limit 1)
         union all
         (select c.id, 'PAYER_RULE'::text, 4 from pse_deposit.cobros c
           where p.payer_key is not null and c.company_id = p.company_id and c.expected_payer_document_key = p.payer_key
             and c.state in ('OPEN', 'PARTIALLY_PAID') and c.expires_at >= p.received_at
             and (c.amount_type = 'OPEN' or c.paid_amount + p.amount <= coalesce(c.max_amount, c.amount) + c.tolerance_above)
           order by c.expires_at, c.id limit 1)
       ) x order by x.k limit 1) m on true
     order by p.ord`;

/**
 * One statement for a page of payments: for each, whether it was matched or listed before (or reversed), and the
 * cobro the one-payment matcher would look for, in its order (the QR's transaction id, the cobro it
 * names, the company's reference, the payer rule), without locking. The caller locks what it found and
 * checks each again on the locked row (`stillFound`).
 */
export async function lookupPage(tx: SqlTx, ps: readonly InboundPayment[]): Promise<PageFind[]> {
  const rows = await tx.query<{ ord: number; done: boolean; cobro_id: string | null; by: PageFind['by']; uses: boolean }>(PAGE_LOOKUP_SQL, [
    ps.map((p) => p.depositId),
    ps.map((p) => p.companyId),
    ps.map((p) => p.transactionId),
    ps.map((p) => p.cobroId),
    ps.map((p) => p.reference),
    ps.map((p) => documentKey(p.payerDocument) ?? null),
    ps.map((p) => p.receivedAt.toISOString()),
    ps.map((p) => p.amount.toString()),
  ]);
  return rows.map((r) => ({ done: r.done, cobroId: r.cobro_id, by: r.by, uses: r.uses }));
}

/**
 * Whether the locked row (as the page's earlier payments left it) is still the cobro the lookup found
 * for `p`. A transaction id or a cobro id never changes; a reference only leads to a cobro that is not
 * ABANDONED; the payer rule's cobro must still be open, in time and have room. Only a row that no
 * longer qualifies can change the answer (the lookup's other candidates do not gain room), so
 * anything else is sent back to the one-payment matcher.
 */
export function stillFound(row: CobroRow, by: NonNullable<PageFind['by']>, p: InboundPayment): boolean {
  if (by === 'TRANSACTION_ID' || by === 'ID') return true;
  if (by === 'REFERENCE') return row.state !== 'ABANDONED';
  if (row.state !== 'OPEN' && row.state !== 'PARTIALLY_PAID') return false;
  if (new Date(row.expires_at).getTime() < p.receivedAt.getTime()) return false;
  if (row.amount_type === 'OPEN') return true;
  const max = centsOrNull(row.max_amount) ?? centsOrNull(row.amount);
  return max !== null && BigInt(row.paid_amount) + p.amount <= max + BigInt(row.tolerance_above ?? '0');
}

/** How a payment that named its cobro was matched: a PSE link's, or a dynamic key's. */
export const matchedByOf = (by: NonNullable<PageFind['by']>, p: InboundPayment): MatchedBy =>
  by === 'ID' ? (p.source === 'PSE' ? 'PSE_LINK' : 'DYNAMIC_KEY') : by;
