import { Migration } from '@mikro-orm/migrations';

/**
 * Resolving a money exception by a person's judgement is an approval request too (EXCEPTION_RESOLVE,
 * app/exception-resolutions.ts): the action check of gateway.approval_requests (0008) admits it. `NOT VALID`: the
 * check only widens, every row already holds it, and nothing scans the table under the migration's lock.
 */
export class Migration0012ExceptionResolveApprovals extends Migration {
  override name = '0012-exception-resolve-approvals';

  override up(): void {
    this.addSql(`alter table gateway.approval_requests drop constraint if exists approval_requests_action_check`);
    this.addSql(`alter table gateway.approval_requests add constraint approval_requests_action_check check (action in (
      'COMPANY_UPDATE', 'API_KEY_ISSUE', 'DASHBOARD_USER_ADD', 'OPERATOR_INVITE', 'OPERATOR_DISABLE', 'FEE_SET', 'AML_REMOVE', 'EXCEPTION_RESOLVE')) not valid`);
  }

  override down(): void {
    this.addSql(`alter table gateway.approval_requests drop constraint if exists approval_requests_action_check`);
    this.addSql(`alter table gateway.approval_requests add constraint approval_requests_action_check check (action in (
      'COMPANY_UPDATE', 'API_KEY_ISSUE', 'DASHBOARD_USER_ADD', 'OPERATOR_INVITE', 'OPERATOR_DISABLE', 'FEE_SET', 'AML_REMOVE')) not valid`);
  }
}
