import type { OnlineIndex } from '@wallet/platform';
import { Migration0001PseDepositInitial } from './0001-pse-deposit-initial.js';
import { Migration0002BrebListing } from './0002-breb-listing.js';
import { Migration0003InboxHandledAt } from './0003-inbox-handled-at.js';
import { Migration0004DepositSaga } from './0004-deposit-saga.js';
import { Migration0005SettlementTimes } from './0005-settlement-times.js';
import { Migration0006BookedLegsOnly } from './0006-booked-legs-only.js';
import { Migration0007TraceContext } from './0007-trace-context.js';
import { Migration0008Cobros } from './0008-cobros.js';
import { Migration0009CobroPseLinks } from './0009-cobro-pse-links.js';
import { Migration0010CobroCompanies } from './0010-cobro-companies.js';
import { Migration0011DepositReturns } from './0011-deposit-returns.js';
import { Migration0012CobroAutoReturns } from './0012-cobro-auto-returns.js';
import { Migration0013CobroAmountTolerance } from './0013-cobro-amount-tolerance.js';
import { Migration0014CobroPaymentReturns } from './0014-cobro-payment-returns.js';
import { Migration0015CobroPaymentReversals } from './0015-cobro-payment-reversals.js';
import { Migration0016ParkedReturnExceptions } from './0016-parked-return-exceptions.js';
import { Migration0017DepositCounts } from './0017-deposit-counts.js';

/** Every pse-deposit migration, in order. Append only. */
export const depositMigrations = [
  Migration0001PseDepositInitial,
  Migration0002BrebListing,
  Migration0003InboxHandledAt,
  Migration0004DepositSaga,
  Migration0005SettlementTimes,
  Migration0006BookedLegsOnly,
  Migration0007TraceContext,
  Migration0008Cobros,
  Migration0009CobroPseLinks,
  Migration0010CobroCompanies,
  Migration0011DepositReturns,
  Migration0012CobroAutoReturns,
  Migration0013CobroAmountTolerance,
  Migration0014CobroPaymentReturns,
  Migration0015CobroPaymentReversals,
  Migration0016ParkedReturnExceptions,
  Migration0017DepositCounts,
];

/**
 * Indexes on existing tables, built online after the migrations (docs/migrations.md: a migration may not
 * build an index on a table that already exists). The deposits listing (GET /deposits) filtered by rail
 * or by Bre-B key, newest first (docs/benchmarks.md "The deposits listing at scale"): the listing's index
 * (company_id, created_at desc, id desc) gives the order but not the filter, and the keys' own indexes
 * the filter but not the order, so a page read (and sorted, or walked past) all the company's deposits.
 * `source` never changes; a key's ids only when a Bre-B event names the key.
 *
 * Each key index replaces the migrations' unordered one, `(company_id, breb_key_id | breb_key_external_id)`:
 * a generic plan (what a connection keeps for the listing's statement after a few calls) estimates a company
 * by the average one and took the smaller unordered index, so a key's page read and sorted all the key's
 * deposits (89 ms for a key with 26,667). `Database.buildOnlineIndex` drops it concurrently once the
 * replacement is valid, never a migration (which runs before the replacement is built).
 */
export const pseDepositOnlineIndexes: readonly OnlineIndex[] = [
  { name: 'deposits_company_source_created_idx', on: 'pse_deposit.deposits (company_id, source, created_at desc, id desc)' },
  {
    name: 'deposits_company_breb_key_created_idx',
    on: 'pse_deposit.deposits (company_id, breb_key_id, created_at desc, id desc) where breb_key_id is not null',
    replaces: ['deposits_breb_key_idx'],
  },
  {
    name: 'deposits_company_breb_ext_created_idx',
    on: 'pse_deposit.deposits (company_id, breb_key_external_id, created_at desc, id desc) where breb_key_external_id is not null',
    replaces: ['deposits_breb_ext_idx'],
  },
];
