import { sqlInstant, type Database, type Tx } from '@wallet/platform';
import type { InvariantReport, JournalCheckOptions, JournalCheckReport, JournalCut } from '../app/ports.js';
import { hourEnd } from './checkpoint.store.js';

export type { InvariantReport, JournalCheckOptions, JournalCheckReport, JournalCut };
/** The reconciliation's clearing accounts (the cross-service `clearing` check reads them). */
export { CLEARINGS, CLEARING_ACCOUNTS, type Clearing } from '../domain/rails.js';

/** Runs one read statement; the caller decides the connection, role and snapshot. */
export type ReadSql = <R>(sql: string) => Promise<R[]>;

/** At most this many offenders are listed per check (the count is always given). */
const LIST = 50;

const LIVE = `('PENDING', 'AWAITING_APPROVAL', 'EXECUTING')`;

/**
 * LEDGER.md invariants 1-8 as SQL over one snapshot (repeatable read), so a check never sees half
 * of a posting being written. Each check returns its offenders as readable lines. `record`: when
 * nothing is wrong, the check moves the verified cut to what it checked, in its own snapshot (the
 * ledger's self-check; a read-only caller never records).
 */
export async function checkInvariants(db: Database, o: JournalCheckOptions & { record?: boolean } = {}): Promise<JournalCheckReport & { cut?: JournalCut }> {
  const started = performance.now();
  return db.tx(
    async (tx) => {
      const read: ReadSql = (sql) => tx.query(sql);
      const prior = o.record ? await readCut(read) : null;
      // A full check that records sums every wallet's entries once, split into sealed and queued postings:
      // check 2 reads all of it, the cut keeps the sealed part (it used to aggregate the journal a second time).
      const walletSums = o.record && (o.mode !== 'incremental' || prior === null);
      if (walletSums) await tx.query(`create temp table ${WALLET_SUMS} on commit drop as ${walletSumsSql}`);
      const report = await checkJournal(read, o, walletSums ? { walletSums: WALLET_SUMS } : {});
      if (!o.record || report.violations.length > 0) return report;
      const cut = await recordCut(tx, report, prior, Math.round(performance.now() - started));
      return cut ? { ...report, cut } : report;
    },
    { isolation: 'repeatable read' },
  );
}

/** The recording full check's one pass over the wallets' entries (a temporary table of the check's transaction). */
const WALLET_SUMS = 'ledger_check_wallet_sums';

/**
 * Each wallet's sums (its two accounts, and the postings touching them), apart for the postings sealed up to
 * the snapshot's journal head and those still queued (every committed posting is one or the other).
 */
const walletSumsSql = `
  select split_part(e.account, ':', 2) as company_id, split_part(e.account, ':', 3) as rail,
         (q.posting_id is not null) as queued,
         coalesce(sum(e.amount) filter (where starts_with(e.account, 'wallet_available:')), 0) as available,
         coalesce(sum(e.amount) filter (where starts_with(e.account, 'wallet_pending_out:')), 0) as pending,
         count(distinct e.posting_id) as postings
    from ledger.entries e
    -- a join (hashed on the queue, which is small), not \`in (select …)\` in the select list: that is a subplan
    -- per entry when the queue's statistics are stale
    left join (select distinct posting_id from ledger.journal_queue) q on q.posting_id = e.posting_id
   where starts_with(e.account, 'wallet_available:') or starts_with(e.account, 'wallet_pending_out:')
   group by 1, 2, 3`;

/** The latest verified cut, as the given snapshot sees it (null: none recorded yet). */
export async function readCut(read: ReadSql): Promise<JournalCut | null> {
  const [c] = await read<{ seq: string; checkpoints_through: string | null; verified_at: string; mode: 'full' | 'incremental' }>(
    `select seq::text as seq, ${sqlInstant('checkpoints_through')} as checkpoints_through, ${sqlInstant('verified_at')} as verified_at, mode
       from ledger.journal_cut`,
  );
  return c ? { seq: BigInt(c.seq), checkpointsThrough: c.checkpoints_through, verifiedAt: c.verified_at, mode: c.mode } : null;
}

/**
 * Moves the verified cut to the journal's last sealed position in the check's snapshot: each wallet's
 * sums over the postings sealed since the old cut are added to its row (in full: every wallet's sums
 * from the beginning, written afresh from the check's own pass). Optimistic: the cut row (`prior`, as the
 * snapshot saw it) is updated only where it still is what the snapshot saw, so a check that raced
 * another's recording fails (a serialization failure, or the primary key of a first cut) instead of
 * counting a stretch twice. Null: nothing sealed since the cut.
 */
async function recordCut(tx: Tx, r: JournalCheckReport, prior: JournalCut | null, durationMs: number): Promise<JournalCut | undefined> {
  const [head] = await tx.query<{ seq: string; hash: Buffer | null; checkpoints_through: string | null; queued_entries: string }>(
    `select coalesce((select max(seq) from ledger.journal), 0)::text as seq,
            (select j.hash from ledger.journal j order by j.seq desc limit 1) as hash,
            (select ${sqlInstant('p.through')} from ledger.balance_checkpoint_progress p) as checkpoints_through,
            (select count(*) from ledger.entries e where e.posting_id in (select q.posting_id from ledger.journal_queue q))::text as queued_entries`,
  );
  const seq = BigInt(head!.seq);
  const from = r.mode === 'incremental' && r.since ? r.since.seq : null;
  if (from !== null && seq === from) return undefined;
  // The entries of the postings sealed up to the cut: all of them but the queued ones' (the snapshot's).
  const entries = r.entries - BigInt(head!.queued_entries);
  if (from === null) {
    await tx.query('delete from ledger.journal_cut_wallets');
    await tx.query(
      `insert into ledger.journal_cut_wallets (company_id, rail, available_cents, pending_out_cents, postings, seq)
       select company_id, rail, available, pending, postings, ?::bigint from ${WALLET_SUMS} where not queued`,
      [seq.toString()],
    );
  } else {
    await tx.query(
      `insert into ledger.journal_cut_wallets as w (company_id, rail, available_cents, pending_out_cents, postings, seq)
       select split_part(e.account, ':', 2), split_part(e.account, ':', 3),
              coalesce(sum(e.amount) filter (where starts_with(e.account, 'wallet_available:')), 0),
              coalesce(sum(e.amount) filter (where starts_with(e.account, 'wallet_pending_out:')), 0),
              count(distinct e.posting_id), ?::bigint
         from ledger.journal j join ledger.entries e on e.posting_id = j.posting_id
        where j.seq > ?::bigint and j.seq <= ?::bigint
          and (starts_with(e.account, 'wallet_available:') or starts_with(e.account, 'wallet_pending_out:'))
        group by 1, 2
       on conflict (company_id, rail) do update
          set available_cents = w.available_cents + excluded.available_cents, pending_out_cents = w.pending_out_cents + excluded.pending_out_cents,
              postings = w.postings + excluded.postings, seq = excluded.seq`,
      [seq.toString(), from.toString(), seq.toString()],
    );
  }
  const row = [seq.toString(), head!.hash, head!.checkpoints_through, entries.toString(), r.mode, durationMs];
  const [written] =
    prior === null
      ? await tx.query<{ verified_at: string }>(
          `insert into ledger.journal_cut (seq, hash, checkpoints_through, entries, mode, duration_ms)
           values (?::bigint, ?, ?::timestamptz, ?::bigint, ?, ?) returning ${sqlInstant('verified_at')} as verified_at`,
          row,
        )
      : await tx.query<{ verified_at: string }>(
          `update ledger.journal_cut set seq = ?::bigint, hash = ?, checkpoints_through = ?::timestamptz, entries = ?::bigint, mode = ?,
                  duration_ms = ?, verified_at = now()
            where seq = ?::bigint returning ${sqlInstant('verified_at')} as verified_at`,
          [...row, prior.seq.toString()],
        );
  if (!written) throw new Error('the verified cut moved during the check; not recorded');
  return { seq, checkpointsThrough: head!.checkpoints_through, verifiedAt: written.verified_at, mode: r.mode };
}

/**
 * The same checks over any read path: the ledger's own transaction above, or the cross-service
 * checker's snapshot under the ledger's read-only role (services/invariants).
 */
export async function checkJournal(read: ReadSql, o: JournalCheckOptions = {}, pass: { walletSums?: string } = {}): Promise<JournalCheckReport> {
  const since = o.mode === 'incremental' ? await readCut(read) : null;
  {
    const q = scopeOf(since);
    const violations: string[] = [];
    const check = async (sql: string, line: (r: Record<string, string>) => string) => {
      const rows = await read<Record<string, string>>(`${sql} limit ${LIST + 1}`);
      for (const r of rows.slice(0, LIST)) violations.push(line(r));
      if (rows.length > LIST) violations.push('… more rows of the check above were not listed');
    };

    // 1. All entries sum to zero; every posting sums to zero and has at least two lines. (Incremental: the
    //    new postings; the journal's total is then the cut's zero plus theirs, each zero.)
    if (!since) {
      await check(
        `select sum(amount)::text as total from ledger.entries having coalesce(sum(amount), 0) <> 0`,
        (r) => `[1] the journal sums to ${r.total}, not 0`,
      );
    }
    await check(
      `select posting_id::text as id, sum(amount)::text as total from ledger.entries ${q.where('posting_id')} group by posting_id having sum(amount) <> 0`,
      (r) => `[1] posting ${r.id} sums to ${r.total}, not 0`,
    );
    // (A `void` posting is a fence on an idempotency key: it moves no money and has no entries.)
    await check(
      `select p.id::text as id, count(e.posting_id)::text as n from ledger.postings p
        left join ledger.entries e on e.posting_id = p.id ${q.where('p.id')} group by p.id
        having count(e.posting_id) < 2 and bool_and(p.kind <> 'void') or (bool_or(p.kind = 'void') and count(e.posting_id) > 0)`,
      (r) => `[1] posting ${r.id} has ${r.n} entries`,
    );
    if (!since) {
      await check(
        `select distinct e.posting_id::text as id from ledger.entries e
          where not exists (select 1 from ledger.postings p where p.id = e.posting_id)`,
        (r) => `[1] entries of unknown posting ${r.id}`,
      );
    }

    // A reconciliation adjustment (PostClearingAdjustment) belongs to no company and is exactly its two
    // lines: a clearing account +delta and its reconciliation_differences twin −delta; nothing else
    // touches reconciliation_differences.
    // Only a recon_adjustment posting, or one with a reconciliation_differences line, can break it: those
    // are found first (two filtered scans), then grouped with their entries (grouping every posting with
    // its entries took 20 s at 1,000,000 postings; this, 0.3 s).
    await check(
      `with suspects as (
         select p.id from ledger.postings p where p.kind = 'recon_adjustment' ${q.and('p.id')}
         union
         select r.posting_id from ledger.entries r where starts_with(r.account, 'reconciliation_differences:') ${q.and('r.posting_id')})
       select p.id::text as id, p.kind, p.company_id, count(e.posting_id)::text as n
         from suspects s join ledger.postings p on p.id = s.id join ledger.entries e on e.posting_id = p.id
       group by p.id
      having bool_or(starts_with(e.account, 'reconciliation_differences:')) <> (p.kind = 'recon_adjustment')
          or (p.kind = 'recon_adjustment' and (p.company_id <> '' or count(*) <> 2
              or count(*) filter (where e.account in ('rail_clearing:BREB', 'rail_clearing:ACH', 'pse_settlement', 'breb_settlement')) <> 1
              or count(*) filter (where e.account in ('reconciliation_differences:rail_clearing:BREB', 'reconciliation_differences:rail_clearing:ACH',
                    'reconciliation_differences:pse_settlement', 'reconciliation_differences:breb_settlement')) <> 1
              or count(distinct regexp_replace(e.account, '^reconciliation_differences:', '')) <> 1))`,
      (r) => `[1] posting ${r.id} (${r.kind}, company '${r.company_id}', ${r.n} entries) is not a clearing account against its reconciliation_differences`,
    );

    // 2. Each wallet equals the sum of its accounts' entries; version = postings touching it.
    //    (Incremental: the cut's sums plus the new postings'.)
    await check(
      `
      with ${
        pass.walletSums && !since
          ? `fresh as (
        select company_id, rail, sum(available) as available, sum(pending) as pending, sum(postings) as postings
          from ${pass.walletSums} group by company_id, rail`
          : `we as (
        select split_part(account, ':', 1) as kind, split_part(account, ':', 2) as company_id,
               split_part(account, ':', 3) as rail, posting_id, amount
          from ledger.entries
         where (starts_with(account, 'wallet_available:') or starts_with(account, 'wallet_pending_out:')) ${q.and('posting_id')}
      ), fresh as (
        select company_id, rail,
               coalesce(sum(amount) filter (where kind = 'wallet_available'), 0) as available,
               coalesce(sum(amount) filter (where kind = 'wallet_pending_out'), 0) as pending,
               count(distinct posting_id) as postings
          from we group by company_id, rail`
      }
      ), agg as (${
        since
          ? `select coalesce(c.company_id, f.company_id) as company_id, coalesce(c.rail, f.rail) as rail,
                    coalesce(c.available_cents, 0) + coalesce(f.available, 0) as available,
                    coalesce(c.pending_out_cents, 0) + coalesce(f.pending, 0) as pending,
                    coalesce(c.postings, 0) + coalesce(f.postings, 0) as postings
               from ledger.journal_cut_wallets c full join fresh f on f.company_id = c.company_id and f.rail = c.rail`
          : 'select * from fresh'
      })
      select coalesce(w.company_id, a.company_id) as company_id, coalesce(w.rail, a.rail) as rail,
             (w.company_id is not null)::text as has_row,
             coalesce(w.available_cents, 0)::text as available, coalesce(a.available, 0)::text as journal_available,
             coalesce(w.pending_out_cents, 0)::text as pending, coalesce(a.pending, 0)::text as journal_pending,
             coalesce(w.version, 0)::text as version, coalesce(a.postings, 0)::text as postings
        from ledger.wallets w full join agg a on a.company_id = w.company_id and a.rail = w.rail
       where w.company_id is null
          or w.available_cents <> coalesce(a.available, 0)
          or w.pending_out_cents <> coalesce(a.pending, 0)
          or w.version <> coalesce(a.postings, 0)`,
      (r) =>
        r.has_row === 'false'
          ? `[2] entries on wallet ${r.company_id}:${r.rail}, which does not exist`
          : `[2] wallet ${r.company_id}:${r.rail}: available ${r.available} vs journal ${r.journal_available}, ` +
            `pending_out ${r.pending} vs journal ${r.journal_pending}, version ${r.version} vs ${r.postings} postings`,
    );

    // 3. pending_out = the sum of open holds; an open hold ⇔ a live transfer. (Incremental: every open
    //    hold and live transfer, and those a new posting touched: a hold closes and a transfer ends only
    //    by a posting.)
    await check(
      `
      select w.company_id, w.rail, w.pending_out_cents::text as pending, coalesce(h.total, 0)::text as holds
        from ledger.wallets w
        left join (select company_id, rail, sum(total) as total from ledger.holds where status = 'OPEN' group by company_id, rail) h
          on h.company_id = w.company_id and h.rail = w.rail
       where w.pending_out_cents <> coalesce(h.total, 0)`,
      (r) => `[3] wallet ${r.company_id}:${r.rail}: pending_out ${r.pending} but open holds total ${r.holds}`,
    );
    await check(
      `
      select h.id::text as id, h.status, coalesce(m.status, 'none') as movement_status
        from ledger.holds h left join ledger.movements m on m.id = h.movement_id and m.company_id = h.company_id
       where (m.id is null or m.type <> 'TRANSFER_OUT'
          or (h.status = 'OPEN' and m.status not in ${LIVE})
          or (h.status = 'COMMITTED' and m.status <> 'COMPLETED')
          or (h.status = 'RELEASED' and m.status not in ('FAILED', 'EXPIRED')))
         ${since ? `and (h.status = 'OPEN' or h.id in (select p.hold_id from ledger.postings p where p.hold_id is not null ${q.and('p.id')}))` : ''}`,
      (r) => `[3] hold ${r.id} is ${r.status} but its transfer is ${r.movement_status}`,
    );
    await check(
      `
      select m.id::text as id, m.status from ledger.movements m
       where m.type = 'TRANSFER_OUT' and m.move_id is null
         and not exists (select 1 from ledger.holds h where h.movement_id = m.id
                          and (h.status = 'OPEN') = (m.status in ${LIVE}))
         ${since ? `and (m.status in ${LIVE} or m.id in (${q.touchedMovements}))` : ''}`,
      (r) => `[3] transfer ${r.id} is ${r.status} without a matching hold`,
    );

    // 4. wallet_available >= 0, except a wallet a recorded reversal posting touched (LEDGER.md:
    //    the one posting allowed to take available below zero).
    await check(
      `select w.company_id, w.rail, w.available_cents::text as available from ledger.wallets w
       where w.available_cents < 0
         and not exists (select 1 from ledger.postings p where p.kind = 'reversal' and p.company_id = w.company_id and p.rail = w.rail)`,
      (r) => `[4] wallet ${r.company_id}:${r.rail} available is ${r.available}`,
    );

    // 5. A movement's amounts equal the entries of its postings. (Incremental: the movements a new
    //    posting belongs to, each with all its postings: a movement is written by its first posting's
    //    statement, so none of its postings is older than it; and the legs of a new move.)
    await check(
      `
      with ${since ? `mm as (select * from ledger.movements where id in (${q.touchedMovements})),` : ''}
      me as (
        select p.movement_id, split_part(e.account, ':', 1) as cls, sum(e.amount) as amt
          from ${
            since
              ? `mm join ledger.postings p on p.company_id = mm.company_id and p.created_at >= mm.created_at and p.movement_id = mm.id`
              : 'ledger.postings p'
          }
          join ledger.entries e on e.posting_id = p.id
         where p.movement_id is not null group by p.movement_id, split_part(e.account, ':', 1)
      ), pm as (
        select movement_id,
               coalesce(sum(amt) filter (where cls = 'wallet_available'), 0) as avail,
               coalesce(sum(amt) filter (where cls = 'wallet_pending_out'), 0) as pend,
               coalesce(sum(amt) filter (where cls = 'fee_revenue'), 0) as fee,
               coalesce(sum(amt) filter (where cls = 'iva_payable'), 0) as iva,
               coalesce(sum(amt) filter (where cls = 'rail_clearing'), 0) as clearing,
               -- the money's origin: funding (admin credits), a provider's settlement, or unassigned funds
               -- (a held Bre-B payment assigned to its company later: the one movement posting that touches them)
               coalesce(sum(amt) filter (where cls in ('funding', 'pse_settlement', 'breb_settlement', 'unassigned_funds')), 0) as source
          from me group by movement_id
      ), mv as (
        select m.*, exists (select 1 from ledger.holds h where h.movement_id = m.id and h.return_of is not null) as is_return,
               coalesce(pm.avail, 0) as avail, coalesce(pm.pend, 0) as pend, coalesce(pm.fee, 0) as fee,
               coalesce(pm.iva, 0) as iva, coalesce(pm.clearing, 0) as clearing, coalesce(pm.source, 0) as source,
               m.amount + m.total_fee + m.iva_amount as t,
               -- a move's leg (docs/wallet-moves.md): what its move posting did to the leg's own wallet
               (select coalesce(sum(e.amount), 0) from ledger.postings p join ledger.entries e on e.posting_id = p.id
                 where m.move_id is not null and p.id = m.move_id and p.kind = 'move'
                   and e.account = 'wallet_available:' || m.company_id || ':' || m.wallet_rail) as leg
          from ${since ? 'mm m' : 'ledger.movements m'} left join pm on pm.movement_id = m.id
      )
      select id::text as id, type, status, amount::text as amount, total_fee::text as total_fee, iva_amount::text as iva_amount,
             net_amount::text as net_amount, avail::text as avail, pend::text as pend, fee::text as fee, iva::text as iva,
             clearing::text as clearing, source::text as source
        from mv
       where not coalesce(case when move_id is not null
         then status = 'COMPLETED' and total_fee = 0 and iva_amount = 0 and net_amount = amount and rail = wallet_rail
              and leg = case type when 'TRANSFER_OUT' then -amount when 'TRANSFER_IN' then amount end
         else case type
         when 'BALANCE_ADD' then avail = amount and net_amount = amount and source = -amount
              and total_fee = 0 and iva_amount = 0 and pend = 0 and fee = 0 and iva = 0 and clearing = 0
         when 'FEE_CHARGE' then avail = -(total_fee + iva_amount) and fee = total_fee and iva = iva_amount
              and amount = total_fee + iva_amount and net_amount = amount and pend = 0 and clearing = 0 and source = 0
         when 'TRANSFER_IN' then case when status = 'REVERSED'
              then avail = 0 and fee = 0 and iva = 0 and source = 0 and pend = 0 and clearing = 0
                   and net_amount = amount - total_fee - iva_amount
              else avail = net_amount and net_amount = amount - total_fee - iva_amount and fee = total_fee
              and iva = iva_amount and source = -amount and pend = 0 and clearing = 0 end
         -- a return of an inflow (ReserveReturn) goes back to the inflow's settlement account, not the rail's clearing
         when 'TRANSFER_OUT' then net_amount = amount - total_fee and (source = 0 or is_return and status = 'COMPLETED') and case
              when status in ${LIVE} then avail = -t and pend = t and fee = 0 and iva = 0 and clearing = 0
              when status = 'COMPLETED' and is_return then avail = -t and pend = 0 and fee = 0 and iva = 0 and clearing = 0 and source = amount
              when status = 'COMPLETED' then avail = -t and pend = 0 and fee = total_fee and iva = iva_amount and clearing = amount
              when status in ('FAILED', 'EXPIRED') then avail = 0 and pend = 0 and fee = 0 and iva = 0 and clearing = 0
              else false end
         else false end end, false)`,
      (r) =>
        `[5] movement ${r.id} (${r.type} ${r.status}) amount ${r.amount} fee ${r.total_fee} iva ${r.iva_amount} net ${r.net_amount}` +
        ` vs entries available ${r.avail} pending ${r.pend} fee ${r.fee} iva ${r.iva} clearing ${r.clearing} source ${r.source}`,
    );

    // 6. An inflow's returns (ReserveReturn): what it says they claim equals its returns' open and
    //    committed holds, never more than its gross; a return's hold returns a credited inflow of its company.
    await check(
      `with claims as (
         select h.return_of as id, sum(h.amount) filter (where h.status <> 'RELEASED') as claimed, count(*) as holds,
                count(*) filter (where m.id is null or m.company_id <> h.company_id or m.type <> 'TRANSFER_IN') as foreign_holds
           from ledger.holds h left join ledger.movements m on m.id = h.return_of
          where h.return_of is not null group by h.return_of)
       select m.id::text as id, m.amount::text as amount, m.returned_cents::text as returned,
              coalesce(c.claimed, 0)::text as claimed, coalesce(c.foreign_holds, 0)::text as foreign_holds
         from ledger.movements m left join claims c on c.id = m.id
        where (m.returned_cents <> 0 or c.id is not null)
          and (m.returned_cents <> coalesce(c.claimed, 0) or m.returned_cents > m.amount or coalesce(c.foreign_holds, 0) > 0)
       union all
       select c.id::text, null, null, c.claimed::text, c.foreign_holds::text
         from claims c where not exists (select 1 from ledger.movements m where m.id = c.id)`,
      (r) =>
        `[6] inflow ${r.id} (gross ${r.amount ?? '?'}) says its returns claim ${r.returned ?? '?'}, its return holds ${r.claimed} (${r.foreign_holds} not of a credited inflow of the company)`,
    );

    // 7. A move between a company's own wallets (docs/wallet-moves.md) is one posting of exactly two
    //    entries, both wallet_available accounts of its company, and exactly two legs of that company:
    //    a TRANSFER_OUT and a TRANSFER_IN (their amounts are checked by 5); a leg names a move posting.
    await check(
      `select p.id::text as id, p.company_id,
              (select count(*) from ledger.movements m where m.move_id = p.id and m.company_id = p.company_id)::text as legs,
              (select count(distinct m.type) from ledger.movements m where m.move_id = p.id and m.company_id = p.company_id)::text as types,
              (select count(*) from ledger.entries e where e.posting_id = p.id)::text as entries,
              (select count(*) from ledger.entries e where e.posting_id = p.id
                  and starts_with(e.account, 'wallet_available:' || p.company_id || ':'))::text as own
         from ledger.postings p
        where p.kind = 'move' ${q.and('p.id')}
          and ((select count(*) from ledger.movements m where m.move_id = p.id) <> 2
            or (select count(distinct m.type) from ledger.movements m where m.move_id = p.id and m.company_id = p.company_id) <> 2
            or (select count(*) from ledger.entries e where e.posting_id = p.id) <> 2
            or (select count(*) from ledger.entries e where e.posting_id = p.id
                  and starts_with(e.account, 'wallet_available:' || p.company_id || ':')) <> 2)`,
      (r) => `[7] move ${r.id} (company ${r.company_id}) has ${r.legs} legs of ${r.types} types and ${r.entries} entries, ${r.own} on its company's wallets`,
    );
    await check(
      `select m.id::text as id, m.move_id::text as move_id from ledger.movements m
        where m.move_id is not null ${since ? `and m.id in (${q.touchedMovements})` : ''}
          and not exists (select 1 from ledger.postings p where p.id = m.move_id and p.kind = 'move' and p.company_id = m.company_id)`,
      (r) => `[7] movement ${r.id} is a leg of ${r.move_id}, which is no move of its company`,
    );

    // 8. A balance checkpoint (docs/balance-checkpoints.md) equals the journal's sums over the
    // postings created before its instant (an hour's end; the wallet need not have moved in it). A posting
    // dated inside a checkpointed stretch after it was checkpointed (which the checkpointer's fence
    // exists to prevent) shows here: every later checkpoint of its wallet is short of it.
    const checkpointLine = (r: Record<string, string>) =>
      `[8] balance checkpoint ${r.company_id}:${r.rail} at ${r.through}: available ${r.available} vs journal ${r.journal_available}, ` +
      `pending_out ${r.pending} vs journal ${r.journal_pending}, ${r.postings} postings vs ${r.journal_postings}`;
    if (!since) {
      await check(
        `with we as (
           select split_part(e.account, ':', 1) as kind, split_part(e.account, ':', 2) as company_id,
                  split_part(e.account, ':', 3) as rail, e.posting_id, e.amount,
                  ${hourEnd('p.created_at')} as through
             from ledger.entries e join ledger.postings p on p.id = e.posting_id
            where starts_with(e.account, 'wallet_available:') or starts_with(e.account, 'wallet_pending_out:')
         ), hour as (
           select company_id, rail, through,
                  coalesce(sum(amount) filter (where kind = 'wallet_available'), 0) as available,
                  coalesce(sum(amount) filter (where kind = 'wallet_pending_out'), 0) as pending,
                  count(distinct posting_id) as postings
             from we group by company_id, rail, through
         ), at as (
           -- the wallet's sums per hour it moved, and each checkpoint's instant (a carried checkpoint may fall
           -- in an hour the wallet did not move): the running sums are the journal's at every one of them
           select company_id, rail, through, sum(available) as available, sum(pending) as pending, sum(postings) as postings
             from (select company_id, rail, through, available, pending, postings from hour
                   union all
                   select company_id, rail, through, 0, 0, 0 from ledger.balance_checkpoints) x
            group by company_id, rail, through
         ), cum as (
           select company_id, rail, through, sum(available) over w as available, sum(pending) over w as pending, sum(postings) over w as postings
             from at window w as (partition by company_id, rail order by through)
         )
        select c.company_id, c.rail, ${sqlInstant('c.through')} as through, c.available_cents::text as available, c.pending_out_cents::text as pending,
               c.postings::text as postings, coalesce(k.available::text, 'none') as journal_available,
               coalesce(k.pending::text, 'none') as journal_pending, coalesce(k.postings::text, 'none') as journal_postings
          from ledger.balance_checkpoints c
          left join cum k on k.company_id = c.company_id and k.rail = c.rail and k.through = c.through
         where k.company_id is null or k.available <> c.available_cents or k.pending <> c.pending_out_cents or k.postings <> c.postings`,
        checkpointLine,
      );
    } else {
      // The checkpoints written since the cut (past its checkpointer progress): each from its wallet's
      // last checkpoint the cut checked, plus the company's postings between the two instants (a balance
      // read's own path); from the beginning for a wallet the cut had none of.
      await check(
        `select c.company_id, c.rail, ${sqlInstant('c.through')} as through, c.available_cents::text as available,
                c.pending_out_cents::text as pending, c.postings::text as postings,
                k.available::text as journal_available, k.pending::text as journal_pending, k.postings::text as journal_postings
           from ledger.balance_checkpoints c
           left join lateral (
             select b.through, b.available_cents, b.pending_out_cents, b.postings from ledger.balance_checkpoints b
              where b.company_id = c.company_id and b.rail = c.rail ${q.checkedCheckpoint('b.through')}
              order by b.through desc limit 1) b on true
           cross join lateral (
             select coalesce(b.available_cents, 0) + coalesce(sum(e.amount) filter (where e.account = 'wallet_available:' || c.company_id || ':' || c.rail), 0) as available,
                    coalesce(b.pending_out_cents, 0) + coalesce(sum(e.amount) filter (where e.account = 'wallet_pending_out:' || c.company_id || ':' || c.rail), 0) as pending,
                    coalesce(b.postings, 0) + count(distinct e.posting_id) as postings
               from ledger.postings p join ledger.entries e on e.posting_id = p.id
              where p.company_id = c.company_id and p.created_at >= coalesce(b.through, '-infinity') and p.created_at < c.through
                and e.account in ('wallet_available:' || c.company_id || ':' || c.rail, 'wallet_pending_out:' || c.company_id || ':' || c.rail)) k
          where ${q.newCheckpoint('c.through')}
            and (k.available <> c.available_cents or k.pending <> c.pending_out_cents or k.postings <> c.postings)`,
        checkpointLine,
      );
    }

    const counts = since
      ? (
          await read<{ postings: string; entries: string; wallets: string }>(
            `select ((select coalesce(max(seq), 0) from ledger.journal) + (select count(*) from ledger.journal_queue))::text as postings,
                    ((select entries from ledger.journal_cut) + (select count(*) from ledger.entries ${q.where('posting_id')}))::text as entries,
                    (select count(*) from ledger.wallets)::text as wallets`,
          )
        )[0]
      : (
          await read<{ postings: string; entries: string; wallets: string }>(
            `select (select count(*) from ledger.postings)::text as postings, (select count(*) from ledger.entries)::text as entries,
                    (select count(*) from ledger.wallets)::text as wallets`,
          )
        )[0];
    return {
      violations,
      postings: BigInt(counts?.postings ?? 0),
      entries: BigInt(counts?.entries ?? 0),
      wallets: BigInt(counts?.wallets ?? 0),
      mode: since ? 'incremental' : 'full',
      since,
    };
  }
}

/**
 * What a check reads: everything (full), or what the journal sealed after the cut plus what is still
 * queued (incremental: every committed posting is one or the other, docs/journal.md).
 */
function scopeOf(since: JournalCut | null) {
  const fresh = since
    ? `(select j.posting_id from ledger.journal j where j.seq > ${since.seq.toString()} union select q.posting_id from ledger.journal_queue q)`
    : null;
  const through = since?.checkpointsThrough ? `'${since.checkpointsThrough.replace(/'/g, '')}'::timestamptz` : null;
  return {
    /** `where <col>` is one of the new postings, or nothing (an array, so each is looked up by its key). */
    where: (col: string) => (fresh ? `where ${col} = any (array${fresh})` : ''),
    /** `and <col>` is one of the new postings, or nothing. */
    and: (col: string) => (fresh ? `and ${col} = any (array${fresh})` : ''),
    /** The movements a new posting belongs to, and the legs of a new move. */
    touchedMovements: fresh
      ? `select p.movement_id from ledger.postings p where p.movement_id is not null and p.id = any (array${fresh})
         union select m.id from ledger.movements m where m.move_id is not null and m.move_id = any (array${fresh})`
      : 'select null::uuid where false',
    /** A checkpoint the cut checked (at or before its progress), or none (no progress then). */
    checkedCheckpoint: (col: string) => (through ? `and ${col} <= ${through}` : 'and false'),
    newCheckpoint: (col: string) => (through ? `${col} > ${through}` : 'true'),
  };
}
