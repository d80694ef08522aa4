import { Migration } from '@mikro-orm/migrations';

/**
 * Multi-signature bulk payouts (docs/batches.md): a batch of a company with a threshold ≥ 2 has ONE
 * approval for all its items. An approval now belongs to a transfer or to a batch (exactly one); the
 * batch's items carry its id like a single send's transfer does, so the sweeper settles each of them
 * (rejected or expired) the way it settles a single send.
 */
export class Migration0008BatchApprovals extends Migration {
  override name = '0008-batch-approvals';

  override up(): void {
    this.addSql('alter table transfer.approvals alter column transfer_id drop not null');
    this.addSql('alter table transfer.approvals add column batch_id uuid');
    this.addSql('create unique index approvals_batch_uq on transfer.approvals (batch_id) where batch_id is not null');
    this.addSql(`alter table transfer.approvals add constraint approvals_owner_check
      check ((transfer_id is null) <> (batch_id is null))`);
  }

  override down(): void {
    this.addSql('alter table transfer.approvals drop constraint if exists approvals_owner_check');
    this.addSql('delete from transfer.approval_signatures s using transfer.approvals a where a.id = s.approval_id and a.batch_id is not null');
    this.addSql('delete from transfer.approvals where batch_id is not null');
    this.addSql('drop index if exists transfer.approvals_batch_uq');
    this.addSql('alter table transfer.approvals drop column if exists batch_id');
    this.addSql('alter table transfer.approvals alter column transfer_id set not null');
  }
}
