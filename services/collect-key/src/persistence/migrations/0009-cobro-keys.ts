import { Migration } from '@mikro-orm/migrations';

/**
 * Cobros (a cobro itself is pse-deposit's): a cobro's dynamic key is an ordinary key marked with
 * the cobro (`cobro_id`), its transaction id, fixed amount and expiry (the terms IssueCobroKey is
 * idempotent on) and the dynamic QR payload issued with it. One key per cobro of a company in any
 * state but FAILED (a refused registration is redrawn); customer keys' one-per-externalId index no
 * longer covers cobro keys, whose externalId (`cobro:<cobroId>`) is informational only.
 * Inbound payments keep the network's transaction id (read from a dynamic QR) and the cobro of the
 * key they were paid to. Nullable, no defaults: adding them rewrites nothing.
 */
export class Migration0009CobroKeys extends Migration {
  override name = '0009-cobro-keys';

  override up(): void {
    this.addSql(`alter table collect_key.keys
      add column if not exists cobro_id text,
      add column if not exists cobro_transaction_id text,
      add column if not exists cobro_amount_cents bigint check (cobro_amount_cents > 0),
      add column if not exists cobro_expires_at timestamptz,
      add column if not exists cobro_qr_payload text`);
    this.addSql(`alter table collect_key.keys add constraint keys_cobro_complete_check
      check (cobro_id is null or (cobro_transaction_id is not null and cobro_expires_at is not null and cobro_qr_payload is not null))`);
    this.addSql(`create unique index keys_cobro_uq on collect_key.keys (company_id, cobro_id) where cobro_id is not null and state <> 'FAILED'`);
    this.addSql(`drop index collect_key.keys_live_external_uq`);
    this.addSql(`create unique index keys_live_external_uq on collect_key.keys (company_id, external_id)
      where cobro_id is null and state in ('REGISTERING', 'ACTIVE', 'SUSPENDED')`);
    this.addSql(`alter table collect_key.payments
      add column if not exists transaction_id text,
      add column if not exists cobro_id text`);
  }

  override down(): void {
    this.addSql(`alter table collect_key.payments drop column if exists transaction_id, drop column if exists cobro_id`);
    this.addSql(`drop index collect_key.keys_live_external_uq`);
    this.addSql(`drop index if exists collect_key.keys_cobro_uq`);
    this.addSql(`alter table collect_key.keys drop constraint if exists keys_cobro_complete_check`);
    this.addSql(`alter table collect_key.keys drop column if exists cobro_id, drop column if exists cobro_transaction_id,
      drop column if exists cobro_amount_cents, drop column if exists cobro_expires_at, drop column if exists cobro_qr_payload`);
    this.addSql(`create unique index keys_live_external_uq on collect_key.keys (company_id, external_id)
      where state in ('REGISTERING', 'ACTIVE', 'SUSPENDED')`);
  }
}
