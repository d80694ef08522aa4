/**
 * In-memory implementations of the ports, for tests and for the benchmark's checks; a later slice
 * replaces them with the owning services' gRPC (OurRecords) and a break table (BreakSink).
 */
import { bogotaDate, type ReportRail } from './domain/report.js';
import { recordKey, type Break, type BreakKind, type OurRecord } from './domain/matching.js';
import type { BreakSink, OurRecords } from './app/ports.js';

/** Keeps breaks by key: the same key opens once (what the break table's unique key will do). */
export class InMemoryBreakSink implements BreakSink {
  readonly byKey = new Map<string, Break>();
  /** Every batch as handed over (re-runs included). */
  calls = 0;

  async open(breaks: readonly Break[]): Promise<{ opened: number }> {
    this.calls += 1;
    let opened = 0;
    for (const b of breaks) {
      if (this.byKey.has(b.key)) continue;
      this.byKey.set(b.key, b);
      opened += 1;
    }
    return { opened };
  }

  keys(): string[] {
    return [...this.byKey.keys()].sort();
  }

  ofKind(kind: BreakKind): Break[] {
    return [...this.byKey.values()].filter((b) => b.kind === kind);
  }
}

/**
 * Our records from an array (any order): `settled` sorts the day's by key as the owning service's
 * ordered query will, in batches; `find` looks up by id. Counts the calls, so tests can see the
 * look-ups are batched.
 */
export class ArrayOurRecords implements OurRecords {
  findCalls: string[][] = [];

  constructor(
    private readonly records: Partial<Record<ReportRail, readonly OurRecord[]>>,
    private readonly batch = 100,
  ) {}

  async *settled(rail: ReportRail, date: string): AsyncGenerator<readonly OurRecord[]> {
    const day = (this.records[rail] ?? [])
      .filter((r) => r.settledAt !== null && bogotaDate(r.settledAt) === date)
      .map((r) => ({ key: recordKey(rail, r), r }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((x) => x.r);
    for (let i = 0; i < day.length; i += this.batch) yield day.slice(i, i + this.batch);
  }

  async find(rail: ReportRail, ids: readonly string[]): Promise<OurRecord[]> {
    this.findCalls.push([...ids]);
    const wanted = new Set(ids);
    return (this.records[rail] ?? []).filter((r) => wanted.has((rail === 'breb-inbound' ? r.providerId : r.ourId) ?? ''));
  }
}

// ---- The whole service in-process (integration and end-to-end tests of its callers: the gateway) ----

export { reconciliationAccess } from './grpc/reconciliation.handlers.js';

export interface StartedReconciliation {
  /** host:port for createAsyncClient (server identity `reconciliation`). */
  address: string;
  port: number;
  runtime: import('./compose.js').ReconciliationRuntime;
  stop(): Promise<void>;
}

/**
 * The reconciliation service in this process: migrates the database, connects the bus (namespaced
 * streams), reads reports from `reportsUrl` and our records from the given services, posts clearing
 * adjustments to the given ledger, serves gRPC on 127.0.0.1 (port 0 = ephemeral). The same
 * composition as main.ts, without the ops port; the schedule is off unless `env` sets one.
 */
export async function startReconciliation(opts: {
  mesh?: import('@wallet/platform').MeshTls;
  databaseUrl: string;
  natsUrl?: string;
  namespace: string;
  reportsUrl: string;
  ledgerAddress?: string;
  transferAddress?: string;
  pseDepositAddress?: string;
  collectKeyAddress?: string;
  port?: number;
  env?: Record<string, string>;
  logLevel?: string;
}): Promise<StartedReconciliation> {
  const { createLogger, devMeshTls } = await import('@wallet/platform');
  const { composeReconciliation } = await import('./compose.js');
  const { loadConfig } = await import('./config.js');
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: opts.logLevel ?? 'silent',
    RECONCILIATION_DB_POOL_MAX: '3',
    RECON_SCHEDULE: 'off',
    ...opts.env,
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: opts.namespace,
    RECONCILIATION_GRPC_HOST: '127.0.0.1',
    RECONCILIATION_GRPC_PORT: String(opts.port ?? 0),
    RECONCILIATION_MIGRATE_ON_START: 'true',
    RECON_REPORTS_URL: opts.reportsUrl,
    ...(opts.ledgerAddress ? { LEDGER_GRPC_ADDR: opts.ledgerAddress } : {}),
    ...(opts.transferAddress ? { TRANSFER_GRPC_ADDR: opts.transferAddress } : {}),
    ...(opts.pseDepositAddress ? { DEPOSIT_GRPC_ADDR: opts.pseDepositAddress } : {}),
    ...(opts.collectKeyAddress ? { COLLECT_KEY_GRPC_ADDR: opts.collectKeyAddress } : {}),
  });
  const runtime = await composeReconciliation({
    mesh: opts.mesh ?? devMeshTls('reconciliation'),
    config,
    opsPort: null,
    logger: createLogger('reconciliation', config.LOG_LEVEL),
  });
  return { address: `127.0.0.1:${runtime.grpcPort}`, port: runtime.grpcPort, runtime, stop: () => runtime.stop() };
}
