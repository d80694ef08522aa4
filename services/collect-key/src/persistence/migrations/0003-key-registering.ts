import { Migration } from '@mikro-orm/migrations';

/**
 * A key is stored before it is registered at the Bre-B directory (REGISTERING) and moved to ACTIVE
 * when the directory confirms, or to FAILED when it refuses, so the directory never holds a value
 * of ours that has no row here. REGISTERING holds its value and externalId like a live key (the
 * partial unique indexes now cover the claiming states); FAILED, like DELETED, holds nothing.
 * For a REGISTERING key `updated_at` is its last registration attempt (the sweeper's lease).
 */
export class Migration0003KeyRegistering extends Migration {
  override name = '0003-key-registering';

  override up(): void {
    this.addSql(`alter table collect_key.keys drop constraint keys_state_check`);
    this.addSql(`alter table collect_key.keys add constraint keys_state_check
      check (state in ('REGISTERING', 'ACTIVE', 'SUSPENDED', 'DELETED', 'FAILED'))`);
    this.addSql(`drop index collect_key.keys_live_external_uq`);
    this.addSql(`drop index collect_key.keys_live_value_uq`);
    this.addSql(`create unique index keys_live_external_uq on collect_key.keys (company_id, external_id)
      where state in ('REGISTERING', 'ACTIVE', 'SUSPENDED')`);
    this.addSql(`create unique index keys_live_value_uq on collect_key.keys (key_value) where state in ('REGISTERING', 'ACTIVE', 'SUSPENDED')`);
    this.addSql(`create index keys_registering_idx on collect_key.keys (updated_at) where state = 'REGISTERING'`);
  }
}
