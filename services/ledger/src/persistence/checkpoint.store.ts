import { sqlInstant, type Database } from '@wallet/platform';
import type { CheckpointBatch, CheckpointFence, CheckpointPort } from '../app/balance-checkpoints.js';

/**
 * The start of the oldest transaction open on this database, other than the caller's own (null: none).
 * A posting's `created_at` is its transaction's start, so a posting dated before an instant can still
 * commit after it; nothing dated before this start is missing once it is past (the checkpointer's fence,
 * the journal's daily heads).
 */
export const OLDEST_OPEN_TRANSACTION = `select min(a.xact_start) from pg_stat_activity a
  where a.datname = current_database() and a.pid <> pg_backend_pid() and a.xact_start is not null and a.backend_type = 'client backend'`;

/** The checkpointer's advisory lock (one pass at a time across replicas): a stable 64-bit key. */
const CHECKPOINT_LOCK = 0x636b7074; // 'ckpt'

/** The end of the hour a timestamptz expression falls in (the next hour's start): a checkpoint's `through`. */
export const hourEnd = (ts: string) => `((date_trunc('hour', ${ts} at time zone 'UTC') + interval '1 hour') at time zone 'UTC')`;
/** The start of the hour a timestamptz expression falls in. */
const hourStart = (ts: string) => `(date_trunc('hour', ${ts} at time zone 'UTC') at time zone 'UTC')`;

/** A wallet gets a checkpoint each time its company's postings since its last one cross a multiple of this (CHECKPOINT_EVERY). */
export const CHECKPOINT_EVERY = 64;

/**
 * The balance checkpoints' tables (migration 0014, docs/balance-checkpoints.md).
 *
 * Why a checkpoint can be trusted: a posting's `created_at` is its transaction's start, so a posting
 * with `created_at` before an instant F may still be uncommitted after F. The fence closes that
 * gap: it is read before any of the pass's snapshots, and it is only an hour boundary F that is past
 * the safety margin and older than the start of every transaction open in the database at that
 * moment. A posting created before F was then committed before the fence was read, so every
 * snapshot the pass takes afterwards sees it; and no transaction that starts later can create one.
 */
export class CheckpointStore implements CheckpointPort {
  /** `every`: a checkpoint each time a wallet's postings cross a multiple of it (tests: 1, one per hour it moved). */
  constructor(
    private readonly db: Database,
    private readonly every = CHECKPOINT_EVERY,
  ) {}

  /**
   * The fence: the start of the hour in which `now - marginSeconds` falls, held back to the start
   * of the hour of the oldest open transaction (a transaction that began before an hour's end could
   * still commit a posting dated inside it). Client sessions only: autovacuum and the server's own
   * workers write no postings (a long vacuum of a big table would otherwise hold the fence). `now`:
   * the database's clock (a test may name another instant to read the fence at; it never moves a pass).
   */
  async fence(marginSeconds: number, now?: string): Promise<CheckpointFence> {
    const [r] = await this.db.query<{ now: string; oldest: string | null; through: string; unheld: string; done: string | null }>(
      `with c as (select coalesce(?::timestamptz, now()) as now),
            h as (select c.now, c.now - make_interval(secs => ?::double precision) as horizon,
                         (${OLDEST_OPEN_TRANSACTION}) as oldest
                    from c)
       select ${sqlInstant('h.now')} as now, ${sqlInstant('h.oldest')} as oldest,
              ${sqlInstant(hourStart('least(h.horizon, h.now, coalesce(h.oldest, h.now))'))} as through,
              ${sqlInstant(hourStart('least(h.horizon, h.now)'))} as unheld,
              (select ${sqlInstant('p.through')} from ledger.balance_checkpoint_progress p) as done
         from h`,
      [now ?? null, marginSeconds],
    );
    const row = r!;
    return { now: row.now, through: row.through, heldBackBy: row.through < row.unheld ? row.oldest : null, done: row.done };
  }

  /**
   * One batch of a pass, in one transaction: starts the pass towards `fenceThrough` when none is
   * open and the fence moved past where the checkpoints are complete; then, for the next `batch`
   * wallets (keyset order), reads the company's postings per hour from the wallet's last checkpoint
   * to the target with the wallet's sums among them, accumulates both (window sums) and writes a
   * checkpoint at the end of each hour in which the count of the **company's** postings since the
   * wallet's last checkpoint crossed a multiple of `every`; moves the cursor. After the last wallet,
   * `through` becomes the target. A balance read scans the company's postings after the wallet's
   * checkpoint (its index is by company and instant), so that is what is kept short: fewer than
   * `every` between a wallet's last checkpoint and the target, however quiet the wallet itself is
   * beside a busy one (a wallet that did not move gets a checkpoint carrying its sums forward, zero
   * postings included). A company that moves little has few rows.
   */
  batch(fenceThrough: string, batch: number): Promise<CheckpointBatch> {
    return this.db.tx(async (tx) => {
      const [lock] = await tx.query<{ ok: boolean }>('select pg_try_advisory_xact_lock(?::bigint) as ok', [CHECKPOINT_LOCK]);
      if (!lock?.ok) return { locked: false, target: null, wallets: 0, written: 0, finished: false };
      const [p] = await tx.query<{ target: string | null; after_company: string | null; after_rail: string | null; start: boolean }>(
        `select ${sqlInstant('target')} as target, after_company, after_rail,
                (target is null and (through is null or through < ?::timestamptz)) as start
           from ledger.balance_checkpoint_progress for update`,
        [fenceThrough],
      );
      if (!p) throw new Error('ledger.balance_checkpoint_progress has no row (migration 0014)');
      // A pass's target never moves once chosen: the pass in progress finishes towards it first.
      const target = p.target ?? (p.start ? fenceThrough : null);
      if (target === null) return { locked: true, target: null, wallets: 0, written: 0, finished: false };
      const [r] = await tx.query<{ wallets: number; written: number; last_company: string | null; last_rail: string | null }>(
        `with w as (
           select company_id, rail from ledger.wallets
            where (company_id, rail) > (coalesce(?::text, ''), coalesce(?::text, ''))
            order by company_id, rail limit ?),
         base as (
           select w.company_id, w.rail, c.through, coalesce(c.available_cents, 0) as a0, coalesce(c.pending_out_cents, 0) as p0,
                  coalesce(c.postings, 0) as n0,
                  'wallet_available:' || w.company_id || ':' || w.rail as av, 'wallet_pending_out:' || w.company_id || ':' || w.rail as pe
             from w
             left join lateral (
               select x.through, x.available_cents, x.pending_out_cents, x.postings from ledger.balance_checkpoints x
                where x.company_id = w.company_id and x.rail = w.rail order by x.through desc limit 1) c on true),
         hours as (
           select b.company_id, b.rail, ${hourEnd('p.created_at')} as through,
                  coalesce(sum(e.amount) filter (where e.account = b.av), 0) as da,
                  coalesce(sum(e.amount) filter (where e.account = b.pe), 0) as dp,
                  count(distinct e.posting_id) as dn,
                  count(distinct p.id) as dc
             from base b
             join ledger.postings p on p.company_id = b.company_id
                                   and p.created_at >= coalesce(b.through, '-infinity'::timestamptz) and p.created_at < ?::timestamptz
             left join ledger.entries e on e.posting_id = p.id and e.account in (b.av, b.pe)
            group by 1, 2, 3),
         cum as (
           select d.company_id, d.rail, d.through, d.dc,
                  (b.a0 + sum(d.da) over win)::bigint as available, (b.p0 + sum(d.dp) over win)::bigint as pending,
                  (b.n0 + sum(d.dn) over win)::bigint as postings, (sum(d.dc) over win)::bigint as scanned
             from hours d join base b on b.company_id = d.company_id and b.rail = d.rail
           window win as (partition by d.company_id, d.rail order by d.through)),
         ins as (
           insert into ledger.balance_checkpoints (company_id, rail, through, available_cents, pending_out_cents, postings)
           select company_id, rail, through, available, pending, postings from cum
            where scanned / ?::bigint > (scanned - dc) / ?::bigint
           returning 1)
         select (select count(*) from w)::int as wallets, (select count(*) from ins)::int as written,
                l.company_id as last_company, l.rail as last_rail
           from (select 1) one
           left join lateral (select company_id, rail from w order by company_id desc, rail desc limit 1) l on true`,
        [p.after_company, p.after_rail, batch, target, this.every, this.every],
      );
      const out = r!;
      const finished = out.wallets < batch;
      if (finished) {
        await tx.query(
          `update ledger.balance_checkpoint_progress
              set through = ?::timestamptz, target = null, after_company = null, after_rail = null, updated_at = now()`,
          [target],
        );
      } else {
        await tx.query(
          `update ledger.balance_checkpoint_progress
              set target = ?::timestamptz, after_company = ?, after_rail = ?, updated_at = now()`,
          [target, out.last_company, out.last_rail],
        );
      }
      return { locked: true, target, wallets: out.wallets, written: out.written, finished };
    });
  }
}
