import { Migration } from '@mikro-orm/migrations';
import { moneyExceptionsDdl } from '@wallet/platform';

/**
 * The PSE saga's money states (domain/deposit-machine.ts): a deposit is CREDITING while its
 * credit is owed and REVERSING while its reversal is owed (formerly PENDING_CONFIRM / ASSIGNED with
 * `pending_step` set). `pending_step` stays, derived from the state (a CHECK ties the two), for
 * operators' queries. The sweeper's queues follow: links by expiry, money states by step time
 * (`step_at` null = parked for an operator). And the money exceptions: a provider outcome or a
 * ledger answer that contradicts our state (CONTRACT §10), the same shape as the transfer's.
 */
export class Migration0004DepositSaga extends Migration {
  override name = '0004-deposit-saga';

  override up(): void {
    this.addSql(`alter table pse_deposit.deposits drop constraint if exists deposits_status_check`);
    this.addSql(`update pse_deposit.deposits set status = 'CREDITING' where status = 'PENDING_CONFIRM' and pending_step = 'CREDIT'`);
    this.addSql(`update pse_deposit.deposits set status = 'REVERSING' where status = 'ASSIGNED' and pending_step = 'REVERSE'`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_status_check check (status in
      ('PENDING_CONFIRM', 'CREDITING', 'ASSIGNED', 'REVERSING', 'REVERSED', 'FAILED', 'EXPIRED', 'UNASSIGNED'))`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_money_step_ck check (
      (status = 'CREDITING' and pending_step = 'CREDIT') or (status = 'REVERSING' and pending_step = 'REVERSE')
      or (status not in ('CREDITING', 'REVERSING') and pending_step is null))`);
    this.addSql(`drop index if exists pse_deposit.deposits_expiry_idx`);
    this.addSql(`create index deposits_expiry_idx on pse_deposit.deposits (expires_at) where status = 'PENDING_CONFIRM'`);
    this.addSql(`drop index if exists pse_deposit.deposits_step_idx`);
    this.addSql(`create index deposits_step_idx on pse_deposit.deposits (step_at) where status in ('CREDITING', 'REVERSING') and step_at is not null`);

    for (const sql of moneyExceptionsDdl('pse_deposit')) this.addSql(sql);
  }

  override down(): void {
    this.addSql('drop table if exists pse_deposit.money_exceptions');
    this.addSql(`alter table pse_deposit.deposits drop constraint if exists deposits_money_step_ck, drop constraint if exists deposits_status_check`);
    this.addSql(`update pse_deposit.deposits set status = 'PENDING_CONFIRM' where status = 'CREDITING'`);
    this.addSql(`update pse_deposit.deposits set status = 'ASSIGNED' where status = 'REVERSING'`);
    this.addSql(`alter table pse_deposit.deposits add constraint deposits_status_check check (status in
      ('PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED'))`);
    this.addSql(`drop index if exists pse_deposit.deposits_expiry_idx`);
    this.addSql(`create index deposits_expiry_idx on pse_deposit.deposits (expires_at) where status = 'PENDING_CONFIRM' and pending_step is null`);
    this.addSql(`drop index if exists pse_deposit.deposits_step_idx`);
    this.addSql(`create index deposits_step_idx on pse_deposit.deposits (step_at) where pending_step is not null`);
  }
}
