import { Migration } from '@mikro-orm/migrations';
import { moneyExceptionsDdl } from '@wallet/platform';

/**
 * The saga's intermediate money states (ABANDONING, RELEASING, EXPIRING, COMPLETING: a writer wins
 * the move into one before it touches the ledger), the dispatch intent (attempts counted before the
 * rail is called, misses after a definite "not received"), what a RELEASING transfer writes when it
 * closes, and the money exceptions (a provider outcome that contradicts our state).
 */
export class Migration0003MoneySafeSaga extends Migration {
  override name = '0003-money-safe-saga';

  override up(): void {
    this.addSql(`alter table transfer.transfers drop constraint if exists transfers_state_check`);
    this.addSql(`alter table transfer.transfers add constraint transfers_state_check check (state in
      ('RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'ABANDONING', 'RELEASING', 'EXPIRING', 'COMPLETING',
       'COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED'))`);
    this.addSql(`drop index if exists transfer.transfers_due_idx`);
    this.addSql(`create index transfers_due_idx on transfer.transfers (next_attempt_at)
      where state in ('RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'ABANDONING', 'RELEASING', 'EXPIRING', 'COMPLETING')`);
    this.addSql(`alter table transfer.transfers
      add column dispatch_misses integer not null default 0,
      add column last_dispatch_at timestamptz,
      add column release_event text check (release_event in ('failed', 'rejected')),
      add column rejected_by text`);
    // Every transfer that reached RESERVED before this migration may have been dispatched.
    this.addSql(`update transfer.transfers set dispatch_ambiguous = true where state in ('RESERVED', 'EXECUTING') and dispatch_attempts > 0`);

    for (const sql of moneyExceptionsDdl('transfer')) this.addSql(sql);
  }

  override down(): void {
    this.addSql('drop table if exists transfer.money_exceptions');
    this.addSql(`alter table transfer.transfers drop column dispatch_misses, drop column last_dispatch_at, drop column release_event, drop column rejected_by`);
  }
}
