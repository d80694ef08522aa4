import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Database, type Logger } from '@wallet/platform';
import { ValidateAchAccount } from './app/ach-accounts.js';
import { AchPrenotes } from './app/ach-prenotes.js';
import { BrebCollect } from './app/breb-collect.js';
import { LookupKey } from './app/directory.js';
import { PseLinks } from './app/pse-links.js';
import { RailTransfers } from './app/rail-transfers.js';
import { SettlementReports } from './app/settlement-reports.js';
import type { SandboxConfig } from './config.js';
import { CallbackDispatcher } from './delivery/callback-dispatcher.js';
import { startSmtpSink, type SmtpSink } from './delivery/smtp-sink.js';
import { createHttpApp } from './http/app.js';
import { sandboxMigrations } from './persistence/migrations/index.js';
import { EmailStore } from './persistence/email.store.js';
import { PrenoteStore } from './persistence/prenote.store.js';
import { PseStore } from './persistence/pse.store.js';
import { RegistrationStore } from './persistence/registration.store.js';
import { ReportStore } from './persistence/report.store.js';
import { SandboxStore } from './persistence/sandbox.store.js';

export const SANDBOX_SCHEMA = 'sandbox';

export interface SandboxRuntime {
  port: number;
  /** The SMTP sink's port. */
  smtpPort: number;
  /** Base of the PSE pay links (SANDBOX_PUBLIC_URL, else this server's own URL). */
  publicUrl: string;
  db: Database;
  /** Not ready → stop the scheduler (finishing deliveries in flight), the HTTP server and the SMTP sink → close the pool. */
  stop(): Promise<void>;
}

/** The composition root shared by main.ts and testing.ts: database → use cases → scheduler → HTTP and SMTP. */
export async function composeSandbox(config: SandboxConfig, log: Logger): Promise<SandboxRuntime> {
  const db = await Database.open({
    url: config.DATABASE_URL,
    schema: SANDBOX_SCHEMA,
    migrations: sandboxMigrations,
    logger: log,
    poolMax: config.SANDBOX_DB_POOL_MAX,
  });
  let server: Server | undefined;
  let dispatcher: CallbackDispatcher | undefined;
  let smtp: SmtpSink | undefined;
  let faults: SandboxStore | undefined;
  let watched: RegistrationStore | undefined;
  try {
    if (config.SANDBOX_MIGRATE_ON_START) {
      const applied = await db.migrate();
      if (applied.length > 0) log.info({ applied }, 'migrations applied');
    }
    const store = new SandboxStore(db);
    faults = store;
    await store.watchFaults(log);
    const registrations = new RegistrationStore(db);
    // Participants' key registrations from memory, kept current by their change feed (a directory lookup reads no table).
    watched = registrations;
    await registrations.watch(log);
    let wake = () => {};
    const rails = new RailTransfers(
      db,
      store,
      {
        brebConfirmMs: config.SANDBOX_BREB_CONFIRM_MS,
        achConfirmMs: config.SANDBOX_ACH_CONFIRM_MS,
      },
      () => wake(),
      log,
      registrations,
    );
    const prenotes = new AchPrenotes(db, store, new PrenoteStore(db), { prenoteMs: config.SANDBOX_ACH_PRENOTE_MS }, () => wake(), log);
    const d = new CallbackDispatcher(
      store,
      [rails, prenotes],
      {
        secret: config.SANDBOX_CALLBACK_SECRET,
        pollMs: config.SANDBOX_POLL_MS,
        retry: { baseMs: config.SANDBOX_CALLBACK_RETRY_BASE_MS, maxMs: config.SANDBOX_CALLBACK_RETRY_MAX_MS },
        timeoutMs: config.SANDBOX_CALLBACK_TIMEOUT_MS,
        bulkOutcomes: config.SANDBOX_BULK_CALLBACKS,
      },
      log,
    );
    dispatcher = d;
    wake = () => d.wake();
    const emails = new EmailStore(db);
    // The public URL needs the port, known only once listening.
    let publicUrl = config.SANDBOX_PUBLIC_URL ?? '';
    const pse = new PseLinks(
      db,
      store,
      new PseStore(db),
      () => publicUrl,
      () => wake(),
      log,
    );
    const collect = new BrebCollect(db, store, registrations, () => wake(), log);

    let ready = true;
    const app = createHttpApp({
      lookupKey: new LookupKey(store, registrations),
      collect,
      validateAchAccount: new ValidateAchAccount(store),
      rails,
      prenotes,
      pse,
      emails,
      dispatcher: d,
      store,
      log,
      reports: new SettlementReports(new ReportStore(db)),
      isReady: () => ready,
    });
    const handle = app.callback();
    const active = new Set<ServerResponse>();
    let draining = false;
    const srv = createServer({ requestTimeout: 30_000, headersTimeout: 20_000, keepAliveTimeout: 5_000 }, (req, res) => {
      if (draining) res.shouldKeepAlive = false;
      active.add(res);
      res.once('close', () => active.delete(res));
      void handle(req, res);
    });
    server = srv;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(config.SANDBOX_PORT, config.SANDBOX_HOST, () => {
        srv.off('error', reject);
        resolve();
      });
    });
    const port = (srv.address() as AddressInfo).port;
    if (!config.SANDBOX_PUBLIC_URL) {
      const host = config.SANDBOX_HOST === '0.0.0.0' || config.SANDBOX_HOST === '::' ? '127.0.0.1' : config.SANDBOX_HOST;
      publicUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    }
    const sink = await startSmtpSink({ host: config.SANDBOX_SMTP_HOST, port: config.SANDBOX_SMTP_PORT, store: emails, log });
    smtp = sink;
    d.start();
    log.info(
      {
        port,
        smtpPort: sink.port,
        publicUrl,
        brebConfirmMs: config.SANDBOX_BREB_CONFIRM_MS,
        achConfirmMs: config.SANDBOX_ACH_CONFIRM_MS,
        achPrenoteMs: config.SANDBOX_ACH_PRENOTE_MS,
        bulkCallbacks: config.SANDBOX_BULK_CALLBACKS,
      },
      'sandbox listening',
    );

    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        ready = false;
        draining = true;
        for (const res of active) if (!res.headersSent) res.shouldKeepAlive = false;
        const closed = new Promise<void>((resolve) => srv.close(() => resolve()));
        const idle = setInterval(() => srv.closeIdleConnections(), 50);
        const force = setTimeout(() => srv.closeAllConnections(), 10_000);
        force.unref();
        // The scheduler finishes the deliveries it has started; the HTTP server its requests.
        await Promise.all([d.stop(), closed, sink.close()]);
        store.stopWatchingFaults();
        registrations.stopWatching();
        clearInterval(idle);
        clearTimeout(force);
        await db.close();
        log.info('sandbox stopped');
      })());
    return { port, smtpPort: sink.port, publicUrl, db, stop };
  } catch (err) {
    await dispatcher?.stop().catch(() => undefined);
    await smtp?.close().catch(() => undefined);
    faults?.stopWatchingFaults();
    watched?.stopWatching();
    if (server?.listening) await new Promise<void>((resolve) => server!.close(() => resolve()));
    await db.close().catch(() => undefined);
    throw err;
  }
}
