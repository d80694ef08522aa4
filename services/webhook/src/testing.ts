import { createLogger, type Database, devMeshTls, type MeshTls } from '@wallet/platform';
import type { Dispatcher } from './app/dispatcher.js';
import type { DeliveryWorker } from './app/worker.js';
import { composeWebhook } from './compose.js';
import { loadConfig } from './config.js';
import type { Resolver } from './adapters/target.js';

/** Who may call each RPC (the tests' clients call as those identities). */
export { webhookAccess } from './grpc/webhook.handlers.js';

export { signatureHeader, HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP } from './domain/signature.js';
export type { Resolver } from './adapters/target.js';

export interface StartedWebhook {
  /** host:port for createAsyncClient. */
  address: string;
  port: number;
  db: Database;
  dispatcher: Dispatcher;
  worker: DeliveryWorker;
  stop(): Promise<void>;
}

/**
 * The whole webhook service in this process, for integration and end-to-end tests: migrates the
 * database, connects the bus (namespaced streams), consumes TRANSFERS, DEPOSITS and COLLECT_KEYS,
 * delivers to the endpoints' URLs (loopback http allowed outside production rules), and serves gRPC
 * on 127.0.0.1 (port 0 = ephemeral). Short retry delays and poll interval by default so tests run
 * fast; `env` overrides any of them. The same composition as main.ts, without the ops HTTP port.
 */
export async function startWebhook(opts: {
  /** Mesh credentials (default: this service's certificate of the development PKI). */
  mesh?: MeshTls;
  databaseUrl: string;
  natsUrl?: string;
  namespace: string;
  port?: number;
  env?: Record<string, string>;
  logLevel?: string;
  resolver?: Resolver;
}): Promise<StartedWebhook> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: opts.logLevel ?? 'silent',
    WEBHOOK_POLL_INTERVAL_MS: '200',
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_RETRY_MAX_DELAY_MS: '2000',
    // A test stack runs every service in one process, two files at a time: small pools keep it
    // well under the server's connection limit.
    WEBHOOK_DB_POOL_MAX: '4',
    ...opts.env,
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: opts.namespace,
    WEBHOOK_GRPC_HOST: '127.0.0.1',
    WEBHOOK_GRPC_PORT: String(opts.port ?? 0),
    WEBHOOK_MIGRATE_ON_START: 'true',
  });
  const runtime = await composeWebhook({
    mesh: opts.mesh ?? devMeshTls('webhook'),
    config,
    opsPort: null,
    logger: createLogger('webhook', config.LOG_LEVEL),
    ...(opts.resolver ? { resolver: opts.resolver } : {}),
  });
  return {
    address: `127.0.0.1:${runtime.grpcPort}`,
    port: runtime.grpcPort,
    db: runtime.db,
    dispatcher: runtime.dispatcher,
    worker: runtime.worker,
    stop: () => runtime.stop(),
  };
}
