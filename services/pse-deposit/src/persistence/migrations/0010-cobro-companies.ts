import { Migration } from '@mikro-orm/migrations';

/**
 * Two lookups the cobros bench found growing with the table (docs/benchmarks.md "Cobro matching"):
 * - the matcher asked whether a company had open cobros before listing a payment unmatched; a
 *   prepared statement's generic plan read the whole table for a company with none (263 ms at
 *   1,000,000 cobros, for every payment of every company without cobros). A company that ever made a
 *   cobro is now a row of its own (`cobro_companies`), found by its primary key;
 * - the sweeper's CREATING cobros read the whole table every second: a partial index on them.
 * Both are new objects on tables this release adds: nothing is rewritten, no lock is held long.
 */
export class Migration0010CobroCompanies extends Migration {
  override name = '0010-cobro-companies';

  override up(): void {
    this.addSql(`create table if not exists pse_deposit.cobro_companies (
      company_id text primary key,
      first_cobro_at timestamptz not null default now()
    )`);
    this.addSql(`insert into pse_deposit.cobro_companies (company_id, first_cobro_at)
      select company_id, min(created_at) from pse_deposit.cobros group by company_id on conflict do nothing`);
    this.addSql(`create index if not exists cobros_creating_idx on pse_deposit.cobros (created_at) where state = 'CREATING'`);
  }

  override down(): void {
    this.addSql('drop index if exists pse_deposit.cobros_creating_idx');
    this.addSql('drop table if exists pse_deposit.cobro_companies');
  }
}
