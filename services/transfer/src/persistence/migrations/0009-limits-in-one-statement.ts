import { Migration } from '@mikro-orm/migrations';

/**
 * Cost per send (docs/benchmarks.md): a send's counterparty-limit check and its RECEIVED insert become ONE
 * autocommit statement instead of a transaction of three round trips (`begin` + the lock, the
 * insert with the usage sum, `commit`).
 *
 * The statement calls this function first (a materialized CTE the insert reads from): it takes the
 * (company, counterparty) lock the sum-then-insert has always taken, then sums the usage. Being
 * VOLATILE plpgsql, its query takes a fresh snapshot after the lock is granted (PostgreSQL: "VOLATILE
 * functions obtain a fresh snapshot at the start of each query they execute"), so it sees every send
 * to the same counterparty that committed before it got the lock, exactly as the separate statement
 * after the lock did. The lock is a transaction lock: it is held until the statement commits.
 *
 * The lock key is computed by the caller (the same expression the batch reserve uses), and the
 * counted states are a parameter, so neither rule is copied here.
 */
export class Migration0009LimitsInOneStatement extends Migration {
  override name = '0009-limits-in-one-statement';

  override up(): void {
    this.addSql(`create or replace function transfer.locked_counterparty_usage(
        p_lock_key bigint, p_company text, p_counterparty text, p_day_start timestamptz, p_month_start timestamptz, p_states text[])
      returns table (day_sum numeric, month_sum numeric)
      language plpgsql volatile as $$
      begin
        perform pg_advisory_xact_lock(p_lock_key);
        return query
          select coalesce(sum(t.amount) filter (where t.created_at >= p_day_start), 0),
                 coalesce(sum(t.amount), 0)
            from transfer.transfers t
           where t.company_id = p_company and t.counterparty_document = p_counterparty
             and t.created_at >= p_month_start and t.state = any(p_states);
      end $$`);
  }

  override down(): void {
    this.addSql('drop function if exists transfer.locked_counterparty_usage(bigint, text, text, timestamptz, timestamptz, text[])');
  }
}
