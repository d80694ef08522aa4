import { Migration } from '@mikro-orm/migrations';

/**
 * Bre-B collect-key deposits in the listing (fed from the collect-key service's `deposit.paid` /
 * `deposit.unassigned` events): they carry no ledger movement id of ours, so `movement_id` is
 * required for PSE rows only; `breb_event_at` / `breb_event_id` record the event last applied to a
 * Bre-B row, so an older event arriving later never overwrites a newer state.
 */
export class Migration0002BrebListing extends Migration {
  override name = '0002-breb-listing';

  override up(): void {
    this.addSql(`alter table pse_deposit.deposits alter column movement_id drop not null`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_pse_movement_ck check (source <> 'PSE' or movement_id is not null)`);
    this.addSql(`alter table pse_deposit.deposits add column breb_event_at timestamptz, add column breb_event_id text`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_breb_shape_ck
      check (source <> 'BREB' or (status in ('ASSIGNED', 'UNASSIGNED', 'REVERSED') and breb_event_at is not null and pending_step is null))`);
  }

  override down(): void {
    this.addSql(`delete from pse_deposit.deposits where source = 'BREB'`);
    this.addSql(`alter table pse_deposit.deposits drop constraint if exists deposits_breb_shape_ck, drop constraint if exists deposits_pse_movement_ck,
      drop column if exists breb_event_at, drop column if exists breb_event_id, alter column movement_id set not null`);
  }
}
