import { Migration } from '@mikro-orm/migrations';

/**
 * Automatic returns of a cobro's over- and duplicate payments (overpayment policy `return`, docs/cobros.md):
 * a matched payment keeps what of it goes back to the payer, the return's id (derived from the deposit:
 * asked for once, whatever the retries) and how far the request went — OWED when matched, REQUESTED once
 * the payment's owner (collect-key, or this service for PSE) has the return, FAILED when it refused it.
 * The cobro's paid total counts a payment less its automatic return. Columns with constant defaults and
 * nullable ones (nothing rewritten), and a partial index on the few owed rows.
 */
export class Migration0012CobroAutoReturns extends Migration {
  override name = '0012-cobro-auto-returns';

  override up(): void {
    this.addSql(`alter table pse_deposit.cobro_payments
      add column if not exists auto_return_cents bigint not null default 0,
      add column if not exists auto_return_id text,
      add column if not exists auto_return_status text,
      add column if not exists auto_return_error text`);
    this.addSql(`alter table pse_deposit.cobro_payments add constraint cobro_payments_auto_return_check
      check ((auto_return_cents = 0) = (auto_return_id is null) and (auto_return_id is null) = (auto_return_status is null)
        and auto_return_cents >= 0 and auto_return_cents <= amount
        and (auto_return_status is null or auto_return_status in ('OWED', 'REQUESTED', 'FAILED'))) not valid`);
    this.addSql(`create index cobro_payments_auto_returns_owed_idx on pse_deposit.cobro_payments (matched_at) where auto_return_status = 'OWED'`);
  }

  override down(): void {
    this.addSql('drop index if exists pse_deposit.cobro_payments_auto_returns_owed_idx');
    this.addSql('alter table pse_deposit.cobro_payments drop constraint if exists cobro_payments_auto_return_check');
    this.addSql(`alter table pse_deposit.cobro_payments drop column if exists auto_return_cents, drop column if exists auto_return_id,
      drop column if exists auto_return_status, drop column if exists auto_return_error`);
  }
}
