import { ServiceScope, asyncService, startGrpcServer, type Bus, type Database, type Logger, type MeshTls } from '@wallet/platform';
import { receiptV1 } from '@wallet/proto';
import { receiptDeps } from './app/deps.js';
import { Projection } from './app/rebuild.js';
import { receiptUseCases, type ReceiptUseCases } from './app/use-cases.js';
import type { ReceiptConfig } from './config.js';
import { receiptHandlers, receiptAccess } from './grpc/receipt.handlers.js';
import { receiptMigrations } from './persistence/migrations/index.js';
import { SqlReadModelStore, sqlReadModelTables } from './persistence/read-model.store.js';

export const RECEIPT_SCHEMA = 'receipt';

export interface ReceiptRuntimeOptions {
  /** This process's mesh credentials (mutual TLS for its gRPC server and its clients). */
  mesh: MeshTls;
  config: ReceiptConfig;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  logger: Logger;
  /** false: no gRPC server (the rebuild CLI). */
  grpc?: boolean;
}

export interface ReceiptRuntime {
  db: Database;
  bus: Bus;
  projection: Projection;
  receipts: ReceiptUseCases;
  grpcPort: number;
  opsPort: number | null;
  stop(): Promise<void>;
}

/** Opens the database (migrated when asked) and the bus in `scope`; shared by the service and the rebuild CLI. */
export async function openStores(c: ReceiptConfig, scope: ServiceScope, name: string): Promise<{ db: Database; bus: Bus }> {
  return scope.infra({
    name,
    schema: RECEIPT_SCHEMA,
    databaseUrl: c.DATABASE_URL,
    migrations: receiptMigrations,
    poolMax: c.RECEIPT_DB_POOL_MAX,
    migrateOnStart: c.RECEIPT_MIGRATE_ON_START,
    production: c.NODE_ENV === 'production',
    natsUrl: c.NATS_URL,
    namespace: c.BUS_NAMESPACE,
    streamReplicas: c.NATS_STREAM_REPLICAS,
    streams: ['TRANSFERS', 'DEPOSITS'],
    relay: false, // a read model: it publishes nothing
  });
}

/**
 * The composition root shared by main.ts and testing.ts: database → bus → the projection (durable
 * consumers on TRANSFERS and DEPOSITS into the read model) → receipts → gRPC server → ops endpoints.
 */
export async function composeReceipt(o: ReceiptRuntimeOptions): Promise<ReceiptRuntime> {
  const log = o.logger;
  const c = o.config;
  const scope = new ServiceScope(log);
  try {
    const { db, bus } = await openStores(c, scope, 'receipt');

    const store = new SqlReadModelStore(db);
    const projection = new Projection(db, bus, { tables: sqlReadModelTables, reset: store }, log.child({ component: 'projection' }));
    await projection.start();
    scope.defer(() => projection.stop());

    const receipts = receiptUseCases(receiptDeps(store, c.RECEIPT_VERIFY_BASE_URL));
    let grpcPort = 0;
    if (o.grpc !== false) {
      const implementation = asyncService<receiptV1.ReceiptServiceServer>(receiptHandlers(receipts), log, receiptAccess, o.mesh);
      const grpc = await startGrpcServer(c.RECEIPT_GRPC_HOST, c.RECEIPT_GRPC_PORT, [{ definition: receiptV1.ReceiptServiceService, implementation }], o.mesh);
      scope.defer(() => grpc.stop(10_000));
      grpcPort = grpc.port;
    }

    const { opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort, opsPort }, 'receipt started');

    return {
      db,
      bus,
      projection,
      receipts,
      grpcPort,
      opsPort,
      stop: () => scope.stop(),
    };
  } catch (err) {
    await scope.stop();
    throw err;
  }
}
