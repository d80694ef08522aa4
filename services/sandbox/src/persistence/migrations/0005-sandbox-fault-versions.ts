import { Migration } from '@mikro-orm/migrations';

/**
 * The fault switches are read from memory and kept current by a change feed (LISTEN/NOTIFY on
 * `sandbox_faults`). Each change takes a version from one sequence, so a copy only ever moves
 * forward: a reload that read a switch before a change cannot store the old value after it.
 */
export class Migration0005SandboxFaultVersions extends Migration {
  override name = '0005-sandbox-fault-versions';

  override up(): void {
    this.addSql('create sequence sandbox.faults_version');
    this.addSql(`alter table sandbox.faults add column version bigint not null default nextval('sandbox.faults_version')`);
  }

  override down(): void {
    this.addSql('alter table sandbox.faults drop column if exists version');
    this.addSql('drop sequence if exists sandbox.faults_version');
  }
}
