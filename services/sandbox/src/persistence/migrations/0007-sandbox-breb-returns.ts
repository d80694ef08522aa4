import { Migration } from '@mikro-orm/migrations';

/**
 * A participant returns an inbound Bre-B payment it cannot credit to the payer (docs/sandbox.md "Bre-B collect keys and inbound payments"): at most
 * one return per payment, under the participant's `return_id` (its idempotency key), at
 * `returned_at` (database clock). The breb-inbound settlement report carries it as a second line.
 */
export class Migration0007SandboxBrebReturns extends Migration {
  override name = '0007-sandbox-breb-returns';

  override up(): void {
    this.addSql(`alter table sandbox.breb_incoming add column return_id text, add column returned_at timestamptz`);
    this.addSql(`create unique index breb_incoming_return_id_uq on sandbox.breb_incoming (return_id) where return_id is not null`);
    this.addSql(`create index breb_incoming_returned_idx on sandbox.breb_incoming (returned_at) where returned_at is not null`);
  }

  override down(): void {
    this.addSql(`drop index if exists sandbox.breb_incoming_returned_idx`);
    this.addSql(`drop index if exists sandbox.breb_incoming_return_id_uq`);
    this.addSql(`alter table sandbox.breb_incoming drop column if exists returned_at, drop column if exists return_id`);
  }
}
