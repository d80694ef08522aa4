import { Bus, Database, OpsServer, asyncService, startGrpcServer, type Logger } from '@wallet/platform';
import { receiptV1 } from '@wallet/proto';
import { Receipts } from './app/receipts.js';
import { Projection } from './app/rebuild.js';
import type { ReceiptConfig } from './config.js';
import { receiptHandlers } from './grpc/receipt.handlers.js';
import { receiptMigrations } from './persistence/migrations/index.js';
import { ReadModelStore } from './persistence/read-model.store.js';

export const RECEIPT_SCHEMA = 'receipt';

export interface ReceiptRuntimeOptions {
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
  receipts: Receipts;
  grpcPort: number;
  opsPort: number | null;
  stop(): Promise<void>;
}

/** Opens the database (migrated when asked) and the bus; shared by the service and the rebuild CLI. */
export async function openStores(c: ReceiptConfig, log: Logger, name: string): Promise<{ db: Database; bus: Bus; close(): Promise<void> }> {
  const db = await Database.open({ url: c.DATABASE_URL, schema: RECEIPT_SCHEMA, migrations: receiptMigrations, logger: log, poolMax: c.RECEIPT_DB_POOL_MAX });
  try {
    if (c.RECEIPT_MIGRATE_ON_START) {
      const applied = await db.migrate();
      if (applied.length > 0) log.info({ applied }, 'migrations applied');
    }
    const bus = await Bus.connect({ url: c.NATS_URL, namespace: c.BUS_NAMESPACE, name, logger: log });
    return { db, bus, close: async () => { await bus.close(); await db.close(); } };
  } catch (err) {
    await db.close();
    throw err;
  }
}

/**
 * The composition root shared by main.ts and testing.ts: database → bus → the projection (durable
 * consumers on TRANSFERS and DEPOSITS into the read model) → receipts → gRPC server → ops endpoints.
 */
export async function composeReceipt(o: ReceiptRuntimeOptions): Promise<ReceiptRuntime> {
  const log = o.logger;
  const c = o.config;
  const cleanups: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const fn of cleanups.reverse()) { try { await fn(); } catch (err) { log.warn({ err: (err as Error).message }, 'cleanup failed'); } }
  };
  try {
    const { db, bus, close } = await openStores(c, log, 'receipt');
    cleanups.push(close);

    const store = new ReadModelStore(db);
    const projection = new Projection(db, bus, store, log.child({ component: 'projection' }));
    await projection.start();
    cleanups.push(() => projection.stop());

    const receipts = new Receipts(store, c.RECEIPT_VERIFY_BASE_URL);
    let grpcPort = 0;
    if (o.grpc !== false) {
      const implementation = asyncService<receiptV1.ReceiptServiceServer>(receiptHandlers(receipts), log);
      const grpc = await startGrpcServer(c.RECEIPT_GRPC_HOST, c.RECEIPT_GRPC_PORT, [{ definition: receiptV1.ReceiptServiceService, implementation }]);
      cleanups.push(() => grpc.stop(10_000));
      grpcPort = grpc.port;
    }

    const ops = new OpsServer([
      { name: 'postgres', check: () => db.ping() },
      { name: 'nats', check: () => bus.ping() },
    ], log);
    const opsPort = o.opsPort === null ? null : await ops.listen(o.opsPort, o.opsHost ?? '0.0.0.0');
    cleanups.unshift(() => ops.close());
    log.info({ grpcPort, opsPort }, 'receipt started');

    let stopped: Promise<void> | undefined;
    return {
      db, bus, projection, receipts, grpcPort, opsPort,
      stop: () => {
        stopped ??= (async () => { ops.drain(); await unwind(); })();
        return stopped;
      },
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}
