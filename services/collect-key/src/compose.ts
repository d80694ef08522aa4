import { COLLECT_KEY_RETURNS } from './app/returns.js';
import { InboundSettlements } from './app/settlements.js';
import { SqlInboundSettlementReader } from './persistence/settlement.store.js';
import {
  ServiceScope,
  SqlReturnStore,
  asyncService,
  startGrpcServer,
  type Bus,
  type Database,
  type Logger,
  type OpsServer,
  type OutboxRelay,
  type MeshTls,
} from '@wallet/platform';
import { collectKeyV1 } from '@wallet/proto';
import { HttpBrebDirectory } from './adapters/breb-directory.client.js';
import { GrpcLedger } from './adapters/ledger.client.js';
import { collectKeyDeps, type CollectKeySettings } from './app/deps.js';
import { Sweeper } from './app/sweeper.js';
import { collectKeyUseCases } from './app/use-cases.js';
import type { CollectKeyConfig } from './config.js';
import { collectKeyHandlers, collectKeyAccess } from './grpc/collect-key.handlers.js';
import { SqlCollectKeyStore } from './persistence/collect-key.store.js';
import { collectKeyMigrations } from './persistence/migrations/index.js';

export const COLLECT_KEY_SCHEMA = 'collect_key';

export interface CollectKeyRuntimeOptions {
  /** This process's mesh credentials (mutual TLS for its gRPC server and its clients). */
  mesh: MeshTls;
  config: CollectKeyConfig;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  logger: Logger;
}

export interface CollectKeyRuntime {
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

export function settingsFrom(c: CollectKeyConfig): CollectKeySettings {
  return {
    incomingCallbackUrl: c.BREB_INCOMING_CALLBACK_URL,
    callbackSecret: c.BREB_CALLBACK_SECRET,
    merchantName: c.QR_MERCHANT_NAME,
    merchantCity: c.QR_MERCHANT_CITY,
    sweeperGraceSeconds: c.SWEEPER_GRACE_SECONDS,
  };
}

/**
 * The composition root shared by main.ts and testing.ts: database (migrated when asked) → bus and
 * the COLLECT_KEYS + DEPOSITS streams → outbox relay → ledger client, Bre-B directory → use cases →
 * gRPC server → sweeper → ops endpoints.
 */
export async function composeCollectKey(o: CollectKeyRuntimeOptions): Promise<CollectKeyRuntime> {
  const log = o.logger;
  const c = o.config;
  const scope = new ServiceScope(log);
  try {
    const {
      db,
      bus,
      relay: r,
    } = await scope.infra({
      name: 'collect-key',
      schema: COLLECT_KEY_SCHEMA,
      databaseUrl: c.DATABASE_URL,
      migrations: collectKeyMigrations,
      poolMax: c.COLLECT_KEY_DB_POOL_MAX,
      migrateOnStart: c.COLLECT_KEY_MIGRATE_ON_START,
      production: c.NODE_ENV === 'production',
      natsUrl: c.NATS_URL,
      namespace: c.BUS_NAMESPACE,
      streamReplicas: c.NATS_STREAM_REPLICAS,
      streams: ['COLLECT_KEYS', 'DEPOSITS'],
      relay: { intervalMs: 250, batch: 500, concurrency: 16, nudgeDelayMs: 20 },
    });
    const relay = r!;

    const ledger = new GrpcLedger(c.LEDGER_GRPC_ADDR, o.mesh);
    scope.defer(async () => ledger.close());

    const deps = collectKeyDeps({
      store: new SqlCollectKeyStore(db, () => relay.nudge()),
      returns: new SqlReturnStore(db, COLLECT_KEY_RETURNS, () => relay.nudge()),
      ledger,
      directory: new HttpBrebDirectory(c.BREB_DIRECTORY_URL, c.PROVIDER_HTTP_TIMEOUT_MS, log),
      settings: settingsFrom(c),
      log,
    });
    const uc = collectKeyUseCases(deps);

    const sweeper = new Sweeper(deps, uc.saga, uc.returnSaga, uc.settleRegistration, { intervalMs: c.SWEEPER_INTERVAL_MS, batch: c.SWEEPER_BATCH });
    sweeper.start();
    scope.defer(() => sweeper.stop());

    const implementation = asyncService<collectKeyV1.CollectKeyServiceServer>(
      collectKeyHandlers(uc, new InboundSettlements(new SqlInboundSettlementReader(db))),
      log,
      collectKeyAccess,
      o.mesh,
    );
    const grpc = await startGrpcServer(
      c.COLLECT_KEY_GRPC_HOST,
      c.COLLECT_KEY_GRPC_PORT,
      [{ definition: collectKeyV1.CollectKeyServiceService, implementation }],
      o.mesh,
    );
    scope.defer(() => grpc.stop(10_000));

    const { ops, opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort: grpc.port, opsPort }, 'collect-key started');

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
