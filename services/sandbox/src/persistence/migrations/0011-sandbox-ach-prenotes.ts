import { Migration } from '@mikro-orm/migrations';

const CODES = `('R02', 'R03', 'R04', 'R16', 'R17')`;

/**
 * ACH prenotes (docs/sandbox.md "ACH prenotes"): zero-value test entries the ACH rail accepts or
 * rejects with a return code. One row per prenote, `prenote_id` the product's idempotency key; its
 * outcome and due time are decided at submission (`decided_*`, `outcome_due_at`) and recorded by
 * the scheduler (or a forced outcome) under the row's lock, with its callback in the same
 * transaction, as the rails' transfers. No money: nothing here is in a settlement report.
 * `ach_prenote_behaviours` holds the per-account test switch (delay, rejection rate, code).
 */
export class Migration0011SandboxAchPrenotes extends Migration {
  override name = '0011-sandbox-ach-prenotes';

  override up(): void {
    this.addSql(`
      create table if not exists sandbox.ach_prenotes (
        prenote_id text primary key,
        bank_code text not null,
        account_type_id smallint not null,
        account_number text not null,
        document_type_id smallint not null,
        document_number text not null,
        holder_name text,
        callback_url text not null,
        status text not null default 'PENDING' check (status in ('PENDING', 'ACCEPTED', 'REJECTED')),
        reason_code text check (reason_code in ${CODES}),
        decided_status text not null check (decided_status in ('ACCEPTED', 'REJECTED')),
        decided_reason_code text check (decided_reason_code in ${CODES}),
        outcome_due_at timestamptz not null,
        submitted_at timestamptz not null default clock_timestamp(),
        settled_at timestamptz,
        forced boolean not null default false,
        constraint ach_prenotes_settled_ck check ((status = 'PENDING') = (settled_at is null)),
        constraint ach_prenotes_reason_ck check ((status = 'REJECTED') = (reason_code is not null)),
        constraint ach_prenotes_decided_ck check ((decided_status = 'REJECTED') = (decided_reason_code is not null))
      )`);
    this.addSql(`create index if not exists ach_prenotes_due_idx on sandbox.ach_prenotes (outcome_due_at) where status = 'PENDING'`);

    this.addSql(`
      create table if not exists sandbox.ach_prenote_behaviours (
        account_number text primary key,
        delay_ms integer not null check (delay_ms between 0 and 600000),
        rejection_rate double precision not null check (rejection_rate >= 0 and rejection_rate <= 1),
        reason_code text not null check (reason_code in ${CODES}),
        updated_at timestamptz not null default clock_timestamp()
      )`);
  }

  override down(): void {
    this.addSql(`drop table if exists sandbox.ach_prenote_behaviours`);
    this.addSql(`drop table if exists sandbox.ach_prenotes`);
  }
}
