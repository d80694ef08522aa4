import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createAsyncClient } from '../grpc/client.js';
import { devMeshTls } from '../mesh/dev-pki.js';
import type { MeshIdentity } from '../mesh/identity.js';

/** Test helpers: each test file gets its own database and bus namespace on the real servers. */

export const TEST_PG_ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase { url: string; name: string; drop(): Promise<void> }

export async function createTestDatabase(prefix = 'wt'): Promise<TestDatabase> {
  const name = uniqueName(prefix);
  const admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await admin.connect();
  try { await admin.query(`create database "${name}"`); } finally { await admin.end(); }
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
      await c.connect();
      try { await c.query(`drop database if exists "${name}" with (force)`); } finally { await c.end(); }
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
    } catch (err) { last = err; }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export { Choreography, type InterleavingScheduler } from './choreography.js';

/** A client of a service over the mesh, as the process `as` (the development PKI): what tests use instead of a bare channel. */
export function meshClient<S>(
  Ctor: Parameters<typeof createAsyncClient<S>>[0], address: string, as: MeshIdentity, server: MeshIdentity, deadlineMs?: number,
): ReturnType<typeof createAsyncClient<S>> {
  return createAsyncClient<S>(Ctor, address, { ...(deadlineMs ? { deadlineMs } : {}), mesh: { tls: devMeshTls(as), server } });
}

/** An access policy that lets `callers` call every method of a service definition (platform tests of the gRPC helpers). */
export function openPolicy(definition: Record<string, unknown>, callers: readonly MeshIdentity[]): Record<string, readonly MeshIdentity[]> {
  return Object.fromEntries(Object.keys(definition).map((k) => [k, callers]));
}

/**
 * A test client of a service that calls each method as the first identity its access policy
 * allows (the gateway for API methods, transfer for the saga's postings, …), one mutual-TLS
 * channel per identity: tests exercise services as their real callers do, with the allow-lists on.
 */
export function policyClient<S>(
  Ctor: Parameters<typeof createAsyncClient<S>>[0], address: string, server: MeshIdentity,
  policy: { readonly [method: string]: readonly MeshIdentity[] }, deadlineMs?: number,
): ReturnType<typeof createAsyncClient<S>> {
  const clients = new Map<MeshIdentity, ReturnType<typeof createAsyncClient<S>>>();
  const as = (id: MeshIdentity) => {
    let c = clients.get(id);
    if (!c) { c = meshClient<S>(Ctor, address, id, server, deadlineMs); clients.set(id, c); }
    return c;
  };
  return new Proxy({} as ReturnType<typeof createAsyncClient<S>>, {
    get(_t, prop: string) {
      if (prop === 'close') return () => { for (const c of clients.values()) c.close(); clients.clear(); };
      if (prop === 'then') return undefined;
      if (prop === 'raw') return as('gateway').raw;
      return (as(policy[prop]?.[0] ?? 'gateway') as unknown as Record<string, unknown>)[prop];
    },
  });
}
