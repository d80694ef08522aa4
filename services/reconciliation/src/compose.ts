import { hostname } from 'node:os';
import {
  PeriodicTask,
  ServiceScope,
  asyncService,
  startGrpcServer,
  type Bus,
  type Database,
  type Logger,
  type MeshTls,
  type OpsServer,
  type OutboxRelay,
} from '@wallet/platform';
import { reconciliationV1 } from '@wallet/proto';
import { Cron } from 'croner';
import { GrpcOurRecords } from './adapters/grpc-our-records.js';
import { HttpReportSource } from './adapters/http-report-source.js';
import { GrpcClearingLedger } from './adapters/ledger.client.js';
import { SpillSorter } from './adapters/spill-sorter.js';
import { reverseAdjustments } from './app/exceptions.js';
import { countRun, initRunSeries, watchOpenExceptions } from './app/metrics.js';
import { ReconcileDay } from './app/reconcile-day.js';
import type { ClearingLedger } from './app/deps.js';
import { reconciliationUseCases, type ReconciliationUseCases } from './app/use-cases.js';
import { Scheduler, type TriggerFactory } from './app/scheduler.js';
import type { ReconciliationConfig } from './config.js';
import { reconciliationAccess, reconciliationHandlers } from './grpc/reconciliation.handlers.js';
import { reconciliationMigrations } from './persistence/migrations/index.js';
import {
  BreakStore,
  RECONCILIATION_SCHEMA,
  RunStore,
  SqlBreakSink,
  SqlScheduleClaims,
  decodeCursor,
  reconciliationExceptions,
} from './persistence/reconciliation.store.js';

export interface ReconciliationRuntimeOptions {
  /** This process's mesh credentials (identity `reconciliation`: its gRPC server and its clients). */
  mesh: MeshTls;
  config: ReconciliationConfig;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  logger: Logger;
  /** Tests: the scheduler's triggers (default: croner in RECON_TIMEZONE), its clock and its waits. */
  triggers?: TriggerFactory;
  now?: () => Date;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Tests: the ledger (default: LedgerService over the mesh at LEDGER_GRPC_ADDR). */
  ledger?: ClearingLedger;
  /** Tests: how often a run beats (default 15 s). */
  heartbeatMs?: number;
}

export interface ReconciliationRuntime {
  db: Database;
  bus: Bus;
  relay: OutboxRelay;
  useCases: ReconciliationUseCases;
  scheduler: Scheduler;
  runs: RunStore;
  grpcPort: number;
  opsPort: number | null;
  ops: OpsServer;
  /** Stops taking calls and the scheduler, ends the runs under way (recorded FAILED), flushes the outbox, closes connections. */
  stop(): Promise<void>;
}

/** croner, in the configured time zone; an overrun never runs twice at once. */
export const cronTriggers: TriggerFactory = (_rail, cron, timezone, fire) => new Cron(cron, { timezone, protect: true }, fire);

/**
 * The composition root shared by main.ts and the tests: database (migrated when asked) → bus and the
 * RECONCILIATION stream → outbox relay → report source, our records (transfer, pse-deposit,
 * collect-key), the ledger → ReconcileDay → use cases → gRPC server → stale-run sweeper → scheduler → ops.
 */
export async function composeReconciliation(o: ReconciliationRuntimeOptions): Promise<ReconciliationRuntime> {
  const log = o.logger;
  const c = o.config;
  const scope = new ServiceScope(log);
  try {
    const {
      db,
      bus,
      relay: r,
    } = await scope.infra({
      name: 'reconciliation',
      schema: RECONCILIATION_SCHEMA,
      databaseUrl: c.DATABASE_URL,
      migrations: reconciliationMigrations,
      poolMax: c.RECONCILIATION_DB_POOL_MAX,
      migrateOnStart: c.RECONCILIATION_MIGRATE_ON_START,
      production: c.NODE_ENV === 'production',
      natsUrl: c.NATS_URL,
      namespace: c.BUS_NAMESPACE,
      streamReplicas: c.NATS_STREAM_REPLICAS,
      streams: ['RECONCILIATION'],
      relay: { intervalMs: 500, batch: 500, concurrency: 16, nudgeDelayMs: 20 },
    });
    const relay = r!;
    const nudge = () => relay.nudge();

    const source = new HttpReportSource({ reportsUrl: c.RECON_REPORTS_URL, ...(c.RECON_REPORTS_TOKEN ? { token: c.RECON_REPORTS_TOKEN } : {}) });
    scope.defer(() => source.close());
    const ours = new GrpcOurRecords({
      mesh: o.mesh,
      transferAddress: c.TRANSFER_GRPC_ADDR,
      pseDepositAddress: c.DEPOSIT_GRPC_ADDR,
      collectKeyAddress: c.COLLECT_KEY_GRPC_ADDR,
    });
    scope.defer(() => ours.close());
    let ledger = o.ledger;
    if (!ledger) {
      const l = new GrpcClearingLedger(c.LEDGER_GRPC_ADDR, o.mesh);
      scope.defer(() => l.close());
      ledger = l;
    }

    const runs = new RunStore(db, nudge);
    const exceptions = reconciliationExceptions(db);
    const breaks = new BreakStore(db);
    const undoAdjustments = () =>
      reverseAdjustments({ breaks, ledger: ledger!, log }).catch((err: unknown) => {
        log.error({ err }, 'undoing accepted adjustments failed; the sweeper tries again');
      });
    const day = new ReconcileDay({
      afterReconciled: undoAdjustments,
      runs,
      source,
      ours,
      sink: (runId) => new SqlBreakSink(db, runId, nudge),
      sorter: () => new SpillSorter({ dir: c.RECON_WORK_DIR }),
      onFinished: countRun,
      onUnexpectedFailure: (run, err) => log.error({ err, runId: run.id, rail: run.rail, date: run.date }, 'reconciliation run failed'),
      // Several beats within the stale time, whatever it is configured to.
      heartbeatMs: o.heartbeatMs ?? Math.min(15_000, Math.floor(c.RECON_STALE_RUN_MS / 3)),
    });
    const useCases = reconciliationUseCases({
      day,
      runs,
      breaks,
      exceptions,
      ours,
      ledger,
      decodeCursor,
      log,
      ...(o.now ? { now: o.now } : {}),
    });
    scope.defer(() => useCases.stop());
    scope.defer(watchOpenExceptions(() => exceptions.countOpen()));
    initRunSeries(c.RECON_RAILS);

    const implementation = asyncService<reconciliationV1.ReconciliationServiceServer>(reconciliationHandlers(useCases), log, reconciliationAccess, o.mesh);
    const grpc = await startGrpcServer(
      c.RECONCILIATION_GRPC_HOST,
      c.RECONCILIATION_GRPC_PORT,
      [{ definition: reconciliationV1.ReconciliationServiceService, implementation }],
      o.mesh,
    );
    scope.defer(() => grpc.stop(10_000));

    const sweeper = new PeriodicTask(
      'reconciliation stale runs',
      c.RECON_SWEEPER_INTERVAL_MS,
      async () => {
        for (const run of await runs.sweepStale(c.RECON_STALE_RUN_MS)) {
          countRun(run);
          log.warn({ runId: run.id, rail: run.rail, date: run.date }, 'reconciliation run left RUNNING by a stopped process: FAILED (interrupted)');
        }
        await undoAdjustments();
      },
      log,
    );
    sweeper.start();
    scope.defer(() => sweeper.stop());

    // A claim outlives the longest wait between two attempts before another replica may take the day over.
    const claimStaleMs = c.RECON_RETRY_BASE_MS * 2 ** c.RECON_RETRY_ATTEMPTS + 30 * 60_000;
    const scheduler = new Scheduler(
      {
        day,
        claims: new SqlScheduleClaims(db, claimStaleMs),
        triggers: o.triggers ?? cronTriggers,
        log,
        ...(o.now ? { now: o.now } : {}),
        ...(o.sleep ? { sleep: o.sleep } : {}),
      },
      {
        schedules: c.schedules,
        timezone: c.RECON_TIMEZONE,
        retryAttempts: c.RECON_RETRY_ATTEMPTS,
        retryBaseMs: c.RECON_RETRY_BASE_MS,
        holder: `${c.SERVICE_INSTANCE_ID ?? hostname()}:${process.pid}`,
      },
    );
    scheduler.start();
    scope.defer(() => scheduler.stop());

    const { ops, opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort: grpc.port, opsPort, rails: c.RECON_RAILS, schedules: c.schedules, timezone: c.RECON_TIMEZONE }, 'reconciliation started');

    return { db, bus, relay, useCases, scheduler, runs, ops, grpcPort: grpc.port, opsPort, stop: () => scope.stop() };
  } catch (err) {
    await scope.stop();
    throw err;
  }
}
