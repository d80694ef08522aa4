import { Migration } from '@mikro-orm/migrations';

/**
 * The API-key cache's change feed (docs/benchmarks.md, the API-key cache): every change that can alter what a key authenticates
 * as notifies `gateway_auth` at commit, whoever writes it (the admin API, the CLI, an operator's SQL):
 * a key revoked or changed (by id), a key created (by hash: a cached "no such key" must go), a company
 * changed (every key of it). Each gateway replica listens and forgets those entries at once, so the
 * cache may live long while the feed is up (the last_used_at bookkeeping does not notify).
 */
export class Migration0007AuthChangeFeed extends Migration {
  override name = '0007-auth-change-feed';

  override up(): void {
    this.addSql(`create or replace function gateway.notify_auth_change() returns trigger language plpgsql as $fn$
      begin
        if tg_table_name = 'companies' then
          perform pg_notify('gateway_auth', json_build_object('companyId', case when tg_op = 'DELETE' then old.id else new.id end)::text);
        elsif tg_op = 'INSERT' then
          perform pg_notify('gateway_auth', json_build_object('keyHash', new.key_hash)::text);
        else
          perform pg_notify('gateway_auth', json_build_object('keyId', old.id, 'keyHash', old.key_hash)::text);
        end if;
        return null;
      end $fn$`);
    this.addSql(`create trigger api_keys_auth_insert after insert on gateway.api_keys for each row execute function gateway.notify_auth_change()`);
    this.addSql(`create trigger api_keys_auth_change after update of key_hash, scope, revoked_at, company_id or delete on gateway.api_keys
      for each row execute function gateway.notify_auth_change()`);
    this.addSql(`create trigger companies_auth_change after update or delete on gateway.companies
      for each row execute function gateway.notify_auth_change()`);
  }

  override down(): void {
    this.addSql('drop trigger if exists companies_auth_change on gateway.companies');
    this.addSql('drop trigger if exists api_keys_auth_change on gateway.api_keys');
    this.addSql('drop trigger if exists api_keys_auth_insert on gateway.api_keys');
    this.addSql('drop function if exists gateway.notify_auth_change()');
  }
}
