import {
  ServiceScope,
  asyncService,
  startGrpcServer,
  type Bus,
  type Database,
  type Logger,
  type OpsServer,
  type OutboxRelay,
  type MeshTls,
} from '@wallet/platform';
import { transferV1 } from '@wallet/proto';
import { HttpBrebDirectory } from './adapters/breb-directory.client.js';
import { GrpcLedger } from './adapters/ledger.client.js';
import { HttpRails } from './adapters/rails.client.js';
import { transferDeps, type TransferSettings } from './app/deps.js';
import { meterTransferStore, watchExceptions, watchSagaStates } from './app/metrics.js';
import { Sweeper } from './app/sweeper.js';
import { batchUseCases, counterpartyUseCases, policyUseCases, transferUseCases } from './app/use-cases.js';
import { PolicyBook } from './app/policy-book.js';
import { SqlPolicyStore } from './persistence/policy.store.js';
import { CounterpartySweeper } from './app/counterparty-sweeper.js';
import type { CounterpartyDeps } from './app/counterparty-verifier.js';
import { SqlCounterpartyStore } from './persistence/counterparty.store.js';
import { BatchSweeper } from './app/batch-sweeper.js';
import type { BatchDeps } from './app/deps.js';
import { SqlBatchStore } from './persistence/batch.store.js';
import type { TransferConfig } from './config.js';
import { transferHandlers, transferAccess } from './grpc/transfer.handlers.js';
import { TransferSettlements } from './app/settlements.js';
import { SqlSettlementReader } from './persistence/settlement.store.js';
import { TransferDataProtection } from './persistence/data-protection.js';
import { transferMigrations, transferOnlineIndexes } from './persistence/migrations/index.js';
import { SqlApprovalStore } from './persistence/approval.store.js';
import { SqlTransferStore } from './persistence/transfer.store.js';

export const TRANSFER_SCHEMA = 'transfer';

export interface TransferRuntimeOptions {
  /** This process's mesh credentials (mutual TLS for its gRPC server and its clients). */
  mesh: MeshTls;
  config: TransferConfig;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  logger: Logger;
}

export interface TransferRuntime {
  db: Database;
  bus: Bus;
  relay: OutboxRelay;
  sweeper: Sweeper;
  grpcPort: number;
  opsPort: number | null;
  ops: OpsServer;
  /** Stops taking calls, finishes in-flight ones, stops the sweeper, flushes the outbox, closes connections. */
  stop(): Promise<void>;
}

export function settingsFrom(c: TransferConfig): TransferSettings {
  return {
    idempotencyWindowSeconds: c.IDEMPOTENCY_WINDOW_SECONDS,
    dispatchTimeoutSeconds: c.RAIL_DISPATCH_TIMEOUT_SECONDS,
    confirmTimeoutSeconds: c.RAIL_CONFIRM_TIMEOUT_SECONDS,
    dispatchRetryBaseMs: c.RAIL_DISPATCH_RETRY_BASE_MS,
    dispatchRetryMaxMs: c.RAIL_DISPATCH_RETRY_MAX_MS,
    sweeperGraceSeconds: c.SWEEPER_GRACE_SECONDS,
    counterpartyDailyLimit: c.COUNTERPARTY_DAILY_LIMIT_CENTS,
    counterpartyMonthlyLimit: c.COUNTERPARTY_MONTHLY_LIMIT_CENTS,
    callbackBaseUrl: c.RAIL_CALLBACK_BASE_URL,
    callbackSecret: c.RAIL_CALLBACK_SECRET,
    duplicateWaitMs: 15_000,
    resolvedKeyTtlSeconds: 600,
    approvalTtlSeconds: c.APPROVAL_TTL_SECONDS,
  };
}

/**
 * The composition root shared by main.ts and testing.ts: database (migrated when asked) → bus and
 * TRANSFERS stream → outbox relay → ledger client and provider adapters → use cases → gRPC server
 * → sweeper → ops endpoints.
 */
export async function composeTransfer(o: TransferRuntimeOptions): Promise<TransferRuntime> {
  const log = o.logger;
  const c = o.config;
  const scope = new ServiceScope(log);
  const protection = new TransferDataProtection(c.TRANSFER_DATA_KEY);
  try {
    const {
      db,
      bus,
      relay: r,
    } = await scope.infra({
      name: 'transfer',
      schema: TRANSFER_SCHEMA,
      databaseUrl: c.DATABASE_URL,
      migrations: transferMigrations(protection),
      onlineIndexes: transferOnlineIndexes,
      poolMax: c.TRANSFER_DB_POOL_MAX,
      migrateOnStart: c.TRANSFER_MIGRATE_ON_START,
      production: c.NODE_ENV === 'production',
      natsUrl: c.NATS_URL,
      namespace: c.BUS_NAMESPACE,
      streamReplicas: c.NATS_STREAM_REPLICAS,
      streams: ['TRANSFERS', 'COUNTERPARTIES', 'COMPANIES'],
      relay: { intervalMs: 250, batch: 500, concurrency: 32, nudgeDelayMs: 20 },
    });
    const relay = r!;

    const ledger = new GrpcLedger(c.LEDGER_GRPC_ADDR, o.mesh, c.LEDGER_DEADLINE_MS);
    scope.defer(async () => ledger.close());

    const transfers = new SqlTransferStore(db, protection);
    // The AML list from memory, kept current by its change feed (a send reads no table for it).
    await transfers.watchAml(log);
    scope.defer(() => transfers.stopWatchingAml());
    const rails = new HttpRails({ breb: c.BREB_RAIL_URL, ach: c.ACH_RAIL_URL }, c.PROVIDER_HTTP_TIMEOUT_MS, log);
    const counterpartyStore = new SqlCounterpartyStore(db, protection);
    const policyStore = new SqlPolicyStore(db);
    const policySettings = { changeDelayMs: c.POLICY_CHANGE_DELAY_SECONDS * 1000, cacheMs: c.POLICY_CACHE_SECONDS * 1000 };
    const deps = transferDeps({
      policies: new PolicyBook(policyStore, policySettings),
      counterparties: counterpartyStore,
      store: meterTransferStore(transfers),
      approvals: new SqlApprovalStore(db, protection),
      ledger,
      directory: new HttpBrebDirectory(c.BREB_DIRECTORY_URL, c.PROVIDER_HTTP_TIMEOUT_MS, log),
      rails,
      settings: settingsFrom(c),
      log,
      eventsWritten: () => relay.nudge(),
      destinationFingerprint: (d) => protection.destinationFingerprint(d),
    });
    const counterpartyDeps: CounterpartyDeps = {
      ...deps,
      counterparties: counterpartyStore,
      prenotes: rails,
      counterpartySettings: { prenoteCheckMs: c.COUNTERPARTY_PRENOTE_CHECK_SECONDS * 1000, retryMs: c.SWEEPER_GRACE_SECONDS * 1000 },
    };
    const counterparties = counterpartyUseCases(counterpartyDeps);
    const uc = transferUseCases(deps, counterparties.prenoteCallback);
    const policies = policyUseCases({ ...deps, policies: deps.policies!, policyStore, policySettings });
    scope.defer(watchSagaStates(db));
    scope.defer(watchExceptions(deps.store));

    const sweeper = new Sweeper(deps, uc.saga, { intervalMs: c.SWEEPER_INTERVAL_MS, batch: c.SWEEPER_BATCH });
    sweeper.start();
    scope.defer(() => sweeper.stop());

    const counterpartySweeper = new CounterpartySweeper(counterpartyDeps, counterparties.verifier, {
      intervalMs: c.SWEEPER_INTERVAL_MS,
      batch: c.SWEEPER_BATCH,
    });
    counterpartySweeper.start();
    scope.defer(() => counterpartySweeper.stop());

    const batchDeps: BatchDeps = {
      ...deps,
      batches: new SqlBatchStore(db, protection),
      batchSettings: {
        dispatchConcurrency: c.BATCH_DISPATCH_CONCURRENCY,
        railBulk: c.BATCH_RAIL_BULK,
        pagesInFlight: c.BATCH_DISPATCH_PAGES,
        lookupConcurrency: c.BATCH_LOOKUP_CONCURRENCY,
        fundingLeaseMs: c.BATCH_FUNDING_LEASE_SECONDS * 1000,
        pollMs: Math.max(250, c.SWEEPER_INTERVAL_MS),
      },
    };
    const batches = batchUseCases(batchDeps, uc.saga);
    const batchSweeper = new BatchSweeper(batchDeps, batches.runner, { intervalMs: c.SWEEPER_INTERVAL_MS, batch: 10 });
    batchSweeper.start();
    scope.defer(() => batchSweeper.stop());

    const implementation = asyncService<transferV1.TransferServiceServer>(
      transferHandlers(uc, new TransferSettlements(new SqlSettlementReader(db)), batches, counterparties, policies),
      log,
      transferAccess,
      o.mesh,
    );
    const grpc = await startGrpcServer(c.TRANSFER_GRPC_HOST, c.TRANSFER_GRPC_PORT, [{ definition: transferV1.TransferServiceService, implementation }], o.mesh);
    scope.defer(() => grpc.stop(10_000));

    const { ops, opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort: grpc.port, opsPort }, 'transfer started');

    return {
      db,
      bus,
      relay,
      sweeper,
      ops,
      grpcPort: grpc.port,
      opsPort,
      stop: () => scope.stop(),
    };
  } catch (err) {
    await scope.stop();
    throw err;
  }
}
