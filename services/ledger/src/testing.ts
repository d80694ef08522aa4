import { createLogger, type Database, devMeshTls, type MeshTls } from '@wallet/platform';
import { composeLedger } from './compose.js';

/** Who may call each RPC (the tests' clients call as those identities). */
export { ledgerAccess } from './grpc/ledger.handlers.js';

export interface StartedLedger {
  /** host:port for createAsyncClient. */
  address: string;
  port: number;
  db: Database;
  stop(): Promise<void>;
}

/**
 * The whole ledger service in this process, for integration and end-to-end tests: migrates the
 * database, connects the bus (namespaced streams), and serves gRPC on 127.0.0.1 (port 0 =
 * ephemeral). The same composition as main.ts, without the ops HTTP port.
 */
export async function startLedger(opts: {
  databaseUrl: string;
  natsUrl?: string;
  namespace: string;
  port?: number;
  logLevel?: string;
  mesh?: MeshTls;
  /** BALANCE_ALERT_INTERVAL_MS (default 1000). */
  balanceAlertIntervalMs?: number;
  /** JOURNAL_SEAL_INTERVAL_MS (default 1000). */
  journalSealIntervalMs?: number;
  /** The balance checkpointer: every minute, 300 s margin (the default), or off (a test runs its passes itself). */
  balanceCheckpoints?: { intervalMs: number; marginSeconds: number } | 'off';
}): Promise<StartedLedger> {
  const runtime = await composeLedger({
    mesh: opts.mesh ?? devMeshTls('ledger'),
    databaseUrl: opts.databaseUrl,
    natsUrl: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    namespace: opts.namespace,
    grpcHost: '127.0.0.1',
    grpcPort: opts.port ?? 0,
    opsPort: null,
    migrateOnStart: true,
    ...(opts.balanceAlertIntervalMs ? { balanceAlertIntervalMs: opts.balanceAlertIntervalMs } : {}),
    ...(opts.journalSealIntervalMs ? { journalSealIntervalMs: opts.journalSealIntervalMs } : {}),
    ...(opts.balanceCheckpoints ? { balanceCheckpoints: opts.balanceCheckpoints } : {}),
    poolMax: 6, // a test stack runs every service in one process, two files at a time
    logger: createLogger('ledger', opts.logLevel ?? 'silent'),
  });
  return { address: `127.0.0.1:${runtime.grpcPort}`, port: runtime.grpcPort, db: runtime.db, stop: () => runtime.stop() };
}
