import { Migration } from '@mikro-orm/migrations';

/**
 * Approval policies (docs/policies.md).
 * - `approval_policies`: a company's policy versions, immutable once proposed. PROPOSED until the
 *   company's quorum has signed (`required_signatures`, the proposer's own signature first), then
 *   APPROVED with `effective_at` (the quorum's instant plus the change delay), or CANCELLED. At most
 *   one PROPOSED per company. The version in force at an instant is the highest APPROVED one whose
 *   `effective_at` has passed. `approval_policy_signatures`: who signed a version, once each.
 * - `transfers.policy_decision`: what the policy decided for the send (version, rule, outcome),
 *   recorded with the transfer in the statement that creates it; `approval_roles`: the roles whose
 *   signatures its approval counts (a bulk payout's items: the batch's, the strictest of its lines').
 * - `approvals.roles`: the roles whose signatures count (null: ADMIN and OPERATOR, as before); a
 *   rule may ask for a single approval, so the threshold's floor is now 1.
 * - `policy_day_totals`: per company and Bogotá day, the amount of the sends a policy with a
 *   cumulative condition has counted (claimed before the decision, given back when the send is
 *   refused before it is accepted), so that parallel sends each see the others.
 */
export class Migration0016ApprovalPolicies extends Migration {
  override name = '0016-approval-policies';

  override up(): void {
    this.addSql(`
      create table if not exists transfer.approval_policies (
        id text primary key,
        company_id text not null,
        version integer not null check (version >= 1),
        document jsonb not null,
        status text not null check (status in ('PROPOSED', 'APPROVED', 'CANCELLED')),
        required_signatures integer not null check (required_signatures >= 1),
        proposed_by text not null,
        proposed_by_email text not null,
        note text,
        created_at timestamptz not null default now(),
        decided_at timestamptz,
        decided_by text,
        effective_at timestamptz,
        unique (company_id, version),
        check (status <> 'APPROVED' or effective_at is not null)
      )`);
    this.addSql(`create unique index if not exists approval_policies_one_proposed_idx on transfer.approval_policies (company_id) where status = 'PROPOSED'`);
    this.addSql(`
      create table if not exists transfer.approval_policy_signatures (
        policy_id text not null references transfer.approval_policies (id),
        user_id text not null,
        email text not null,
        role text not null,
        signed_at timestamptz not null default clock_timestamp(),
        primary key (policy_id, user_id)
      )`);
    this.addSql(`alter table transfer.transfers add column if not exists policy_decision jsonb`);
    this.addSql(`alter table transfer.transfers add column if not exists approval_roles text[]`);
    this.addSql(`alter table transfer.approvals add column if not exists roles text[]`);
    this.addSql(`alter table transfer.approvals drop constraint if exists approvals_threshold_check`);
    this.addSql(`alter table transfer.approvals add constraint approvals_threshold_check check (threshold >= 1)`);
    this.addSql(`
      create table if not exists transfer.policy_day_totals (
        company_id text not null,
        day date not null,
        sent_cents bigint not null default 0 check (sent_cents >= 0),
        primary key (company_id, day)
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists transfer.policy_day_totals');
    this.addSql(`alter table transfer.approvals drop constraint if exists approvals_threshold_check`);
    this.addSql(`alter table transfer.approvals add constraint approvals_threshold_check check (threshold >= 2) not valid`);
    this.addSql(`alter table transfer.approvals drop column if exists roles`);
    this.addSql(`alter table transfer.transfers drop column if exists approval_roles`);
    this.addSql(`alter table transfer.transfers drop column if exists policy_decision`);
    this.addSql('drop table if exists transfer.approval_policy_signatures');
    this.addSql('drop table if exists transfer.approval_policies');
  }
}
