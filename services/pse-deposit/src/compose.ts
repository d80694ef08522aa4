import { randomUUID } from 'node:crypto';
import { PseSettlements } from './app/settlements.js';
import { SqlPseSettlementReader } from './persistence/settlement.store.js';
import {
  InboxConsumer,
  ServiceScope,
  SqlReturnStore,
  publicReturnStatus,
  type CreateReturnInput,
  type ReturnRecord,
  asyncService,
  startGrpcServer,
  type Bus,
  type Database,
  type Logger,
  type OpsServer,
  type OutboxRelay,
  type MeshTls,
} from '@wallet/platform';
import { depositV1 } from '@wallet/proto';
import { GrpcLedger } from './adapters/ledger.client.js';
import { SmtpMailer } from './adapters/mailer.js';
import { HttpPseProvider, UnconfiguredPseProvider } from './adapters/pse.client.js';
import { BREB_LISTING_CONSUMER, BREB_LISTING_SUBJECT, brebListingHandler, brebListingPageHandler } from './app/breb-listing.js';
import { depositDeps, type DepositSettings } from './app/deps.js';
import { PSE_RETURNS } from './app/returns.js';
import { Sweeper } from './app/sweeper.js';
import { depositUseCases } from './app/use-cases.js';
import type { DepositConfig } from './config.js';
import { depositHandlers, depositAccess } from './grpc/deposit.handlers.js';
import { depositMigrations, pseDepositOnlineIndexes } from './persistence/migrations/index.js';
import { SqlDepositStore } from './persistence/deposit.store.js';
import { SqlDepositCounts } from './persistence/deposit-counts.js';
import { DepositCounter } from './app/deposit-counter.js';
import { sqlBrebListing } from './persistence/breb-listing.js';
import { meterDepositStore, watchExceptions } from './app/metrics.js';
import { GrpcCobroKeys } from './adapters/cobro-keys.client.js';
import { CobroSweeper, cobroMatcher, cobroPageMatcher, cobroReturnApplier, cobroReversalApplier, cobroUseCases, type CobroDeps } from './app/cobros.js';
import { SqlCobroStore } from './persistence/cobro.store.js';
import type { CreatePseCommand } from './app/create-pse-deposit.js';
import type { DepositRecord } from './domain/deposit.js';

export const DEPOSIT_SCHEMA = 'pse_deposit';
/** How often the deposit counts fold the triggers' deltas (a total reads at most this long's deltas besides its counts). */
export const DEPOSIT_COUNT_INTERVAL_MS = 2_000;

export interface DepositRuntimeOptions {
  /** This process's mesh credentials (mutual TLS for its gRPC server and its clients). */
  mesh: MeshTls;
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
  cobroSweeper: CobroSweeper;
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
  const scope = new ServiceScope(log);
  try {
    const {
      db,
      bus,
      relay: r,
    } = await scope.infra({
      name: 'pse-deposit',
      schema: DEPOSIT_SCHEMA,
      databaseUrl: c.DATABASE_URL,
      migrations: depositMigrations,
      onlineIndexes: pseDepositOnlineIndexes,
      poolMax: c.DEPOSIT_DB_POOL_MAX,
      migrateOnStart: c.DEPOSIT_MIGRATE_ON_START,
      production: c.NODE_ENV === 'production',
      natsUrl: c.NATS_URL,
      namespace: c.BUS_NAMESPACE,
      streamReplicas: c.NATS_STREAM_REPLICAS,
      streams: ['DEPOSITS', 'COBROS'],
      relay: { intervalMs: 250, batch: 500, concurrency: 16, nudgeDelayMs: 20 },
    });
    const relay = r!;

    const cobroKeys = new GrpcCobroKeys(c.COLLECT_KEY_GRPC_ADDR, o.mesh);
    scope.defer(async () => cobroKeys.shutdown());
    // The cobros' PSE links are this service's own PSE deposits (the use case is built below, with the other ports).
    let createPse: ((companyId: string, cmd: CreatePseCommand) => Promise<DepositRecord>) | undefined;
    let refundPse: ((companyId: string, input: CreateReturnInput) => Promise<ReturnRecord>) | undefined;
    const cobroDeps: CobroDeps = {
      store: new SqlCobroStore(db, () => relay.nudge()),
      keys: cobroKeys,
      pseLinks: {
        async create(companyId, cobro, payer, profile) {
          const d = await createPse!(companyId, {
            amountCents: cobro.amount,
            payerDocumentTypeId: payer.documentTypeId,
            payerDocumentNumber: payer.documentNumber,
            payerFirstName: payer.firstName,
            payerLastName: payer.lastName,
            payerEmail: payer.email,
            payerPhone: payer.phone,
            internalRef: cobro.reference,
            company: profile,
            cobro: { id: cobro.id, expiresAt: cobro.expiresAt },
          });
          return { depositId: d.id, paygatewayUrl: d.paygatewayUrl ?? '' };
        },
      },
      // A cobro's automatic returns (policy `return`): a Bre-B payment's by collect-key, a PSE one's by this service's refunds.
      returns: {
        async request(companyId, r) {
          const input = {
            returnId: r.returnId,
            depositId: r.depositId,
            amountCents: r.amount,
            reason: r.reason,
            description: r.description,
            requestedBy: 'cobro',
          };
          if (r.source === 'BREB') return cobroKeys.createReturn(companyId, input);
          const out = await refundPse!(companyId, input);
          return { status: publicReturnStatus(out.status) };
        },
      },
      log: log.child({ component: 'cobros' }),
      now: () => new Date(),
      newId: () => randomUUID(),
      expiryGraceSeconds: c.COBRO_EXPIRY_GRACE_SECONDS,
      minTtlSeconds: c.COBRO_MIN_TTL_SECONDS,
    };
    const listingLog = log.child({ component: 'breb-listing' });
    const matchers = {
      one: cobroMatcher(cobroDeps),
      page: cobroPageMatcher(cobroDeps),
      returned: cobroReturnApplier(cobroDeps),
      reversed: cobroReversalApplier(cobroDeps),
    };
    const listingConsumer = new InboxConsumer(db, bus, {
      stream: 'DEPOSITS',
      durable: BREB_LISTING_CONSUMER,
      subject: BREB_LISTING_SUBJECT,
      handler: brebListingHandler(sqlBrebListing, listingLog, undefined, matchers.one, matchers.returned, matchers.reversed),
      // A page of events: listed with one statement, its payments matched with a few (docs/benchmarks.md "Cobro matching").
      batchHandler: brebListingPageHandler(sqlBrebListing, listingLog, undefined, matchers),
      maxBatch: 128,
      log,
    });
    await listingConsumer.start();
    scope.defer(() => listingConsumer.stop());

    const ledger = new GrpcLedger(c.LEDGER_GRPC_ADDR, o.mesh);
    scope.defer(async () => ledger.close());
    const mailer = new SmtpMailer(c.SMTP_URL, c.MAIL_FROM, c.SMTP_TIMEOUT_MS, log);
    scope.defer(async () => mailer.close());

    // Page-style totals from the companies' deposit counts, kept beside the writes (docs/deposit-counts.md).
    const counts = new SqlDepositCounts(db);
    const counter = new DepositCounter(counts, { intervalMs: DEPOSIT_COUNT_INTERVAL_MS }, log.child({ component: 'deposit-counts' }));
    counter.start();
    scope.defer(() => counter.stop());
    const deps = depositDeps({
      store: meterDepositStore(new SqlDepositStore(db, () => relay.nudge(), counts)),
      returns: new SqlReturnStore(db, PSE_RETURNS, () => relay.nudge()),
      ledger,
      pse: c.PSE_PROVIDER_URL ? new HttpPseProvider(c.PSE_PROVIDER_URL, c.PROVIDER_HTTP_TIMEOUT_MS, log) : new UnconfiguredPseProvider(),
      mailer,
      settings: settingsFrom(c),
      log,
    });
    const uc = depositUseCases(deps);
    createPse = (companyId, cmd) => uc.createPse.execute(companyId, undefined, cmd);
    refundPse = (companyId, input) => uc.createDepositReturn.execute(companyId, input);
    scope.defer(watchExceptions(deps.store));

    const sweeper = new Sweeper(deps, uc.saga, { intervalMs: c.SWEEPER_INTERVAL_MS, batch: c.SWEEPER_BATCH }, uc.returnSaga);
    sweeper.start();
    scope.defer(() => sweeper.stop());
    const cobros = cobroUseCases(cobroDeps);
    const cobroSweeper = new CobroSweeper(cobroDeps, { intervalMs: c.SWEEPER_INTERVAL_MS, batch: c.SWEEPER_BATCH });
    cobroSweeper.start();
    scope.defer(() => cobroSweeper.stop());

    const implementation = asyncService<depositV1.DepositServiceServer>(
      depositHandlers(uc, new PseSettlements(new SqlPseSettlementReader(db)), deps.now, cobros),
      log,
      depositAccess,
      o.mesh,
    );
    const grpc = await startGrpcServer(c.DEPOSIT_GRPC_HOST, c.DEPOSIT_GRPC_PORT, [{ definition: depositV1.DepositServiceService, implementation }], o.mesh);
    scope.defer(() => grpc.stop(10_000));

    const { ops, opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort: grpc.port, opsPort }, 'pse-deposit started');

    return {
      db,
      bus,
      relay,
      listingConsumer,
      sweeper,
      cobroSweeper,
      ops,
      grpcPort: grpc.port,
      opsPort,
      stop: () => scope.stop(),
    };
  } catch (err) {
    await scope.stop();
    throw err;
  }
}
