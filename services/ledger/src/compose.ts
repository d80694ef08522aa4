import { Bus, Database, OpsServer, OutboxRelay, asyncService, startGrpcServer, type Logger } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import { ledgerDeps } from './app/deps.js';
import { ledgerUseCases } from './app/use-cases.js';
import { ledgerHandlers } from './grpc/ledger.handlers.js';
import { SqlLedgerStore } from './persistence/ledger.store.js';
import { ledgerMigrations } from './persistence/migrations/index.js';

export const LEDGER_SCHEMA = 'ledger';

export interface LedgerRuntimeOptions {
  databaseUrl: string;
  natsUrl: string;
  namespace: string;
  grpcHost: string;
  grpcPort: number;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  migrateOnStart: boolean;
  poolMax: number;
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
  const cleanups: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const c of cleanups.reverse()) { try { await c(); } catch (err) { log.warn({ err: (err as Error).message }, 'cleanup failed'); } }
  };
  try {
    const db = await Database.open({ url: o.databaseUrl, schema: LEDGER_SCHEMA, migrations: ledgerMigrations, logger: log, poolMax: o.poolMax });
    cleanups.push(() => db.close());
    if (o.migrateOnStart) {
      const applied = await db.migrate();
      if (applied.length > 0) log.info({ applied }, 'migrations applied');
    }

    const bus = await Bus.connect({ url: o.natsUrl, namespace: o.namespace, name: 'ledger', logger: log });
    cleanups.push(() => bus.close());
    await bus.ensureStream('LEDGER');

    // Pipelined publishing (in order, on one connection) costs about a third of the CPU per event of
    // one-at-a-time publishing; every posting writes one event, so this is on the hot path.
    const relay = new OutboxRelay(db, bus, 'ledger', log, { intervalMs: 250, batch: 500, concurrency: 64, nudgeDelayMs: 20 });
    relay.start();
    cleanups.push(() => relay.stop());

    const uc = ledgerUseCases(ledgerDeps(new SqlLedgerStore(db), relay));
    const implementation = asyncService<ledgerV1.LedgerServiceServer>(ledgerHandlers(uc), log);
    const grpc = await startGrpcServer(o.grpcHost, o.grpcPort, [{ definition: ledgerV1.LedgerServiceService, implementation }]);
    cleanups.push(() => grpc.stop(5_000));

    const ops = new OpsServer([
      { name: 'postgres', check: () => db.ping() },
      { name: 'nats', check: () => bus.ping() },
    ], log);
    const opsPort = o.opsPort === null ? null : await ops.listen(o.opsPort, o.opsHost ?? '0.0.0.0');
    cleanups.unshift(() => ops.close()); // last: probes keep answering (not ready) until the end
    log.info({ grpcPort: grpc.port, opsPort }, 'ledger started');

    let stopped: Promise<void> | undefined;
    return {
      db, bus, relay, ops, grpcPort: grpc.port, opsPort,
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
