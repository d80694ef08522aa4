import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createAsyncClient } from '../grpc/client.js';
import { devMeshTls } from '../mesh/dev-pki.js';
import type { MeshIdentity } from '../mesh/identity.js';
import { entryIdentity, type AccessEntry } from '../mesh/access.js';
import type { CallerPrincipal, CompanyProfileClaims } from '../mesh/caller-context.js';
import type { CallContext } from '../grpc/context.js';
import type { Database } from '../db/database.js';

/** Test helpers: each test file gets its own database and bus namespace on the real servers. */

export const TEST_PG_ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix = 'wt'): Promise<TestDatabase> {
  const name = uniqueName(prefix);
  const admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
    // A test database need not survive a crash of the server: its commits do not wait for the WAL
    // to reach the disk (about 0.7 ms each on these machines, thousands a minute in a suite). The
    // order and atomicity of transactions are as always; only the last moments before a server
    // crash could be lost, and no test crashes the server.
    await admin.query(`alter database "${name}" set synchronous_commit = off`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A NATS namespace unique to this test file (lower-case: subjects and stream prefixes). */
export function testNamespace(): string {
  return uniqueName('t').toLowerCase();
}

export async function deleteNamespaceStreams(natsUrl: string, namespace: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const prefix = `${namespace.toUpperCase()}_`;
    for await (const s of jsm.streams.list()) {
      if (s.config.name.startsWith(prefix)) await jsm.streams.delete(s.config.name);
    }
  } finally {
    await nc.close();
  }
}

/** Polls until `fn` returns a truthy value or the time runs out (for eventually-consistent checks). */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export { Choreography, type InterleavingScheduler } from './choreography.js';

/**
 * The plan Postgres picks for a statement when sequential scans, bitmap scans and sorts are priced
 * out: only a usable index avoids them (tests that a keyset query reads its index, in order).
 */
export async function indexOnlyPlan(db: Database, sql: string, params: readonly unknown[]): Promise<string> {
  return db.preparedTx(async (tx) => {
    await tx.simple('set local enable_seqscan = off; set local enable_bitmapscan = off; set local enable_sort = off');
    const rows = await tx.query<{ 'QUERY PLAN': string }>(`explain ${sql}`, params);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

/** The company profile test principals carry unless a test gives one (CallContext.principal). */
export const TEST_COMPANY_PROFILE: CompanyProfileClaims = {
  nit: '900123456-7',
  name: 'Empresa de Pruebas S.A.S.',
  ivaApplicable: false,
  multiSigThreshold: 0,
  counterpartyDailyLimitCents: 0n,
  counterpartyMonthlyLimitCents: 0n,
};

/**
 * The principal the gateway would sign for a test call that names none: an API key of the
 * context's company (WRITE, the test profile), or an operator when the method is for operators
 * or no company is named.
 */
export function testPrincipal(ctx: CallContext, admin = false, callback = false): CallerPrincipal {
  // An operator's or a provider's method is called as the gateway calls it, whatever the test's context names.
  if (callback) return { kind: 'callback' };
  if (ctx.principal && (!admin || ctx.principal.kind === 'admin')) return ctx.principal;
  if (admin || !ctx.companyId) return { kind: 'admin', operator: 'test-operator', ...(ctx.companyId ? { companyId: ctx.companyId } : {}) };
  return { kind: 'apikey', companyId: ctx.companyId, keyId: ctx.apiKeyId ?? 'test-key', scope: 'WRITE', profile: TEST_COMPANY_PROFILE };
}

/**
 * A client of a service over the mesh, as the process `as` (the development PKI): what tests use
 * instead of a bare channel. As the gateway, every call carries a signed caller context
 * (testPrincipal unless the context names its principal).
 */
export function meshClient<S>(
  Ctor: Parameters<typeof createAsyncClient<S>>[0],
  address: string,
  as: MeshIdentity,
  server: MeshIdentity,
  deadlineMs?: number,
  adminMethods: ReadonlySet<string> = new Set(),
  callbackMethods: ReadonlySet<string> = new Set(),
): ReturnType<typeof createAsyncClient<S>> {
  const inner = createAsyncClient<S>(Ctor, address, { ...(deadlineMs ? { deadlineMs } : {}), mesh: { tls: devMeshTls(as), server } });
  if (as !== 'gateway') return inner;
  return new Proxy(inner, {
    get(target, prop: string) {
      const v = (target as unknown as Record<string, unknown>)[prop];
      if (typeof v !== 'function' || prop === 'close') return v;
      return (req: unknown, ctx: CallContext, o?: unknown) =>
        (v as (...a: unknown[]) => unknown)(req, { ...ctx, principal: testPrincipal(ctx, adminMethods.has(prop), callbackMethods.has(prop)) }, o);
    },
  });
}

/** An access policy that lets `callers` call every method of a service definition (platform tests of the gRPC helpers). */
export function openPolicy(definition: Record<string, unknown>, callers: readonly AccessEntry[]): Record<string, readonly AccessEntry[]> {
  return Object.fromEntries(Object.keys(definition).map((k) => [k, callers]));
}

/**
 * A test client of a service that calls each method as the first identity its access policy
 * allows (the gateway for API methods, transfer for the saga's postings, …), one mutual-TLS
 * channel per identity: tests exercise services as their real callers do, with the allow-lists on.
 */
export function policyClient<S>(
  Ctor: Parameters<typeof createAsyncClient<S>>[0],
  address: string,
  server: MeshIdentity,
  policy: { readonly [method: string]: readonly AccessEntry[] },
  deadlineMs?: number,
): ReturnType<typeof createAsyncClient<S>> {
  const clients = new Map<MeshIdentity, ReturnType<typeof createAsyncClient<S>>>();
  const adminMethods = new Set(
    Object.entries(policy)
      .filter(([, e]) => e[0] === 'gateway:admin')
      .map(([m]) => m),
  );
  const callbackMethods = new Set(
    Object.entries(policy)
      .filter(([, e]) => e[0] === 'gateway:callback')
      .map(([m]) => m),
  );
  const as = (id: MeshIdentity) => {
    let c = clients.get(id);
    if (!c) {
      c = meshClient<S>(Ctor, address, id, server, deadlineMs, adminMethods, callbackMethods);
      clients.set(id, c);
    }
    return c;
  };
  return new Proxy({} as ReturnType<typeof createAsyncClient<S>>, {
    get(_t, prop: string) {
      if (prop === 'close')
        return () => {
          for (const c of clients.values()) c.close();
          clients.clear();
        };
      if (prop === 'then') return undefined;
      if (prop === 'raw') return as('gateway').raw;
      const first = policy[prop]?.[0];
      return (as(first ? entryIdentity(first) : 'gateway') as unknown as Record<string, unknown>)[prop];
    },
  });
}
export { productionSecretFailures } from './production-secrets.js';
export { captureLogs, type CapturedLogs } from './capture-logs.js';
export { CANONICAL_JSON_INPUTS, CODE_UNIT_ORDER_GOLDEN } from './canonical-json-inputs.js';
export { recordSpans, type RecordedSpans } from './recorded-spans.js';
export { freePort } from './free-port.js';
export { SANDBOX_ACH_ACCOUNT, PSE_PAYER } from './fixtures.js';
export {
  archiveCurrentWal,
  asPostgres,
  baseBackup,
  makeArchiveDir,
  ownedDirectory as postgresOwnedDirectory,
  pgBin,
  startPrimary,
  startRestored,
  startStandby,
  type BaseBackup,
  type PgCluster,
} from './pg-cluster.js';
