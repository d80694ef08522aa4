import { readFileSync } from 'node:fs';
import { ConfigError, ServiceScope, asyncService, startGrpcServer, type Bus, type Database, type Logger, type MeshTls } from '@wallet/platform';
import { receiptV1 } from '@wallet/proto';
import { PadesReceiptSigner } from './adapters/pades-signer.js';
import { developmentSigningP12, signingKeyFromP12, SigningKeyError, type SigningKey } from './adapters/signing-key.js';
import { receiptDeps } from './app/deps.js';
import { Projection } from './app/rebuild.js';
import { receiptUseCases, type ReceiptUseCases } from './app/use-cases.js';
import type { ReceiptConfig } from './config.js';
import { receiptHandlers, receiptAccess } from './grpc/receipt.handlers.js';
import { receiptMigrations } from './persistence/migrations/index.js';
import { SqlReadModelStore, sqlReadModelTables } from './persistence/read-model.store.js';
import { SqlIssuedReceipts } from './persistence/issued-receipts.store.js';

export const RECEIPT_SCHEMA = 'receipt';

export interface ReceiptRuntimeOptions {
  /** This process's mesh credentials (mutual TLS for its gRPC server and its clients). */
  mesh: MeshTls;
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
  receipts: ReceiptUseCases;
  grpcPort: number;
  opsPort: number | null;
  stop(): Promise<void>;
}

/** Opens the database (migrated when asked) and the bus in `scope`; shared by the service and the rebuild CLI. */
export async function openStores(c: ReceiptConfig, scope: ServiceScope, name: string): Promise<{ db: Database; bus: Bus }> {
  return scope.infra({
    name,
    schema: RECEIPT_SCHEMA,
    databaseUrl: c.DATABASE_URL,
    migrations: receiptMigrations,
    poolMax: c.RECEIPT_DB_POOL_MAX,
    migrateOnStart: c.RECEIPT_MIGRATE_ON_START,
    production: c.NODE_ENV === 'production',
    natsUrl: c.NATS_URL,
    namespace: c.BUS_NAMESPACE,
    streamReplicas: c.NATS_STREAM_REPLICAS,
    streams: ['TRANSFERS', 'DEPOSITS'],
    relay: false, // a read model: it publishes nothing
  });
}

/**
 * The key every receipt is signed with: the PKCS#12 at RECEIPT_SIGNING_P12_FILE, or (outside
 * production, none configured) a development key made now, with one warning. A file that cannot
 * be read or opened stops the start, naming the variable; no key material or passphrase is logged.
 */
export function receiptSigningKey(c: ReceiptConfig, log: Logger, now = new Date()): SigningKey {
  const file = c.RECEIPT_SIGNING_P12_FILE;
  if (!file) {
    if (c.NODE_ENV === 'production') throw new ConfigError(['RECEIPT_SIGNING_P12_FILE: required in production']); // loadConfig refuses it first
    const key = signingKeyFromP12(developmentSigningP12(c.RECEIPT_SIGNING_P12_PASSPHRASE, now), c.RECEIPT_SIGNING_P12_PASSPHRASE, { now, development: true });
    log.warn(
      { signer: key.commonName, certificateSha256: key.signer.fingerprint256 },
      'receipts are signed with a development key made at start (self-signed, a new one each start): set RECEIPT_SIGNING_P12_FILE and RECEIPT_SIGNING_P12_PASSPHRASE',
    );
    return key;
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new ConfigError([`RECEIPT_SIGNING_P12_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`]);
  }
  let key: SigningKey;
  try {
    key = signingKeyFromP12(bytes, c.RECEIPT_SIGNING_P12_PASSPHRASE, { now });
  } catch (err) {
    if (err instanceof SigningKeyError)
      throw new ConfigError([`RECEIPT_SIGNING_P12_FILE: ${file}: ${err.message} (its passphrase: RECEIPT_SIGNING_P12_PASSPHRASE)`]);
    throw err;
  }
  const validTo = new Date(key.signer.validTo);
  const fields = { signer: key.commonName, issuer: key.signer.issuer.replace(/\n/g, ', '), certificateSha256: key.signer.fingerprint256, validTo };
  if (validTo.getTime() - now.getTime() < 30 * 86_400_000) log.warn(fields, 'the receipt signing certificate expires within 30 days: renew it');
  else log.info(fields, 'receipts are signed with the configured key');
  return key;
}

/**
 * The composition root shared by main.ts and testing.ts: database → bus → the projection (durable
 * consumers on TRANSFERS and DEPOSITS into the read model) → receipts → gRPC server → ops endpoints.
 * The signing key is read first: a bad one stops the start before anything is opened.
 */
export async function composeReceipt(o: ReceiptRuntimeOptions): Promise<ReceiptRuntime> {
  const log = o.logger;
  const c = o.config;
  const signer = new PadesReceiptSigner(receiptSigningKey(c, log));
  const scope = new ServiceScope(log);
  try {
    const { db, bus } = await openStores(c, scope, 'receipt');

    const store = new SqlReadModelStore(db);
    const projection = new Projection(db, bus, { tables: sqlReadModelTables, reset: store }, log.child({ component: 'projection' }));
    await projection.start();
    scope.defer(() => projection.stop());

    const receipts = receiptUseCases(receiptDeps(store, new SqlIssuedReceipts(db), c.RECEIPT_VERIFY_BASE_URL, signer));
    let grpcPort = 0;
    if (o.grpc !== false) {
      const implementation = asyncService<receiptV1.ReceiptServiceServer>(receiptHandlers(receipts), log, receiptAccess, o.mesh);
      const grpc = await startGrpcServer(c.RECEIPT_GRPC_HOST, c.RECEIPT_GRPC_PORT, [{ definition: receiptV1.ReceiptServiceService, implementation }], o.mesh);
      scope.defer(() => grpc.stop(10_000));
      grpcPort = grpc.port;
    }

    const { opsPort } = await scope.ops(db, bus, o.opsPort, o.opsHost);
    log.info({ grpcPort, opsPort }, 'receipt started');

    return {
      db,
      bus,
      projection,
      receipts,
      grpcPort,
      opsPort,
      stop: () => scope.stop(),
    };
  } catch (err) {
    await scope.stop();
    throw err;
  }
}
