import { Migration } from '@mikro-orm/migrations';

/**
 * API versions (docs/api-versioning.md): each key is pinned to the API version that applies when a
 * request names none. Keys issued before versioning existed are pinned to the first released version
 * (2026-11-29: the API they were written against); new keys name theirs on insert (the newest), so the
 * column keeps no default.
 */
export class Migration0010ApiKeyVersions extends Migration {
  override name = '0010-api-key-versions';

  override up(): void {
    this.addSql(`alter table gateway.api_keys add column if not exists api_version text not null default '2026-11-29'`);
    this.addSql(`alter table gateway.api_keys alter column api_version drop default`);
    this.addSql(`alter table gateway.api_keys add constraint api_keys_api_version_shape check (api_version ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')`);
  }

  override down(): void {
    this.addSql('alter table gateway.api_keys drop column if exists api_version');
  }
}
