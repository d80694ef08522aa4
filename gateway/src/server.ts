import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Bus, Database, ERRORS, OpsServer, OutboxRelay, PeriodicTask, type ErrorCode, type Logger, type MeshTls } from '@wallet/platform';
import { createApp, type GatewayApp } from './compose.js';
import type { GatewayConfig } from './config.js';
import { connectLedger } from './clients/ledger-client.js';
import { connectTransfer } from './clients/transfer-client.js';
import { connectDeposit } from './clients/deposit-client.js';
import { connectCollectKey } from './clients/collect-key-client.js';
import { connectWebhook } from './clients/webhook-client.js';
import { connectReceipt } from './clients/receipt-client.js';
import { connectReconciliation } from './clients/reconciliation-client.js';
import { GATEWAY_APPEND_ONLY_TABLES, gatewayMigrations } from './persistence/migrations/index.js';
import { MailOutbox, MailSender } from './app/mail-outbox.js';
import { fileClock, systemClock } from './app/schedules/clock.js';
import { RunExecutor } from './app/schedules/run-executor.js';
import { Scheduler } from './app/schedules/scheduler.js';
import { BalanceAlertMails } from './app/balance-alert-mails.js';
import { SecurityNotices } from './app/security-notices.js';
import { SmtpMailTransport } from './mail/smtp-transport.js';
import { OperatorStore } from './persistence/operator.store.js';

export interface RunningGateway {
  gateway: GatewayApp;
  server: Server;
  port: number;
  /** The admin listener (/admin/* only), when one is configured (always in production). */
  adminPort: number | undefined;
  opsPort: number;
  /** Graceful: readiness fails, stop accepting, finish in-flight requests, close clients. */
  stop(): Promise<void>;
}

/**
 * Wires the process: Postgres (schema `gateway`), Redis for rate limits, the ledger gRPC client,
 * the Koa app on the public port, /admin on the admin port (production: only there) and the ops
 * server (/healthz, /readyz, /metrics) on its own port.
 */
/** `mesh`: the gateway's mesh credentials (its client certificate towards every service). */
export async function startGatewayServer(config: GatewayConfig, log: Logger, mesh: MeshTls): Promise<RunningGateway> {
  const db = await Database.open({
    url: config.databaseUrl,
    schema: 'gateway',
    migrations: gatewayMigrations,
    logger: log,
    poolMax: config.dbPoolMax,
    appendOnlyTables: GATEWAY_APPEND_ONLY_TABLES,
  });
  try {
    if (config.nodeEnv === 'production') await db.assertLeastPrivilege('runtime');
    if (config.migrateOnStart) {
      const applied = await db.migrate();
      if (applied.length) log.info({ applied }, 'migrations applied');
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  if (config.publicUrl === undefined && config.nodeEnv === 'production') {
    log.warn('GATEWAY_PUBLIC_URL is not set: the OpenAPI document names no base URL, and generated clients need one set by hand');
  }
  if (config.nodeEnv === 'production' && config.adminToken !== undefined) {
    // Bootstrap once: once the first operators enrolled the token is inert for ever; keeping it only keeps a secret to leak.
    const spent = await new OperatorStore().bootstrapped(db).catch(() => false);
    if (spent) log.warn('ADMIN_TOKEN is set but the bootstrap is done: it is refused everywhere; remove it from the deployment');
  }

  // No offline queue: while Redis is down a command fails at once and the limiter falls back to
  // its in-memory insurance instead of queueing requests behind a dead connection.
  const redis = new Redis(config.redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    disconnectTimeout: 500,
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  let lastRedisError = 0;
  redis.on('error', (err: Error) => {
    const now = Date.now();
    if (now - lastRedisError > 10_000) log.warn({ err: err.message }, 'redis unavailable; rate limits fall back to memory');
    lastRedisError = now;
  });

  // The company is told: the gateway publishes its own events (company.security_changed) through its outbox,
  // and sends the mails its use cases write (MailOutbox) after commit.
  let bus: Bus;
  try {
    bus = await Bus.connect({ url: config.nats.url, namespace: config.nats.namespace, name: 'gateway', logger: log, replicas: config.nats.streamReplicas });
    await bus.ensureStream('COMPANIES');
    await bus.ensureStream('SCHEDULES');
    await bus.ensureStream('WALLETS');
  } catch (err) {
    await redis.quit().catch(() => redis.disconnect());
    await db.close();
    throw err;
  }
  const relay = new OutboxRelay(db, bus, 'gateway', log, { intervalMs: 250, batch: 100 });
  relay.start();
  const mailTransport = new SmtpMailTransport(config.mail.smtpUrl, config.mail.from, config.mail.timeoutMs);
  const mailSender = new MailSender(
    db,
    mailTransport,
    {
      secretKey: config.encryptionKey,
      intervalMs: config.mail.intervalMs,
      retryBaseMs: config.mail.retryBaseMs,
      retryMaxDelayMs: config.mail.retryMaxDelayMs,
      maxAttempts: config.mail.maxAttempts,
    },
    log.child({ component: 'mail-sender' }),
  );
  mailSender.start();
  const mailOutbox = new MailOutbox({ secretKey: config.encryptionKey }, () => mailSender.nudge());
  const securityNotices = new SecurityNotices(mailOutbox, () => relay.nudge());
  // Balance alerts (docs/balance-alerts.md): the ledger's wallet.balance_* become e-mails to the company's ADMINs.
  const balanceAlertMails = new BalanceAlertMails(db, bus, mailOutbox, log.child({ component: 'balance-alert-mails' }));
  await balanceAlertMails.start();

  const ledgerClient = connectLedger(config.ledgerAddress, config.grpcDeadlineMs, mesh);
  const transferClient = connectTransfer(config.transferAddress, config.grpcDeadlineMs, mesh);
  const depositClient = connectDeposit(config.depositAddress, config.grpcDeadlineMs, mesh);
  const collectKeyClient = connectCollectKey(config.collectKeyAddress, config.grpcDeadlineMs, mesh);
  const receiptClient = connectReceipt(config.receiptAddress, config.grpcDeadlineMs, mesh);
  const webhookClient = connectWebhook(config.webhookAddress, config.grpcDeadlineMs, mesh);
  const reconciliationClient = connectReconciliation(config.reconciliationAddress, config.grpcDeadlineMs, mesh);
  const schedulerClock = config.scheduler.testClockFile ? fileClock(config.scheduler.testClockFile) : systemClock;
  if (config.scheduler.testClockFile) log.warn({ file: config.scheduler.testClockFile }, 'the scheduler reads its time from a test clock (development only)');
  const gateway = createApp({
    schedulerClock,
    config,
    log,
    db,
    ledger: ledgerClient,
    transfer: transferClient,
    deposit: depositClient,
    collectKey: collectKeyClient,
    receipt: receiptClient,
    webhook: webhookClient,
    reconciliation: reconciliationClient,
    redis,
    mailOutbox,
    securityNotices,
  });

  // Responses in progress, so a shutdown can tell their keep-alive connections to close.
  const active = new Set<ServerResponse>();
  let draining = false;
  const httpServer = (handle: ReturnType<typeof gateway.app.callback>): Server => {
    const srv = createServer({ requestTimeout: 30_000, headersTimeout: 20_000, keepAliveTimeout: 65_000 }, (req, res) => {
      if (draining) res.shouldKeepAlive = false;
      active.add(res);
      res.once('close', () => active.delete(res));
      void handle(req, res);
    });
    // Requests Node's HTTP parser refuses before the app sees them (bad header bytes, a header block
    // over 16 KiB, a request that did not arrive within requestTimeout) still get the API's error
    // shape and a request id, then the connection is closed.
    srv.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (!socket.writable || err.code === 'ECONNRESET') {
        socket.destroy();
        return;
      }
      const code: ErrorCode =
        err.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'INVALID_REQUEST';
      const status = ERRORS[code].http;
      const body = JSON.stringify({ error: code, message: ERRORS[code].message });
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    return srv;
  };
  const listen = (srv: Server, p: number, host: string) =>
    new Promise<number>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(p, host, () => {
        srv.off('error', reject);
        resolve((srv.address() as AddressInfo).port);
      });
    });
  const server = httpServer(gateway.app.callback());
  const adminServer = config.admin.port !== undefined ? httpServer(gateway.adminApp.callback()) : undefined;
  const port = await listen(server, config.port, config.host);
  const adminPort = adminServer ? await listen(adminServer, config.admin.port!, config.admin.host) : undefined;

  // Not the reconciliation service: it serves operators only (/admin/reconciliations and its money
  // exceptions), so while it is down those answer 503 and the payments API stays ready.
  const ops = new OpsServer(
    [
      { name: 'postgres', check: () => db.ping() },
      {
        name: 'redis',
        check: async () => {
          if (redis.status !== 'ready') throw new Error(`redis ${redis.status}`);
          await redis.ping();
        },
      },
      ...(
        [
          ['ledger', ledgerClient],
          ['transfer', transferClient],
          ['deposit', depositClient],
          ['collectKey', collectKeyClient],
          ['receipt', receiptClient],
          ['webhook', webhookClient],
        ] as const
      ).map(([name, client]) => ({
        name,
        check: () =>
          new Promise<void>((resolve, reject) => {
            client.raw.waitForReady(Date.now() + 1500, (err?: Error) => (err ? reject(new Error(`${name} unreachable`)) : resolve()));
          }),
      })),
    ],
    log,
  );
  const scheduler = new Scheduler(
    db,
    new RunExecutor({
      db,
      ledger: ledgerClient,
      transfer: transferClient,
      clock: schedulerClock,
      log: log.child({ component: 'scheduler' }),
      sendDeadlineMs: config.transferSendDeadlineMs,
      batchExecuteDeadlineMs: config.batchExecuteDeadlineMs,
      runGiveUpSeconds: config.scheduler.runGiveUpSeconds,
      onEvent: () => relay.nudge(),
    }),
    schedulerClock,
    { batch: config.scheduler.batch, concurrency: config.scheduler.concurrency, runLeaseSeconds: config.scheduler.runLeaseSeconds },
    log.child({ component: 'scheduler' }),
  );
  const schedulerTask: PeriodicTask = new PeriodicTask(
    'scheduler',
    config.scheduler.intervalMs,
    (): Promise<unknown> => scheduler.tick(() => schedulerTask.stopping),
    log,
  );
  if (config.scheduler.enabled) schedulerTask.start();
  const opsPort = await ops.listen(config.opsPort, config.host);
  log.info(
    { port, adminPort, adminOnPublicPort: config.admin.alsoOnPublicPort, opsPort, ledger: config.ledgerAddress, transfer: config.transferAddress },
    'gateway listening',
  );

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      ops.drain();
      draining = true;
      // Stop accepting; requests in flight finish, and their connections close after the answer.
      for (const res of active) if (!res.headersSent) res.shouldKeepAlive = false;
      const servers = adminServer ? [server, adminServer] : [server];
      const closed = Promise.all(servers.map((srv) => new Promise<void>((resolve) => srv.close(() => resolve()))));
      const idle = setInterval(() => {
        for (const srv of servers) srv.closeIdleConnections();
      }, 100);
      const force = setTimeout(
        () => {
          for (const srv of servers) srv.closeAllConnections();
        },
        Math.max(config.shutdownGraceMs - 2000, 1000),
      );
      force.unref();
      await closed;
      clearInterval(idle);
      clearTimeout(force);
      await schedulerTask.stop();
      await gateway.close();
      await balanceAlertMails.stop();
      await mailSender.stop();
      mailTransport.close();
      await relay.stop();
      await bus.close();
      ledgerClient.close();
      transferClient.close();
      depositClient.close();
      collectKeyClient.close();
      receiptClient.close();
      webhookClient.close();
      reconciliationClient.close();
      await redis.quit().catch(() => redis.disconnect());
      await db.close();
      await ops.close();
    })());

  return { gateway, server, port, adminPort, opsPort, stop };
}
