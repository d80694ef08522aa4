import { createLogger, Database, devMeshTls, runtimeRole, type Logger } from '@wallet/platform';
import { GATEWAY_APPEND_ONLY_TABLES, gatewayMigrations } from './persistence/migrations/index.js';
import { LOCAL_MAIL_FROM, LOCAL_SMTP_SINK_URL, loadConfig } from './config.js';
import { startGatewayServer } from './server.js';

export interface StartGatewayOptions {
  databaseUrl: string;
  redisUrl?: string;
  ledgerAddress: string;
  /** The transfer service; without one, transfer routes answer 503 and /readyz reports it. */
  transferAddress?: string;
  /** The pse-deposit service; without one, deposit routes answer 503 and /readyz reports it. */
  depositAddress?: string;
  /** The collect-key service; without one, collect-key routes answer 503 and /readyz reports it. */
  collectKeyAddress?: string;
  /** The receipt service; without one, receipt routes answer 503 and /readyz reports it. */
  receiptAddress?: string;
  /** The webhook service; without one, /webhooks/endpoints and /webhooks/deliveries answer 503 and /readyz reports it. */
  webhookAddress?: string;
  /** The reconciliation service; without one, /admin/reconciliations answers 503 and /readyz reports it. */
  reconciliationAddress?: string;
  /** Unique per test file: isolates rate-limit counters in the shared Redis (and, unless `busNamespace` is given, the NATS streams). */
  namespace: string;
  /** NATS of the run (default NATS_URL or nats://127.0.0.1:4222): the gateway relays its outbox there. */
  natsUrl?: string;
  /** BUS_NAMESPACE: the services of the same stack share it (default: `namespace`, lower-cased, other characters as `_`). */
  busNamespace?: string;
  /** Where the gateway's mails go (e.g. the sandbox's SMTP sink); default SMTP_URL of `env`, else smtp://127.0.0.1:2525. */
  smtpUrl?: string;
  port?: number;
  /** Production only: run as `databaseUrl`'s own role instead of the gateway's runtime role (to see a superuser refused). */
  keepDatabaseRole?: boolean;
  /**
   * Any other gateway variable (e.g. RATE_LIMIT_READS, TRUSTED_PROXIES, ADMIN_TOKEN, LOG_LEVEL,
   * NODE_ENV=production, GATEWAY_ADMIN_PORT='0' for an admin listener on a free port).
   */
  env?: Record<string, string>;
}

export interface StartedGateway {
  url: string;
  port: number;
  /** The admin listener (/admin/* only), when GATEWAY_ADMIN_PORT is set or NODE_ENV is production. */
  adminUrl: string | undefined;
  adminToken: string;
  /** The ops server (/healthz, /readyz, /metrics). */
  opsUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts a real gateway in this process on loopback (migrations applied, ops server on a free
 * port) for integration, end-to-end tests and the benchmark.
 */
export async function startGateway(opts: StartGatewayOptions): Promise<StartedGateway> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(opts.port ?? 0),
    GATEWAY_OPS_PORT: '0',
    GATEWAY_MIGRATE_ON_START: 'true',
    RATE_LIMIT_PREFIX: `rl:${opts.namespace}`,
    // Production opens the admin listener (default 8081): on a free port here.
    ...(opts.env?.NODE_ENV === 'production' ? { GATEWAY_ADMIN_PORT: '0' } : {}),
    // Mails are retried soon in tests (a test SMTP server that refused one takes it a moment later).
    MAIL_SENDER_INTERVAL_MS: '100',
    MAIL_RETRY_BASE_MS: '200',
    // Production requires both (a test with NODE_ENV=production gets the development ones).
    SMTP_URL: LOCAL_SMTP_SINK_URL,
    MAIL_FROM: LOCAL_MAIL_FROM,
    ...opts.env,
    NATS_URL: opts.natsUrl ?? opts.env?.NATS_URL ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: opts.busNamespace ?? opts.env?.BUS_NAMESPACE ?? opts.namespace.toLowerCase().replace(/[^a-z0-9_]/g, '_'),
    ...(opts.smtpUrl ? { SMTP_URL: opts.smtpUrl } : {}),
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: opts.redisUrl ?? opts.env?.REDIS_URL ?? 'redis://127.0.0.1:6379',
    LEDGER_GRPC_ADDR: opts.ledgerAddress,
    TRANSFER_GRPC_ADDR: opts.transferAddress ?? opts.env?.TRANSFER_GRPC_ADDR ?? '127.0.0.1:1',
    DEPOSIT_GRPC_ADDR: opts.depositAddress ?? opts.env?.DEPOSIT_GRPC_ADDR ?? '127.0.0.1:1',
    COLLECT_KEY_GRPC_ADDR: opts.collectKeyAddress ?? opts.env?.COLLECT_KEY_GRPC_ADDR ?? '127.0.0.1:1',
    RECEIPT_GRPC_ADDR: opts.receiptAddress ?? opts.env?.RECEIPT_GRPC_ADDR ?? '127.0.0.1:1',
    WEBHOOK_GRPC_ADDR: opts.webhookAddress ?? opts.env?.WEBHOOK_GRPC_ADDR ?? '127.0.0.1:1',
    RECONCILIATION_GRPC_ADDR: opts.reconciliationAddress ?? opts.env?.RECONCILIATION_GRPC_ADDR ?? '127.0.0.1:1',
  });
  const log = createLogger('gateway', config.logLevel);
  // Production refuses a database role that owns its schema or is a superuser (docs/security.md "Database roles"): like the
  // chart, migrate as the (test) superuser first, then run as a login role of `wallet_gateway_app`.
  const production = config.nodeEnv === 'production';
  const runConfig =
    production && !opts.keepDatabaseRole
      ? { ...config, databaseUrl: await asRuntimeRole(config.databaseUrl, config.migrateOnStart, log), migrateOnStart: false }
      : config;
  const running = await startGatewayServer(runConfig, log, devMeshTls('gateway'));
  return {
    url: `http://127.0.0.1:${running.port}`,
    port: running.port,
    adminUrl: running.adminPort === undefined ? undefined : `http://127.0.0.1:${running.adminPort}`,
    opsUrl: `http://127.0.0.1:${running.opsPort}`,
    adminToken: config.adminToken ?? '',
    stop: () => running.stop(),
  };
}

/**
 * The URL of the gateway's test login role (`wallet_gateway_test_login`, a member of the gateway's
 * runtime role only), after applying the migrations as the URL's own (super)user when asked: what an
 * SRE sets up per service (docs/security.md, "Database roles").
 */
async function asRuntimeRole(superUrl: string, migrate: boolean, log: Logger): Promise<string> {
  const db = await Database.open({
    url: superUrl,
    schema: 'gateway',
    migrations: gatewayMigrations,
    logger: log,
    poolMax: 1,
    appendOnlyTables: GATEWAY_APPEND_ONLY_TABLES,
  });
  const login = 'wallet_gateway_test_login';
  try {
    if (migrate) await db.migrate();
    // Roles are cluster-wide and test files run in parallel: one at a time (concurrent GRANTs on one role fail).
    await db.query(`do $$ begin
        perform pg_advisory_xact_lock(hashtext('wallet reader roles'));
        if not exists (select 1 from pg_roles where rolname = '${login}') then create role ${login} login; end if;
        grant ${runtimeRole('gateway')} to ${login};
      end $$`);
  } finally {
    await db.close();
  }
  const url = new URL(superUrl);
  url.username = login;
  url.password = '';
  return url.toString();
}

/**
 * The statement's bank formats as pure functions of a JSON statement, for tests that check every
 * entry the JSON can hold with independent tools (including entries no flow of the product makes yet).
 */
export { statementCamt053 } from './api/wallets/statement-camt053.js';
export { statementMt940 } from './api/wallets/statement-mt940.js';
export { STATEMENT_ENTRIES } from './api/wallets/schemas.js';
export type { StatementDocument } from './api/wallets/statement.js';
