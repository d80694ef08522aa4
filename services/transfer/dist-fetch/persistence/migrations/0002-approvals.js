import { Migration } from '@mikro-orm/migrations';
/**
 * Multi-signature approvals (CONTRACT §5): a send of a company with threshold ≥ 2 is accepted as
 * AWAITING_APPROVAL (funds reserved), then EXECUTING at quorum (dispatched like any send), or
 * EXPIRED / FAILED (rejected) with the funds released. The approval and its signatures are kept
 * here; the transfer row carries the approval's id, threshold and deadline for its own answers.
 */
export class Migration0002Approvals extends Migration {
    name = '0002-approvals';
    up() {
        this.addSql(`alter table transfer.transfers drop constraint if exists transfers_state_check`);
        this.addSql(`alter table transfer.transfers add constraint transfers_state_check check (state in
      ('RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED', 'COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED'))`);
        this.addSql(`alter table transfer.transfers
      add column approval_id text,
      add column approval_threshold integer,
      add column approval_expires_at timestamptz,
      add column approved_at timestamptz`);
        this.addSql(`drop index if exists transfer.transfers_due_idx`);
        this.addSql(`create index transfers_due_idx on transfer.transfers (next_attempt_at)
      where state in ('RECEIVED', 'RESERVED', 'AWAITING_APPROVAL', 'EXECUTING', 'DISPATCHED')`);
        this.addSql(`
      create table transfer.approvals (
        id text primary key,
        transfer_id uuid not null unique,
        company_id text not null,
        threshold integer not null check (threshold >= 2),
        status text not null check (status in ('PENDING', 'APPROVED', 'REJECTED', 'EXPIRED')),
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        decided_at timestamptz,
        reject_reason text,
        rejected_by text
      )`);
        this.addSql(`create index approvals_company_status_idx on transfer.approvals (company_id, status, created_at desc, id desc)`);
        this.addSql(`
      create table transfer.approval_signatures (
        approval_id text not null references transfer.approvals (id),
        user_id text not null,
        email text not null,
        role text not null check (role in ('ADMIN', 'OPERATOR')),
        signed_at timestamptz not null default now(),
        primary key (approval_id, user_id)
      )`);
    }
    down() {
        this.addSql('drop table if exists transfer.approval_signatures');
        this.addSql('drop table if exists transfer.approvals');
        this.addSql(`alter table transfer.transfers drop column if exists approval_id, drop column if exists approval_threshold,
      drop column if exists approval_expires_at, drop column if exists approved_at`);
    }
}
//# sourceMappingURL=0002-approvals.js.map