import { Migration } from '@mikro-orm/migrations';

/**
 * The reconciliation's read path (ListSettlements, docs/reconciliation.md): a PSE deposit has up to
 * two lines in the provider's report, its payment (or failure) and its reversal, each on the day it
 * happened. The payment's time is stored (`provider_confirmed_at`, the provider's signed payment
 * time); a failure's and a reversal's were only in the state history, which a day's ordered read
 * cannot use. So: `failed_at` (entering FAILED) and `reversed_at` (entering REVERSING, i.e. when
 * the provider's reversal was applied; the ledger's debit back closes it later), backfilled from
 * the history, and one index per leg on (the leg's Bogotá date, id) over the rows that have that
 * leg: persistence/settlement.store.ts reads each as an index range scan from the last id and
 * merges the two by (id, payment before reversal).
 */
export class Migration0005SettlementTimes extends Migration {
  override name = '0005-settlement-times';

  override up(): void {
    this.addSql(`alter table pse_deposit.deposits add column failed_at timestamptz, add column reversed_at timestamptz`);
    this.addSql(`update pse_deposit.deposits d set failed_at = h.at from
      (select deposit_id, max(at) as at from pse_deposit.state_history where status = 'FAILED' group by deposit_id) h
      where d.id = h.deposit_id and d.status = 'FAILED'`);
    this.addSql(`update pse_deposit.deposits d set reversed_at = h.at from
      (select deposit_id, min(at) as at from pse_deposit.state_history where status in ('REVERSING', 'REVERSED') group by deposit_id) h
      where d.id = h.deposit_id and d.status in ('REVERSING', 'REVERSED')`);
    this.addSql(`create index deposits_payment_leg_idx on pse_deposit.deposits
      ((timezone(interval '-05:00', case status when 'FAILED' then failed_at else provider_confirmed_at end)::date), id collate "C")
      where source = 'PSE' and (status = 'FAILED' or (status in ('CREDITING', 'ASSIGNED', 'REVERSING', 'REVERSED') and provider_confirmed_at is not null))`);
    this.addSql(`create index deposits_reversal_leg_idx on pse_deposit.deposits ((timezone(interval '-05:00', reversed_at)::date), id collate "C")
      where source = 'PSE' and status in ('REVERSING', 'REVERSED')`);
  }

  override down(): void {
    this.addSql('drop index if exists pse_deposit.deposits_payment_leg_idx');
    this.addSql('drop index if exists pse_deposit.deposits_reversal_leg_idx');
    this.addSql('alter table pse_deposit.deposits drop column failed_at, drop column reversed_at');
  }
}
