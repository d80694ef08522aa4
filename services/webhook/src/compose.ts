import { SecretBox, ServiceScope, asyncService, startGrpcServer, type Bus, type Database, type Logger, type OpsServer, type MeshTls } from '@wallet/platform';
import { webhookV1 } from '@wallet/proto';
import { pinnedHttpSender } from './adapters/http-sender.js';
import { SsrfTargetGuard, systemResolver, type Resolver } from './adapters/target.js';
import { AckFloors } from './app/ack-floors.js';
import { workerDeps } from './app/deps.js';
import { Dispatcher } from './app/dispatcher.js';
import { webhookUseCases } from './app/use-cases.js';
import { DeliveryWorker } from './app/worker.js';
import type { WebhookConfig } from './config.js';
import { webhookHandlers, webhookAccess } from './grpc/webhook.handlers.js';
import { webhookMigrations } from './persistence/migrations/index.js';
import { SqlWebhookStore } from './persistence/webhook.store.js';
import { watchDeliveryBacklog } from './app/metrics.js';

export const WEBHOOK_SCHEMA = 'webhook';

export interface WebhookRuntimeOptions {
  /** This process's mesh credentials (mutual TLS for its gRPC server and its clients). */
  mesh: MeshTls;
  config: WebhookConfig;
  /** null: no ops HTTP server (in-process tests). */
  opsPort: number | null;
  opsHost?: string;
  logger: Logger;
  /** DNS for the SSRF checks (tests inject one to simulate rebinding); the system resolver by default. */
  resolver?: Resolver;
}

export interface WebhookRuntime {
  db: Database;
  bus: Bus;
  dispatcher: Dispatcher;
  worker: DeliveryWorker;
  grpcPort: number;
  opsPort: number | null;
  ops: OpsServer;
  /** Stops taking calls, stops the consumers and the worker (an attempt in flight finishes), closes connections. */
  stop(): Promise<void>;
}

/**
 * The composition root shared by main.ts and testing.ts: database (migrated when asked) → bus →
 * delivery worker → dispatcher (durable consumers on TRANSFERS, DEPOSITS, COLLECT_KEYS, COBROS, COUNTERPARTIES, WALLETS…) → use cases
 * → gRPC server → ops endpoints.
 */
export async function composeWebhook(o: WebhookRuntimeOptions): Promise<WebhookRuntime> {
  const log = o.logger;
  const c = o.config;
  const scope = new ServiceScope(log);
  try {
    const { db, bus } = await scope.infra({
      name: 'webhook',
      schema: WEBHOOK_SCHEMA,
      databaseUrl: c.DATABASE_URL,
      migrations: webhookMigrations,
      poolMax: c.WEBHOOK_DB_POOL_MAX,
      migrateOnStart: c.WEBHOOK_MIGRATE_ON_START,
      production: c.NODE_ENV === 'production',
      natsUrl: c.NATS_URL,
      namespace: c.BUS_NAMESPACE,
      streamReplicas: c.NATS_STREAM_REPLICAS,
      streams: ['TRANSFERS', 'DEPOSITS', 'COLLECT_KEYS', 'COBROS', 'COUNTERPARTIES', 'WALLETS', 'SCHEDULES'],
      relay: false, // it publishes nothing
    });

    // One SQL store serves the three storage ports: endpoints and log, events, the delivery queue.
    const store = new SqlWebhookStore(db, c.WEBHOOK_RETRY_HORIZON_SECONDS);
    scope.defer(watchDeliveryBacklog(db));
    const secrets = new SecretBox(c.WEBHOOK_SECRET_KEY);
    const targets = new SsrfTargetGuard({ strict: !c.WEBHOOK_ALLOW_PRIVATE_TARGETS }, o.resolver ?? systemResolver);

    const worker = new DeliveryWorker(
      workerDeps({ queue: store, floors: new AckFloors(bus, log.child({ component: 'ack-floors' })), secrets, targets, sender: pinnedHttpSender }),
      {
        timeoutMs: c.WEBHOOK_TIMEOUT_MS,
        retryBaseMs: c.WEBHOOK_RETRY_BASE_MS,
        retryMaxDelayMs: c.WEBHOOK_RETRY_MAX_DELAY_MS,
        pollIntervalMs: c.WEBHOOK_POLL_INTERVAL_MS,
        batch: c.WEBHOOK_WORKER_BATCH,
        concurrency: c.WEBHOOK_WORKER_CONCURRENCY,
      },
      log.child({ component: 'delivery-worker' }),
    );
    worker.start();
    scope.defer(() => worker.stop());

    const dispatcher = new Dispatcher(db, bus, store, log.child({ component: 'dispatcher' }), () => worker.nudge());
    await dispatcher.start();
    scope.defer(() => dispatcher.stop());

    const uc = webhookUseCases({ store, secrets, targets, worker });
    const implementation = asyncService<webhookV1.WebhookServiceServer>(webhookHandlers(uc), log, webhookAccess, o.mesh);
    const grpc = await startGrpcServer(c.WEBHOOK_GRPC_HOST, c.WEBHOOK_GRPC_PORT, [{ definition: webhookV1.WebhookServiceService, implementation }], o.mesh);
    scope.defer(() => grpc.stop(10_000));

    const { ops, opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort: grpc.port, opsPort, strictTargets: targets.strict }, 'webhook started');

    return { db, bus, dispatcher, worker, ops, grpcPort: grpc.port, opsPort, stop: () => scope.stop() };
  } catch (err) {
    await scope.stop();
    throw err;
  }
}
