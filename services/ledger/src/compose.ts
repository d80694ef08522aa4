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
import { ledgerV1 } from '@wallet/proto';
import { ledgerDeps } from './app/deps.js';
import { ledgerUseCases } from './app/use-cases.js';
import { BalanceAlertEvaluator } from './app/balance-alerts.js';
import { ledgerHandlers, ledgerAccess } from './grpc/ledger.handlers.js';
import { SqlLedgerStore } from './persistence/ledger.store.js';
import { JournalStore } from './persistence/journal.store.js';
import { JournalSealer } from './app/journal.js';
import { BalanceCheckpointer } from './app/balance-checkpoints.js';
import { LedgerSelfCheck } from './app/self-check.js';
import { CheckpointStore } from './persistence/checkpoint.store.js';
import { ledgerMigrations, ledgerOnlineIndexes } from './persistence/migrations/index.js';

export const LEDGER_SCHEMA = 'ledger';

export interface LedgerRuntimeOptions {
  /** This process's mesh credentials (mutual TLS for its gRPC server and its clients). */
  mesh: MeshTls;
  databaseUrl: string;
  natsUrl: string;
  namespace: string;
  /** JetStream stream replicas (NATS_STREAM_REPLICAS). */
  streamReplicas?: number;
  grpcHost: string;
  grpcPort: number;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  migrateOnStart: boolean;
  /** NODE_ENV=production: a database role that could rewrite history is refused at start. */
  production?: boolean;
  poolMax: number;
  /** How often wallets that moved are checked against their balance alerts (BALANCE_ALERT_INTERVAL_MS). */
  balanceAlertIntervalMs?: number;
  /** How often committed postings are sealed into the journal's chain (JOURNAL_SEAL_INTERVAL_MS). */
  journalSealIntervalMs?: number;
  /**
   * The balance checkpointer (BALANCE_CHECKPOINT_INTERVAL_MS, BALANCE_CHECKPOINT_MARGIN_SECONDS);
   * default every minute, 300 s margin. 'off': none in this process (tests that run passes themselves).
   */
  balanceCheckpoints?: { intervalMs: number; marginSeconds: number } | 'off';
  /**
   * How often the journal is checked since the verified cut, and the cut moved (LEDGER_SELF_CHECK_INTERVAL_MS,
   * docs/ledger-check.md); the first run one interval after start. 0 or absent: none in this process.
   */
  selfCheckIntervalMs?: number;
  logger: Logger;
}

export interface LedgerRuntime {
  db: Database;
  bus: Bus;
  relay: OutboxRelay;
  grpcPort: number;
  opsPort: number | null;
  ops: OpsServer;
  /** Stops taking calls, finishes in-flight ones, flushes the outbox, closes connections. */
  stop(): Promise<void>;
}

/**
 * The composition root shared by main.ts and testing.ts: database (migrated when asked) → bus
 * and LEDGER stream → outbox relay → use cases → gRPC server → ops endpoints.
 */
export async function composeLedger(o: LedgerRuntimeOptions): Promise<LedgerRuntime> {
  const log = o.logger;
  const scope = new ServiceScope(log);
  try {
    // Pipelined publishing (in order, on one connection) costs about a third of the CPU per event of
    // one-at-a-time publishing; every posting writes one event, so this is on the hot path.
    const {
      db,
      bus,
      relay: r,
    } = await scope.infra({
      name: 'ledger',
      schema: LEDGER_SCHEMA,
      databaseUrl: o.databaseUrl,
      migrations: ledgerMigrations,
      onlineIndexes: ledgerOnlineIndexes,
      poolMax: o.poolMax,
      migrateOnStart: o.migrateOnStart,
      production: o.production === true,
      natsUrl: o.natsUrl,
      namespace: o.namespace,
      ...(o.streamReplicas ? { streamReplicas: o.streamReplicas } : {}),
      streams: ['LEDGER', 'WALLETS'],
      relay: { intervalMs: 250, batch: 500, concurrency: 64, nudgeDelayMs: 20 },
    });
    const relay = r!;

    const store = new SqlLedgerStore(db);
    // Fee schedules from memory, kept current by their change feed (a quote or a send reads no table for them).
    await store.watchFeeConfigs(log);
    scope.defer(() => store.stopWatchingFeeConfigs());
    const deps = ledgerDeps(store, relay);
    // Balance alerts (docs/balance-alerts.md): evaluated beside the posting path, never in it.
    const evaluator = new BalanceAlertEvaluator(deps, { intervalMs: o.balanceAlertIntervalMs ?? 1000 }, log);
    // The tamper-evident journal (docs/journal.md): sealed beside the posting path, never in it.
    const journal = new JournalStore(db);
    const sealer = new JournalSealer(journal, deps, { intervalMs: o.journalSealIntervalMs ?? 1000 }, log);
    // Balance checkpoints (docs/balance-checkpoints.md): written beside the posting path, never in it.
    const checkpointer =
      o.balanceCheckpoints === 'off'
        ? undefined
        : new BalanceCheckpointer(new CheckpointStore(db), o.balanceCheckpoints ?? { intervalMs: 60_000, marginSeconds: 300 }, log);
    const uc = ledgerUseCases(deps, { evaluator }, journal);
    const implementation = asyncService<ledgerV1.LedgerServiceServer>(ledgerHandlers(uc), log, ledgerAccess, o.mesh);
    const grpc = await startGrpcServer(o.grpcHost, o.grpcPort, [{ definition: ledgerV1.LedgerServiceService, implementation }], o.mesh);
    scope.defer(() => grpc.stop(5_000));
    evaluator.start();
    scope.defer(() => evaluator.stop());
    sealer.start();
    scope.defer(() => sealer.stop());
    if (checkpointer) {
      checkpointer.start();
      scope.defer(() => checkpointer.stop());
    }
    if (o.selfCheckIntervalMs) {
      // The journal's invariants since the verified cut (docs/ledger-check.md): beside the posting path.
      const selfCheck = new LedgerSelfCheck(uc.checkInvariants, { intervalMs: o.selfCheckIntervalMs }, log);
      selfCheck.start();
      scope.defer(() => selfCheck.stop());
    }

    const { ops, opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort: grpc.port, opsPort }, 'ledger started');
    return { db, bus, relay, ops, grpcPort: grpc.port, opsPort, stop: () => scope.stop() };
  } catch (err) {
    await scope.stop();
    throw err;
  }
}
