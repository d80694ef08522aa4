import { Migration } from '@mikro-orm/migrations';

/**
 * Only booked legs are settled (docs/reconciliation.md "One case per external movement"): a leg is settled for the reconciliation only once the ledger booked it. A deposit in
 * CREDITING (the credit owed, not yet posted: parked there when the ledger refuses) has no settled
 * payment leg; one in REVERSING has no settled reversal leg. `find` answers them PENDING with
 * `step_owed`. The two leg indexes follow the new predicates (persistence/settlement.store.ts).
 */
export class Migration0006BookedLegsOnly extends Migration {
  override name = '0006-booked-legs-only';

  override up(): void {
    this.addSql('drop index if exists pse_deposit.deposits_payment_leg_idx');
    this.addSql('drop index if exists pse_deposit.deposits_reversal_leg_idx');
    this.addSql(`create index deposits_payment_leg_idx on pse_deposit.deposits
      ((timezone(interval '-05:00', case status when 'FAILED' then failed_at else provider_confirmed_at end)::date), id collate "C")
      where source = 'PSE' and (status = 'FAILED' or (status in ('ASSIGNED', 'REVERSING', 'REVERSED') and provider_confirmed_at is not null))`);
    this.addSql(`create index deposits_reversal_leg_idx on pse_deposit.deposits ((timezone(interval '-05:00', reversed_at)::date), id collate "C")
      where source = 'PSE' and status = 'REVERSED'`);
  }

  override down(): void {
    this.addSql('drop index if exists pse_deposit.deposits_payment_leg_idx');
    this.addSql('drop index if exists pse_deposit.deposits_reversal_leg_idx');
    this.addSql(`create index deposits_payment_leg_idx on pse_deposit.deposits
      ((timezone(interval '-05:00', case status when 'FAILED' then failed_at else provider_confirmed_at end)::date), id collate "C")
      where source = 'PSE' and (status = 'FAILED' or (status in ('CREDITING', 'ASSIGNED', 'REVERSING', 'REVERSED') and provider_confirmed_at is not null))`);
    this.addSql(`create index deposits_reversal_leg_idx on pse_deposit.deposits ((timezone(interval '-05:00', reversed_at)::date), id collate "C")
      where source = 'PSE' and status in ('REVERSING', 'REVERSED')`);
  }
}
