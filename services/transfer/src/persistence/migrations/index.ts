import type { OnlineIndex } from '@wallet/platform';
import type { TransferDataProtection } from '../data-protection.js';
import { Migration0001TransferInitial } from './0001-transfer-initial.js';
import { Migration0002Approvals } from './0002-approvals.js';
import { Migration0003MoneySafeSaga } from './0003-money-safe-saga.js';
import { sealedAccountNumbers } from './0004-sealed-account-numbers.js';
import { Migration0005IdempotencyKeys } from './0005-idempotency-keys.js';
import { Migration0006SettlementsIndex } from './0006-settlements-index.js';
import { Migration0007Batches } from './0007-batches.js';
import { Migration0008BatchApprovals } from './0008-batch-approvals.js';
import { Migration0009LimitsInOneStatement } from './0009-limits-in-one-statement.js';
import { Migration0010AmlFeed } from './0010-aml-feed.js';
import { Migration0012DispatchClock } from './0012-dispatch-clock.js';
import { destinationScreening } from './0013-destination-screening.js';
import { Migration0014TraceContext } from './0014-trace-context.js';
import { Migration0015Counterparties } from './0015-counterparties.js';
import { Migration0016ApprovalPolicies } from './0016-approval-policies.js';
import { Migration0017BatchFinalSummary } from './0017-batch-final-summary.js';

/**
 * Every transfer migration, in order. Append only. Made with the service's data protection (key
 * TRANSFER_DATA_KEY): 0004 seals the account numbers already stored, and 0013 fingerprints the
 * destinations of recent transfers, which SQL alone cannot do.
 */
export function transferMigrations(protection: TransferDataProtection) {
  return [
    Migration0001TransferInitial,
    Migration0002Approvals,
    Migration0003MoneySafeSaga,
    sealedAccountNumbers(protection),
    Migration0005IdempotencyKeys,
    Migration0006SettlementsIndex,
    Migration0007Batches,
    Migration0008BatchApprovals,
    Migration0009LimitsInOneStatement,
    Migration0010AmlFeed,
    Migration0012DispatchClock,
    destinationScreening(protection),
    Migration0014TraceContext,
    Migration0015Counterparties,
    Migration0016ApprovalPolicies,
    Migration0017BatchFinalSummary,
  ];
}

/**
 * Indexes on tables that already hold data, built online after the migrations (`CREATE INDEX
 * CONCURRENTLY`: writes go on; docs/migrations.md "Online indexes"). Append only; a name is never reused.
 */
export const transferOnlineIndexes: readonly OnlineIndex[] = [
  // A bulk payout's summary (GET /transfers/batches[/{id}], SqlBatchStore.summaries, issue 44): each executed
  // item's transfer state. Found by its id, that was one primary-key probe per item into the whole table
  // (5,000 for a batch of 5,000: 5.7 ms on an empty table, 84 ms p50 among 3,000,000 transfers); read from
  // here, the batch's transfers are one contiguous index-only range, hashed against its items.
  { name: 'transfers_batch_items_idx', on: 'transfer.transfers (batch_id, id) include (state) where batch_id is not null' },
];
