import { Migration0001CompaniesAndApiKeys } from './0001-companies-and-api-keys.js';
import { Migration0002DashboardUsersAndSessions } from './0002-dashboard-users-and-sessions.js';
import { Migration0003IdempotencyKeys } from './0003-idempotency-keys.js';
import { Migration0004DashboardLockoutsAndInvitations } from './0004-dashboard-lockouts-and-invitations.js';
import { Migration0005OperatorsAuditCreditRequests } from './0005-operators-audit-credit-requests.js';
import { Migration0006IdempotencyUnknownOutcomes } from './0006-idempotency-unknown-outcomes.js';
import { Migration0007AuthChangeFeed } from './0007-auth-change-feed.js';
import { Migration0008ApprovalRequests } from './0008-approval-requests.js';
import { Migration0009SecurityNotices } from './0009-security-notices.js';
import { Migration0010ApiKeyVersions } from './0010-api-key-versions.js';
import { Migration0011Schedules } from './0011-schedules.js';
import { Migration0012ExceptionResolveApprovals } from './0012-exception-resolve-approvals.js';

/** Every gateway migration, in order. Append only. */
export const gatewayMigrations = [
  Migration0001CompaniesAndApiKeys,
  Migration0002DashboardUsersAndSessions,
  Migration0003IdempotencyKeys,
  Migration0004DashboardLockoutsAndInvitations,
  Migration0005OperatorsAuditCreditRequests,
  Migration0006IdempotencyUnknownOutcomes,
  Migration0007AuthChangeFeed,
  Migration0008ApprovalRequests,
  // 0008 (two-person approval requests) is merged in before this one.
  Migration0009SecurityNotices,
  Migration0010ApiKeyVersions,
  Migration0011Schedules,
  Migration0012ExceptionResolveApprovals,
];

/**
 * What the gateway's processes may only append to and read (docs/security.md "Database roles"): the audit log and the
 * permanent bootstrap mark. Its runtime role gets INSERT and SELECT on them, nothing else.
 */
export const GATEWAY_APPEND_ONLY_TABLES = ['admin_audit', 'bootstrap_state'] as const;
