import { Bus, Database, InboxConsumer, OpsServer, OutboxRelay, asyncService, startGrpcServer, type Logger } from '@wallet/platform';
import { depositV1 } from '@wallet/proto';
import { GrpcLedger } from './adapters/ledger.client.js';
import { SmtpMailer } from './adapters/mailer.js';
import { HttpPseProvider, UnconfiguredPseProvider } from './adapters/pse.client.js';
import { BREB_LISTING_CONSUMER, BREB_LISTING_SUBJECT, brebListingHandler } from './app/breb-listing.js';
import { depositDeps, type DepositSettings } from './app/deps.js';
import { Sweeper } from './app/sweeper.js';
import { depositUseCases } from './app/use-cases.js';
import type { DepositConfig } from './config.js';
import { depositHandlers } from './grpc/deposit.handlers.js';
import { depositMigrations } from './persistence/migrations/index.js';
import { SqlDepositStore } from './persistence/deposit.store.js';

export const DEPOSIT_SCHEMA = 'pse_deposit';

export interface DepositRuntimeOptions {
  config: DepositConfig;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  logger: Logger;
}

export interface DepositRuntime {
  db: Database;
  bus: Bus;
  relay: OutboxRelay;
  /** The Bre-B feed: the collect-key service's `deposit.paid|unassigned` events into the listing. */
  listingConsumer: InboxConsumer;
  sweeper: Sweeper;
  grpcPort: number;
  opsPort: number | null;
  ops: OpsServer;
  /** Stops taking calls, finishes in-flight ones, stops the sweeper, flushes the outbox, closes connections. */
  stop(): Promise<void>;
}

export function settingsFrom(c: DepositConfig): DepositSettings {
  return {
    inflowEnabled: c.PSE_INFLOW_ENABLED as boolean,
    linkTtlSeconds: c.PSE_LINK_TTL_SECONDS,
    paidGraceSeconds: c.PSE_PAID_GRACE_SECONDS,
    callbackUrl: c.PSE_CALLBACK_URL,
    callbackSecret: c.PSE_CALLBACK_SECRET,
    sweeperGraceSeconds: c.SWEEPER_GRACE_SECONDS,
  };
}

/**
 * The composition root shared by main.ts and testing.ts: database (migrated when asked) → bus and
 * DEPOSITS stream → outbox relay → Bre-B listing consumer → ledger client, PSE provider, mailer → use
 * cases → gRPC server → sweeper → ops endpoints.
 */
export async function composeDeposit(o: DepositRuntimeOptions): Promise<DepositRuntime> {
  const log = o.logger;
  const c = o.config;
  const cleanups: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const fn of cleanups.reverse()) { try { await fn(); } catch (err) { log.warn({ err: (err as Error).message }, 'cleanup failed'); } }
  };
  try {
    const db = await Database.open({ url: c.DATABASE_URL, schema: DEPOSIT_SCHEMA, migrations: depositMigrations, logger: log, poolMax: c.DEPOSIT_DB_POOL_MAX });
    cleanups.push(() => db.close());
    if (c.DEPOSIT_MIGRATE_ON_START) {
      const applied = await db.migrate();
      if (applied.length > 0) log.info({ applied }, 'migrations applied');
    }

    const bus = await Bus.connect({ url: c.NATS_URL, namespace: c.BUS_NAMESPACE, name: 'pse-deposit', logger: log });
    cleanups.push(() => bus.close());
    await bus.ensureStream('DEPOSITS');

    const relay = new OutboxRelay(db, bus, DEPOSIT_SCHEMA, log, { intervalMs: 250, batch: 500, concurrency: 16, nudgeDelayMs: 20 });
    relay.start();
    cleanups.push(() => relay.stop());

    const listingConsumer = new InboxConsumer(db, bus, {
      stream: 'DEPOSITS', durable: BREB_LISTING_CONSUMER, subject: BREB_LISTING_SUBJECT,
      handler: brebListingHandler(log.child({ component: 'breb-listing' })), log,
    });
    await listingConsumer.start();
    cleanups.push(() => listingConsumer.stop());

    const ledger = new GrpcLedger(c.LEDGER_GRPC_ADDR);
    cleanups.push(async () => ledger.close());
    const mailer = new SmtpMailer(c.SMTP_URL, c.MAIL_FROM, c.SMTP_TIMEOUT_MS, log);
    cleanups.push(async () => mailer.close());

    const deps = depositDeps({
      store: new SqlDepositStore(db, () => relay.nudge()),
      ledger,
      pse: c.PSE_PROVIDER_URL ? new HttpPseProvider(c.PSE_PROVIDER_URL, c.PROVIDER_HTTP_TIMEOUT_MS, log) : new UnconfiguredPseProvider(),
      mailer,
      settings: settingsFrom(c),
      log,
    });
    const uc = depositUseCases(deps);

    const sweeper = new Sweeper(deps, uc.steps, { intervalMs: c.SWEEPER_INTERVAL_MS, batch: c.SWEEPER_BATCH });
    sweeper.start();
    cleanups.push(() => sweeper.stop());

    const implementation = asyncService<depositV1.DepositServiceServer>(depositHandlers(uc), log);
    const grpc = await startGrpcServer(c.DEPOSIT_GRPC_HOST, c.DEPOSIT_GRPC_PORT, [{ definition: depositV1.DepositServiceService, implementation }]);
    cleanups.push(() => grpc.stop(10_000));

    const ops = new OpsServer([
      { name: 'postgres', check: () => db.ping() },
      { name: 'nats', check: () => bus.ping() },
    ], log);
    const opsPort = o.opsPort === null ? null : await ops.listen(o.opsPort, o.opsHost ?? '0.0.0.0');
    cleanups.unshift(() => ops.close()); // last: probes keep answering (not ready) until the end
    log.info({ grpcPort: grpc.port, opsPort }, 'pse-deposit started');

    let stopped: Promise<void> | undefined;
    return {
      db, bus, relay, listingConsumer, sweeper, ops, grpcPort: grpc.port, opsPort,
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
