import { ledgerV1 } from '@wallet/proto';
import { createAsyncClient } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, testNamespace } from '@wallet/platform/testing';
import { startLedger } from '@wallet/ledger/testing';
import { startGateway } from '@wallet/gateway/testing';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The product as it runs (gateway → gRPC → ledger → Postgres/NATS), in this process, on fresh data. */
export async function startStack(gatewayEnv: Record<string, string> = {}) {
  const tdb = await createTestDatabase('e2e');
  const namespace = testNamespace();
  const ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
  const gateway = await startGateway({
    databaseUrl: tdb.url, redisUrl: REDIS_URL, ledgerAddress: ledger.address, namespace, port: 0,
    env: { LOG_LEVEL: 'silent', RATE_LIMIT_PREFIX: namespace, ...gatewayEnv },
  });
  const ledgerClient = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address);

  async function http(method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${gateway.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    let json: any;
    try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
    return { status: res.status, headers: res.headers, body: json, text };
  }
  const admin = (method: string, path: string, body?: unknown) => http(method, path, { token: gateway.adminToken, body });

  async function provision(name: string, opts: { wallets?: string[]; taxRegime?: 'COMMON' | 'SIMPLE' } = {}) {
    const c = await admin('POST', '/admin/companies', { name, nit: `900${Math.floor(Math.random() * 1e6)}-1`, taxRegime: opts.taxRegime ?? 'COMMON', ...(opts.wallets ? { wallets: opts.wallets } : {}) });
    if (c.status !== 201) throw new Error(`provision failed: ${c.status} ${c.text}`);
    const w = await admin('POST', `/admin/companies/${c.body.id}/api-keys`, { scope: 'WRITE', label: 'e2e-write' });
    const r = await admin('POST', `/admin/companies/${c.body.id}/api-keys`, { scope: 'READ', label: 'e2e-read' });
    return { id: c.body.id as string, writeKey: w.body.key as string, readKey: r.body.key as string, raw: c.body };
  }

  async function invariants() {
    return ledgerClient.checkInvariants({}, { requestId: 'e2e-invariants' });
  }

  async function stop() {
    ledgerClient.close();
    await gateway.stop();
    await ledger.stop();
    await deleteNamespaceStreams(NATS_URL, namespace);
    await tdb.drop();
  }

  return { gateway, ledger, ledgerClient, namespace, http, admin, provision, invariants, stop };
}
