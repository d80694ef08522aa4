import { Migration } from '@mikro-orm/migrations';
import { moneyExceptionsDdl } from '@wallet/platform';

/**
 * The inbound payment saga's states (domain/payment-machine.ts): a payment is CREDITING while its
 * credit is owed and HOLDING while its hold is owed (formerly ASSIGNED / UNASSIGNED with
 * `pending_step` set), CREDIT_REFUSED when the ledger refused the credit for good, and ASSIGNING
 * while the assignment of a held (UNASSIGNED) payment to its company is owed, RETURNING while its
 * return to the payer is owed and RETURNED once done.
 * `pending_step` stays, derived from the state (a CHECK ties the two). `step_at` null in a money
 * state = parked for an operator. Every state change is kept in `payment_history` (append-only).
 * And the money exceptions (CONTRACT §10), the same table as transfer's and pse-deposit's.
 */
export class Migration0005PaymentSaga extends Migration {
  override name = '0005-payment-saga';

  override up(): void {
    // The initial migration's checks on status (the column's, and the unnamed one tying a fee to ASSIGNED).
    this.addSql(`do $$ declare c record; begin
      for c in select conname from pg_constraint where conrelid = 'collect_key.payments'::regclass and contype = 'c'
          and (pg_get_constraintdef(oid) like '%status%' or pg_get_constraintdef(oid) like '%pending_step%') loop
        execute format('alter table collect_key.payments drop constraint %I', c.conname);
      end loop; end $$`);
    this.addSql(`update collect_key.payments set status = 'CREDITING' where status = 'ASSIGNED' and pending_step = 'CREDIT'`);
    this.addSql(`update collect_key.payments set status = 'HOLDING' where status = 'UNASSIGNED' and pending_step = 'HOLD'`);
    this.addSql(`alter table collect_key.payments add constraint payments_status_check
      check (status in ('CREDITING', 'HOLDING', 'ASSIGNED', 'UNASSIGNED', 'CREDIT_REFUSED', 'ASSIGNING', 'RETURNING', 'RETURNED'))`);
    this.addSql(`alter table collect_key.payments add constraint payments_money_step_ck check (
      (status = 'CREDITING' and pending_step = 'CREDIT') or (status = 'HOLDING' and pending_step = 'HOLD')
      or (status = 'ASSIGNING' and pending_step = 'ASSIGN') or (status = 'RETURNING' and pending_step = 'RETURN')
      or (status not in ('CREDITING', 'HOLDING', 'ASSIGNING', 'RETURNING') and pending_step is null))`);
    this.addSql(`alter table collect_key.payments add constraint payments_fee_ck
      check (status in ('CREDITING', 'ASSIGNED', 'CREDIT_REFUSED', 'ASSIGNING') or total_charged = 0)`);
    this.addSql(`drop index if exists collect_key.payments_pending_idx`);
    this.addSql(
      `create index payments_step_idx on collect_key.payments (step_at) where status in ('CREDITING', 'HOLDING', 'ASSIGNING', 'RETURNING') and step_at is not null`,
    );
    this.addSql(`
      create table collect_key.payment_history (
        id bigserial primary key,
        deposit_id text not null,
        from_state text,
        to_state text not null,
        reason text,
        at timestamptz not null default clock_timestamp()
      )`);
    this.addSql(`create index payment_history_deposit_idx on collect_key.payment_history (deposit_id, id)`);
    this.addSql(`insert into collect_key.payment_history (deposit_id, from_state, to_state, reason)
      select deposit_id, null, status, 'before the saga (migration 0005)' from collect_key.payments`);
    for (const sql of moneyExceptionsDdl('collect_key')) this.addSql(sql);
  }

  override down(): void {
    this.addSql('drop table if exists collect_key.money_exceptions, collect_key.payment_history');
    this.addSql(`alter table collect_key.payments drop constraint if exists payments_status_check,
      drop constraint if exists payments_money_step_ck, drop constraint if exists payments_fee_ck`);
    this.addSql(`update collect_key.payments set status = 'ASSIGNED' where status in ('CREDITING', 'CREDIT_REFUSED')`);
    this.addSql(`update collect_key.payments set status = 'UNASSIGNED', pending_step = null where status in ('ASSIGNING', 'RETURNING', 'RETURNED')`);
    this.addSql(`update collect_key.payments set status = 'UNASSIGNED' where status = 'HOLDING'`);
    this.addSql(`alter table collect_key.payments add constraint payments_status_check check (status in ('ASSIGNED', 'UNASSIGNED'))`);
    this.addSql(`alter table collect_key.payments add constraint payments_pending_step_check check (pending_step in ('CREDIT', 'HOLD'))`);
    this.addSql(`alter table collect_key.payments add constraint payments_check check (status = 'ASSIGNED' or total_charged = 0)`);
    this.addSql(`drop index if exists collect_key.payments_step_idx`);
    this.addSql(`create index payments_pending_idx on collect_key.payments (step_at) where pending_step is not null`);
  }
}
