import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devMeshTls } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, eventually, policyClient, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { ledgerV1, transferV1 } from '@wallet/proto';
import { ledgerAccess, startLedger } from '@wallet/ledger/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import { startTransfer, transferAccess } from '@wallet/transfer/testing';
import { GrpcOurRecords } from '../src/adapters/grpc-our-records.js';
import { HttpReportSource } from '../src/adapters/http-report-source.js';
import { SpillSorter } from '../src/adapters/spill-sorter.js';
import { reconcile } from '../src/app/reconcile.js';
import { InMemoryBreakSink } from '../src/testing.js';

/**
 * The engine against the sandbox's Bre-B report AND our books as the real transfer service serves
 * them (ListSettlements / FindSettlements over mutual TLS, as the mesh identity `reconciliation`):
 * what the transfer integration harness starts (ledger, sandbox, a callback receiver, transfer),
 * two real sends (one completed, one failed by the sandbox's 13 rule), moved to a fixed Bogotá day on
 * both sides as the provider settled them. Zero breaks; then one injected amount discrepancy is
 * exactly one break.
 */

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const D = '2025-03-14';
const bog = (time: string) => new Date(`${D}T${time}-05:00`).toISOString();
const { Rail, FeeOperation } = ledgerV1;

describe('reconciling a Bre-B day against the transfer service over gRPC', () => {
  let tdb: TestDatabase;
  let namespace: string;
  let ledger: Awaited<ReturnType<typeof startLedger>>;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let transfer: Awaited<ReturnType<typeof startTransfer>>;
  let callbacks: Server;
  let gateway: ReturnType<typeof policyClient<transferV1.TransferServiceServer>>;
  let ledgerClient: ReturnType<typeof policyClient<ledgerV1.LedgerServiceServer>>;
  let ours: GrpcOurRecords;
  let source: HttpReportSource;
  const ids: Record<string, { our: string; provider: string }> = {};

  /** Receives the rail's callbacks as the gateway does and hands them to HandleRailCallback. */
  function startCallbacks(): Promise<string> {
    callbacks = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rail = (req.url ?? '').endsWith('/ach') ? Rail.ACH : Rail.BREB;
        gateway.handleRailCallback({ rail, rawBody: Buffer.concat(chunks), signature: String(req.headers['x-provider-signature'] ?? '') }, { requestId: randomUUID() })
          .then(() => res.writeHead(200).end('{}'), () => res.writeHead(503).end('{}'));
      });
    });
    return new Promise((r) => callbacks.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/webhooks/rails`)));
  }

  async function sendBreb(companyId: string, amount: bigint): Promise<string> {
    const ctx = { requestId: randomUUID(), companyId };
    const r = await gateway.resolveKey({ keyValue: '3001234567', keyType: 'AUTO' }, ctx);
    expect(r.found).toBe(true);
    const sent = await gateway.send(transferV1.SendRequest.fromPartial({
      amount, brebKey: { type: r.keyType, value: r.keyValue }, targetName: r.recipient!.fullName, targetDocument: r.recipient!.idValue, requestHash: randomUUID(),
    }), ctx);
    return sent.transfer!.id;
  }
  const row = async (id: string) => (await transfer.db.query<{ state: string; provider_transfer_id: string | null }>(
    'select state, provider_transfer_id from transfer.transfers where id = ?::uuid', [id]))[0];

  beforeAll(async () => {
    tdb = await createTestDatabase('recon_grpc');
    namespace = testNamespace();
    ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_BREB_CONFIRM_MS: '150', SANDBOX_ACH_CONFIRM_MS: '3600000', SANDBOX_POLL_MS: '50' } });
    const callbackBaseUrl = await startCallbacks();
    transfer = await startTransfer({
      databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, ledgerAddress: ledger.address, providerUrl: sandbox.url, callbackBaseUrl, port: 0,
      env: { SWEEPER_INTERVAL_MS: '100', SWEEPER_GRACE_SECONDS: '1', RAIL_CONFIRM_TIMEOUT_SECONDS: '30', PROVIDER_HTTP_TIMEOUT_MS: '2000' },
    });
    gateway = policyClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, transfer.address, 'transfer', transferAccess, 30_000);
    ledgerClient = policyClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, 'ledger', ledgerAccess, 15_000);
    ours = new GrpcOurRecords({ mesh: devMeshTls('reconciliation'), transferAddress: transfer.address, batchSize: 1 });
    source = new HttpReportSource({ reportsUrl: `${sandbox.url}/sandbox/reports`, headersTimeoutMs: 10_000, idleTimeoutMs: 10_000 });

    const co = randomUUID();
    const ctx = { requestId: randomUUID(), companyId: co };
    await ledgerClient.openWallets({ rails: [Rail.BREB, Rail.ACH] }, ctx);
    await ledgerClient.credit({ idempotencyKey: `seed-${co}`, rail: Rail.BREB, amountCents: 1_000_000n }, ctx);
    await ledgerClient.setFeeConfig({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 0n, variableBps: 0 }, { requestId: randomUUID() });
    const ok = await sendBreb(co, 150_000n);
    const failed = await sendBreb(co, 250_013n); // the sandbox's 13 rule: FAILED at the rail
    await eventually(async () => (await row(ok))?.state === 'COMPLETED' && (await row(failed))?.state === 'FAILED', 15_000);
    ids.ok = { our: ok, provider: (await row(ok))!.provider_transfer_id! };
    ids.failed = { our: failed, provider: (await row(failed))!.provider_transfer_id! };

    // Both sides to one Bogotá day: the provider's acceptance and outcome, and our settlement times.
    const move = async (id: string, accepted: string, outcome: string) => {
      await transfer.db.query('update sandbox.transfers set created_at = ?::timestamptz, outcome_at = ?::timestamptz where transaction_id = ?', [accepted, outcome, id]);
      await transfer.db.query(`update transfer.transfers set completed_at = case when state = 'COMPLETED' then ?::timestamptz end,
        finished_at = ?::timestamptz where id = ?::uuid`, [outcome, outcome, id]);
    };
    await move(ok, bog('08:00:00.000'), bog('08:00:03.250'));
    await move(failed, bog('09:00:00.000'), bog('09:00:03.000'));
  }, 120_000);

  afterAll(async () => {
    ours?.close();
    gateway?.close();
    ledgerClient?.close();
    await transfer?.stop();
    if (callbacks) await new Promise<void>((r) => callbacks.close(() => r()));
    await sandbox?.stop();
    await ledger?.stop();
    await deleteNamespaceStreams(NATS_URL, namespace);
    await tdb?.drop();
  });

  const run = async () => {
    const sink = new InMemoryBreakSink();
    const r = await reconcile('breb', D, await source.open('breb', D), { ours, sink, sorter: () => new SpillSorter({ runLines: 2 }) });
    if (r.outcome !== 'RECONCILED') throw new Error(`rejected: ${r.reason} ${r.detail}`);
    return { r, sink };
  };

  it('the day streamed from the transfer service matches the report: a completed and a failed transfer, zero breaks', async () => {
    const batches: string[][] = [];
    for await (const b of ours.settled('breb', D)) batches.push(b.map((x) => x.ourId));
    expect(batches).toEqual([ids.ok!.our, ids.failed!.our].sort().map((id) => [id])); // batchSize 1: one stream message per record
    const { r, sink } = await run();
    expect(r.ours).toEqual({ count: 2, amountCents: 400_013n });
    expect(r.matched.count).toBe(2);
    expect(r.breaks.total).toBe(0);
    expect(sink.keys()).toEqual([]);
  });

  it('one injected amount discrepancy → exactly that break, with our amount from the transfer service', async () => {
    const res = await fetch(`${sandbox.url}/sandbox/reports/breb/${D}/discrepancies`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'amount', ref: ids.ok!.provider, amountCents: 150_100 }),
    });
    expect(res.status).toBe(201);
    const { r, sink } = await run();
    expect(sink.keys()).toEqual([`breb:${D}:amount_mismatch:${ids.ok!.provider}`]);
    expect(sink.byKey.get(sink.keys()[0]!)).toMatchObject({ ourId: ids.ok!.our, ours: { amountCents: 150_000n, status: 'COMPLETED' }, theirs: { amountCents: 150_100n } });
    expect(r.breaks.total).toBe(1);
  });
});
