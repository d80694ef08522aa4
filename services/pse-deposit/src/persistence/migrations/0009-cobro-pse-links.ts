import { Migration } from '@mikro-orm/migrations';

/**
 * A cobro's PSE link (docs/cobros.md "Payment methods"): the PSE deposit made for a cobro names it
 * (`deposits.cobro_id`, one link per cobro), and the cobro keeps the payer its link was made for
 * (to finish an interrupted creation) and the link's deposit. New nullable columns and a partial
 * index on rows that have one: nothing is rewritten.
 */
export class Migration0009CobroPseLinks extends Migration {
  override name = '0009-cobro-pse-links';

  override up(): void {
    this.addSql('alter table pse_deposit.deposits add column if not exists cobro_id text');
    this.addSql('create unique index if not exists deposits_cobro_link_uq on pse_deposit.deposits (cobro_id) where cobro_id is not null');
    this.addSql('alter table pse_deposit.cobros add column if not exists pse_payer jsonb');
    this.addSql('alter table pse_deposit.cobros add column if not exists pse_deposit_id text');
    this.addSql('alter table pse_deposit.cobros add column if not exists pse_paygateway_url text');
  }

  override down(): void {
    this.addSql('alter table pse_deposit.cobros drop column if exists pse_paygateway_url');
    this.addSql('alter table pse_deposit.cobros drop column if exists pse_deposit_id');
    this.addSql('alter table pse_deposit.cobros drop column if exists pse_payer');
    this.addSql('drop index if exists pse_deposit.deposits_cobro_link_uq');
    this.addSql('alter table pse_deposit.deposits drop column if exists cobro_id');
  }
}
