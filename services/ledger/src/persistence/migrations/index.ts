import { Migration0001LedgerInitial } from './0001-ledger-initial.js';
import { Migration0002HotUpdates } from './0002-hot-updates.js';
import { Migration0003InflowReversal } from './0003-inflow-reversal.js';
import { Migration0004VoidPostings } from './0004-void-postings.js';
import { Migration0005ReconAdjustments } from './0005-recon-adjustments.js';
import { Migration0006PostingsCompanyCreated } from './0006-postings-company-created.js';
import { Migration0007FeeConfigFeed } from './0007-fee-config-feed.js';
import { Migration0008HoldFixedFee } from './0008-hold-fixed-fee.js';
import { Migration0009Corrections } from './0009-corrections.js';
import { Migration0010InflowReturns } from './0010-inflow-returns.js';
import { Migration0011WalletMoves } from './0011-wallet-moves.js';
import { Migration0012BalanceAlerts } from './0012-balance-alerts.js';
import { Migration0013JournalChain } from './0013-journal-chain.js';
import { Migration0014BalanceCheckpoints } from './0014-balance-checkpoints.js';
import { Migration0015JournalCut } from './0015-journal-cut.js';
import type { OnlineIndex } from '@wallet/platform';
import { Migration0016CarriedCheckpoints } from './0016-carried-checkpoints.js';

/** Every ledger migration, in order. Append only. */
export const ledgerMigrations = [
  Migration0001LedgerInitial,
  Migration0002HotUpdates,
  Migration0003InflowReversal,
  Migration0004VoidPostings,
  Migration0005ReconAdjustments,
  Migration0006PostingsCompanyCreated,
  Migration0007FeeConfigFeed,
  Migration0008HoldFixedFee,
  Migration0009Corrections,
  Migration0010InflowReturns,
  Migration0011WalletMoves,
  Migration0012BalanceAlerts,
  Migration0013JournalChain,
  Migration0014BalanceCheckpoints,
  Migration0015JournalCut,
  Migration0016CarriedCheckpoints,
];

/**
 * Indexes on tables that already hold data, built online after the migrations (`CREATE INDEX
 * CONCURRENTLY`: writes go on; docs/migrations.md "Online indexes"). Append only; a name is never reused.
 */
export const ledgerOnlineIndexes: readonly OnlineIndex[] = [
  // The transaction listing filtered by type or by rail, newest first (issue 44): the index
  // (company_id, created_at desc, id desc) gives the order but not the filter, so a filter that matches
  // few of a large company's movements walked all of them (3.9 s at 1,000,000 for one that matched none).
  { name: 'movements_company_type_created_idx', on: 'ledger.movements (company_id, type, created_at desc, id desc)' },
  { name: 'movements_company_rail_created_idx', on: 'ledger.movements (company_id, rail, created_at desc, id desc)' },
];
