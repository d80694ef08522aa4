import { Migration } from '@mikro-orm/migrations';

/**
 * A company's matching rule for its cobros (docs/cobros.md "Amount tolerance"): a payment short of a
 * cobro's amount by at most the tolerance completes it, and one above it by at most the tolerance is
 * not an overpayment. The rule is the larger of a fixed amount and a share of the cobro's amount, kept on
 * the company's cobros row; a cobro is made with the tolerance its company's rule gives it then
 * (`tolerance_below`, `tolerance_above`: a later change of the rule never changes a cobro's terms, and
 * matching reads nothing more). Columns with constant defaults; the checks are NOT VALID (the rows they
 * would check all have the defaults).
 */
export class Migration0013CobroAmountTolerance extends Migration {
  override name = '0013-cobro-amount-tolerance';

  override up(): void {
    this.addSql(`alter table pse_deposit.cobro_companies
      add column if not exists amount_tolerance_cents bigint not null default 0,
      add column if not exists amount_tolerance_bps integer not null default 0,
      add column if not exists settings_updated_at timestamptz`);
    this.addSql(`alter table pse_deposit.cobro_companies add constraint cobro_companies_tolerance_check
      check (amount_tolerance_cents between 0 and 100000000 and amount_tolerance_bps between 0 and 1000) not valid`);
    this.addSql(`alter table pse_deposit.cobros
      add column if not exists tolerance_below bigint not null default 0,
      add column if not exists tolerance_above bigint not null default 0`);
    this.addSql(`alter table pse_deposit.cobros add constraint cobros_tolerance_check check (tolerance_below >= 0 and tolerance_above >= 0) not valid`);
  }

  override down(): void {
    this.addSql('alter table pse_deposit.cobros drop constraint if exists cobros_tolerance_check');
    this.addSql('alter table pse_deposit.cobros drop column if exists tolerance_below, drop column if exists tolerance_above');
    this.addSql('alter table pse_deposit.cobro_companies drop constraint if exists cobro_companies_tolerance_check');
    this.addSql(`alter table pse_deposit.cobro_companies drop column if exists amount_tolerance_cents,
      drop column if exists amount_tolerance_bps, drop column if exists settings_updated_at`);
  }
}
