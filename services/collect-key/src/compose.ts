import { Bus, Database, OpsServer, OutboxRelay, asyncService, startGrpcServer, type Logger } from '@wallet/platform';
import { collectKeyV1 } from '@wallet/proto';
import { HttpBrebDirectory } from './adapters/breb-directory.client.js';
import { GrpcLedger } from './adapters/ledger.client.js';
import { collectKeyDeps, type CollectKeySettings } from './app/deps.js';
import { Sweeper } from './app/sweeper.js';
import { collectKeyUseCases } from './app/use-cases.js';
import type { CollectKeyConfig } from './config.js';
import { collectKeyHandlers } from './grpc/collect-key.handlers.js';
import { SqlCollectKeyStore } from './persistence/collect-key.store.js';
import { collectKeyMigrations } from './persistence/migrations/index.js';

export const COLLECT_KEY_SCHEMA = 'collect_key';

export interface CollectKeyRuntimeOptions {
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
  const cleanups: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const fn of cleanups.reverse()) { try { await fn(); } catch (err) { log.warn({ err: (err as Error).message }, 'cleanup failed'); } }
  };
  try {
    const db = await Database.open({ url: c.DATABASE_URL, schema: COLLECT_KEY_SCHEMA, migrations: collectKeyMigrations, logger: log, poolMax: c.COLLECT_KEY_DB_POOL_MAX });
    cleanups.push(() => db.close());
    if (c.COLLECT_KEY_MIGRATE_ON_START) {
      const applied = await db.migrate();
      if (applied.length > 0) log.info({ applied }, 'migrations applied');
    }

    const bus = await Bus.connect({ url: c.NATS_URL, namespace: c.BUS_NAMESPACE, name: 'collect-key', logger: log });
    cleanups.push(() => bus.close());
    await bus.ensureStream('COLLECT_KEYS');
    await bus.ensureStream('DEPOSITS');

    const relay = new OutboxRelay(db, bus, COLLECT_KEY_SCHEMA, log, { intervalMs: 250, batch: 500, concurrency: 16, nudgeDelayMs: 20 });
    relay.start();
    cleanups.push(() => relay.stop());

    const ledger = new GrpcLedger(c.LEDGER_GRPC_ADDR);
    cleanups.push(async () => ledger.close());

    const deps = collectKeyDeps({
      store: new SqlCollectKeyStore(db, () => relay.nudge()),
      ledger,
      directory: new HttpBrebDirectory(c.BREB_DIRECTORY_URL, c.PROVIDER_HTTP_TIMEOUT_MS, log),
      settings: settingsFrom(c),
      log,
    });
    const uc = collectKeyUseCases(deps);

    const sweeper = new Sweeper(deps, uc.steps, { intervalMs: c.SWEEPER_INTERVAL_MS, batch: c.SWEEPER_BATCH });
    sweeper.start();
    cleanups.push(() => sweeper.stop());

    const implementation = asyncService<collectKeyV1.CollectKeyServiceServer>(collectKeyHandlers(uc), log);
    const grpc = await startGrpcServer(c.COLLECT_KEY_GRPC_HOST, c.COLLECT_KEY_GRPC_PORT, [{ definition: collectKeyV1.CollectKeyServiceService, implementation }]);
    cleanups.push(() => grpc.stop(10_000));

    const ops = new OpsServer([
      { name: 'postgres', check: () => db.ping() },
      { name: 'nats', check: () => bus.ping() },
    ], log);
    const opsPort = o.opsPort === null ? null : await ops.listen(o.opsPort, o.opsHost ?? '0.0.0.0');
    cleanups.unshift(() => ops.close()); // last: probes keep answering (not ready) until the end
    log.info({ grpcPort: grpc.port, opsPort }, 'collect-key started');

    let stopped: Promise<void> | undefined;
    return {
      db, bus, relay, sweeper, ops, grpcPort: grpc.port, opsPort,
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
