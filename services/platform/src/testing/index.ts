import { randomBytes } from 'node:crypto';
import pg from 'pg';

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
export { productionSecretFailures } from './production-secrets.js';
export { captureLogs, type CapturedLogs } from './capture-logs.js';
