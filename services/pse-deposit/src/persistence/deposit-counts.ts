import type { Database } from '@wallet/platform';
import type { DepositSource, DepositState } from '../domain/deposit.js';

/** Deltas folded per transaction: a fold never holds many row locks or runs long. */
export const FOLD_BATCH = 10_000;
/** Deposits per backfill transaction (a company is never split: the batch ends at a company's last deposit). */
export const BACKFILL_BATCH = 5_000;

export interface CountBackfillStep {
  /** false: another replica's step holds the backfill's lock (nothing was done). */
  locked: boolean;
  /** Companies whose history this step counted (0: nothing was left). */
  companies: number;
  /** The backfill is complete: totals may be read from the counts. */
  done: boolean;
}

/**
 * A company's deposits counted per rail and stored state (migration 0017, docs/deposit-counts.md):
 * `deposit_counts` plus the append-only `deposit_count_deltas` the trigger writes in each writer's
 * transaction. Invariant, in every snapshot, once the backfill is done: for each (company, rail,
 * state), the deposits = counts + deltas. Before it is done the history written before the migration
 * is missing from the counts, and `ready()` says so.
 */
export class SqlDepositCounts {
  private done = false;

  constructor(private readonly db: Database) {}

  /** The backfill has finished (remembered once seen: it never goes back). */
  async ready(): Promise<boolean> {
    if (this.done) return true;
    const [r] = await this.db.prepared<{ done: boolean }>(`select done_at is not null as done from pse_deposit.deposit_count_progress`);
    this.done = r?.done ?? false;
    return this.done;
  }

  /**
   * How many deposits of the company are in one of `states` (every state when null), on one rail when
   * given: its counts plus its deltas, read in one statement (one snapshot: a fold moving deltas into the
   * counts commits both at once, so the sum never sees a delta twice or not at all).
   */
  async count(companyId: string, source: DepositSource | undefined, states: readonly DepositState[] | null): Promise<number> {
    const params: unknown[] = [companyId];
    let cond = 'company_id = $1';
    if (source) {
      params.push(source);
      cond += ` and source = $${params.length}`;
    }
    if (states) {
      params.push([...states]);
      cond += ` and status = any($${params.length}::text[])`;
    }
    const [r] = await this.db.prepared<{ n: string }>(
      `select coalesce(sum(n), 0)::text as n from (
         select n from pse_deposit.deposit_counts where ${cond}
         union all
         select n from pse_deposit.deposit_count_deltas where ${cond}) c`,
      params,
    );
    return Number(r?.n ?? 0);
  }

  /**
   * Folds up to `batch` of the oldest deltas into the counts: deleted and added in one statement.
   * Replicas may fold at once: each takes deltas no other holds (skip locked), and the counts rows are
   * updated in key order (two folds wait for each other, never deadlock). Answers how many it folded.
   */
  async fold(batch = FOLD_BATCH): Promise<number> {
    const [r] = await this.db.prepared<{ folded: number }>(
      `with d as (delete from pse_deposit.deposit_count_deltas where id in (
                    select id from pse_deposit.deposit_count_deltas order by id limit $1 for update skip locked)
                  returning company_id, source, status, n),
            g as (select company_id, source, status, sum(n)::bigint as n from d group by company_id, source, status),
            u as (insert into pse_deposit.deposit_counts as c (company_id, source, status, n)
                  select company_id, source, status, n from g order by company_id, source, status
                  on conflict (company_id, source, status) do update set n = c.n + excluded.n)
       select count(*)::int as folded from d`,
      [batch],
    );
    return r?.folded ?? 0;
  }

  /**
   * Counts the history of the next companies (about `batch` deposits, never splitting a company): for
   * each (company, rail, state), what the deposits hold beyond counts + deltas, which is exactly what was
   * written before the trigger existed, added to the counts. One transaction, one replica at a time (a
   * transaction-level advisory lock, tried: a replica that finds it held does nothing this time); its
   * counting statement starts after the lock is held, so it sees every earlier step's additions (a
   * second step over the same companies adds 0). Writers and folds go on meanwhile: a writer's deposit
   * and its delta commit together, a fold's deletion and addition too, so the difference read in one
   * snapshot is the history alone.
   */
  async backfill(batch = BACKFILL_BATCH): Promise<CountBackfillStep> {
    return this.db.preparedTx(async (tx) => {
      const lock = await tx.one<{ locked: boolean }>(`select pg_try_advisory_xact_lock(hashtext('pse_deposit deposit counts backfill')) as locked`);
      if (!lock?.locked) return { locked: false, companies: 0, done: false };
      const p = await tx.one<{ after_company: string | null; done: boolean }>(
        `select after_company, done_at is not null as done from pse_deposit.deposit_count_progress`,
      );
      if (!p || p.done) return { locked: true, companies: 0, done: true };
      const after = p.after_company ?? '';
      const [edge] = await tx.query<{ last: string | null; rows: number }>(
        `select max(company_id) as last, count(*)::int as rows from (
           select company_id from pse_deposit.deposits where company_id > $1 order by company_id limit $2) d`,
        [after, batch],
      );
      const last = edge?.last ?? null;
      const finished = (edge?.rows ?? 0) < batch;
      let companies = 0;
      if (last !== null) {
        const [r] = await tx.query<{ companies: number }>(
          `with live as (select company_id, source, status, count(*)::bigint as n from pse_deposit.deposits
                          where company_id > $1 and company_id <= $2 group by company_id, source, status),
                kept as (select company_id, source, status, sum(n)::bigint as n from (
                           select company_id, source, status, n from pse_deposit.deposit_counts where company_id > $1 and company_id <= $2
                           union all
                           select company_id, source, status, n from pse_deposit.deposit_count_deltas where company_id > $1 and company_id <= $2) k
                         group by company_id, source, status),
                base as (select coalesce(l.company_id, k.company_id) as company_id, coalesce(l.source, k.source) as source,
                                coalesce(l.status, k.status) as status, coalesce(l.n, 0) - coalesce(k.n, 0) as n
                           from live l full join kept k on k.company_id = l.company_id and k.source = l.source and k.status = l.status
                          where coalesce(l.n, 0) <> coalesce(k.n, 0)),
                u as (insert into pse_deposit.deposit_counts as c (company_id, source, status, n)
                      select company_id, source, status, n from base order by company_id, source, status
                      on conflict (company_id, source, status) do update set n = c.n + excluded.n)
           select count(distinct company_id)::int as companies from live`,
          [after, last],
        );
        companies = r?.companies ?? 0;
      }
      await tx.query(
        `update pse_deposit.deposit_count_progress set after_company = coalesce($1, after_company),
                done_at = case when $2::boolean then now() else null end, updated_at = now()`,
        [last, finished],
      );
      if (finished) this.done = true;
      return { locked: true, companies, done: finished };
    });
  }

  /**
   * Every (company, rail, state) whose counts + deltas differ from its deposits: empty when the invariant
   * holds. A full read of the deposits (a check for tests and operators, never a request's path).
   */
  async mismatches(): Promise<Array<{ companyId: string; source: string; status: string; deposits: number; counted: number }>> {
    const rows = await this.db.query<{ company_id: string; source: string; status: string; deposits: string; counted: string }>(
      `with live as (select company_id, source, status, count(*)::bigint as n from pse_deposit.deposits group by company_id, source, status),
            kept as (select company_id, source, status, sum(n)::bigint as n from (
                       select company_id, source, status, n from pse_deposit.deposit_counts
                       union all
                       select company_id, source, status, n from pse_deposit.deposit_count_deltas) k
                     group by company_id, source, status)
       select coalesce(l.company_id, k.company_id) as company_id, coalesce(l.source, k.source) as source, coalesce(l.status, k.status) as status,
              coalesce(l.n, 0)::text as deposits, coalesce(k.n, 0)::text as counted
         from live l full join kept k on k.company_id = l.company_id and k.source = l.source and k.status = l.status
        where coalesce(l.n, 0) <> coalesce(k.n, 0)
        order by 1, 2, 3`,
    );
    return rows.map((r) => ({ companyId: r.company_id, source: r.source, status: r.status, deposits: Number(r.deposits), counted: Number(r.counted) }));
  }
}
