import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Database, createLogger, devMeshTls } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, eventually, policyClient, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { ledgerV1, transferV1 } from '@wallet/proto';
import { ledgerAccess, startLedger } from '@wallet/ledger/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import { startTransfer, transferAccess } from '@wallet/transfer/testing';
import { GrpcOurRecords } from '../src/adapters/grpc-our-records.js';
import { HttpReportSource } from '../src/adapters/http-report-source.js';
import { SpillSorter } from '../src/adapters/spill-sorter.js';
import { ReconcileDay } from '../src/app/reconcile-day.js';
import { reconciliationMigrations } from '../src/persistence/migrations/index.js';
import { RECONCILIATION_SCHEMA, RunStore, SqlBreakSink } from '../src/persistence/reconciliation.store.js';

/**
 * ReconcileDay on a real test database (the reconciliation schema, migrated), the real sandbox's
 * Bre-B report and our books as the real transfer service serves them over gRPC (the harness of
 * grpc-our-records.test.ts): runs recorded with their outcome, breaks and money exceptions opened
 * once per key, re-runs idempotent, rejected and failed runs recorded with nothing opened.
 */

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const D = '2025-03-14';
const bog = (time: string) => new Date(`${D}T${time}-05:00`).toISOString();
const { Rail, FeeOperation } = ledgerV1;

describe('ReconcileDay: runs, breaks and money exceptions in the reconciliation schema', () => {
  let tdb: TestDatabase;
  let db: Database;
  let namespace: string;
  let ledger: Awaited<ReturnType<typeof startLedger>>;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let transfer: Awaited<ReturnType<typeof startTransfer>>;
  let callbacks: Server;
  let gateway: ReturnType<typeof policyClient<transferV1.TransferServiceServer>>;
  let ledgerClient: ReturnType<typeof policyClient<ledgerV1.LedgerServiceServer>>;
  let ours: GrpcOurRecords;
  let source: HttpReportSource;
  let runs: RunStore;
  let useCase: ReconcileDay;
  let sandboxStopped = false;
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
    if (!sandboxStopped) await sandbox?.stop();
    await ledger?.stop();
    await deleteNamespaceStreams(NATS_URL, namespace);
    await tdb?.drop();
  });

  beforeAll(async () => {
    tdb = await createTestDatabase('recon_day');
    db = await Database.open({ url: tdb.url, schema: RECONCILIATION_SCHEMA, migrations: reconciliationMigrations, logger: createLogger('recon-day-test', 'silent') });
    expect(await db.migrate()).toEqual(['0001-reconciliation-initial']);
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
    source = new HttpReportSource({ reportsUrl: `${sandbox.url}/sandbox/reports`, headersTimeoutMs: 10_000, idleTimeoutMs: 10_000, connectTimeoutMs: 2_000 });
    runs = new RunStore(db);
    useCase = new ReconcileDay({ runs, source, ours, sink: (runId) => new SqlBreakSink(db, runId), sorter: () => new SpillSorter({ runLines: 2 }) });

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
    await db?.close();
    await tdb?.drop();
  });

  const inject = async (body: Record<string, unknown>) => {
    const res = await fetch(`${sandbox.url}/sandbox/reports/breb/${D}/discrepancies`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
  };
  const breaks = () => db.query<{ break_key: string; run_id: string; last_seen_run_id: string; kind: string; status: string; our_id: string | null; provider_id: string | null; ours: Record<string, unknown> | null; theirs: Record<string, unknown> | null }>(
    'select * from reconciliation.breaks order by break_key');
  const exceptions = () => db.query<{ kind: string; resource_id: string; rail: string; company_id: string; status: string; ours: Record<string, unknown>; theirs: Record<string, unknown> }>(
    'select * from reconciliation.money_exceptions order by resource_id');
  let discrepancyRun: string;

  it('a clean Bre-B day: the run is RECONCILED with its counts, no break, no money exception', async () => {
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({
      rail: 'breb', date: D, outcome: 'RECONCILED', rejectReason: null,
      report: { lines: 2, amountCents: 400_013n, feeCents: 0n },
      ours: { count: 2, amountCents: 400_013n }, matched: { count: 2, amountCents: 400_013n },
      breaks: { total: 0, opened: 0 },
    });
    expect(run.finishedAt).not.toBeNull();
    expect(await runs.get(run.id)).toEqual(run);
    expect(await breaks()).toEqual([]);
    expect(await exceptions()).toEqual([]);
  });

  it('amount and missing discrepancies: exactly 2 breaks and 2 money exceptions, opened in that run with both sides', async () => {
    await inject({ kind: 'amount', ref: ids.ok!.provider, amountCents: 150_100 });
    await inject({ kind: 'missing', ref: ids.failed!.our });
    const run = await useCase.run('breb', D);
    discrepancyRun = run.id;
    expect(run).toMatchObject({ outcome: 'RECONCILED', matched: { count: 0 }, breaks: { total: 2, opened: 2, byKind: { amount_mismatch: 1, missing_at_provider: 1 } } });
    const amountKey = `breb:${D}:amount_mismatch:${ids.ok!.provider}`;
    const missingKey = `breb:${D}:missing_at_provider:${ids.failed!.our}`;
    const b = await breaks();
    expect(b.map((x) => x.break_key)).toEqual([amountKey, missingKey].sort());
    const byKey = new Map(b.map((x) => [x.break_key, x]));
    expect(byKey.get(amountKey)).toMatchObject({
      run_id: run.id, last_seen_run_id: run.id, kind: 'amount_mismatch', status: 'OPEN', our_id: ids.ok!.our, provider_id: ids.ok!.provider,
      ours: { ourId: ids.ok!.our, amountCents: '150000', status: 'COMPLETED' }, theirs: { providerId: ids.ok!.provider, amountCents: '150100' },
    });
    expect(byKey.get(missingKey)).toMatchObject({
      run_id: run.id, kind: 'missing_at_provider', our_id: ids.failed!.our, ours: { ourId: ids.failed!.our, amountCents: '250013', status: 'FAILED' }, theirs: null,
    });
    const e = await exceptions();
    expect(e).toHaveLength(2);
    const excByKey = new Map(e.map((x) => [x.resource_id, x]));
    expect(excByKey.get(amountKey)).toMatchObject({
      kind: 'AMOUNT_MISMATCH', rail: 'breb', status: 'OPEN', ours: { amountCents: '150000' }, theirs: { amountCents: '150100' },
    });
    expect(excByKey.get(amountKey)!.company_id).not.toBe('');
    expect(excByKey.get(missingKey)).toMatchObject({ kind: 'MISSING_AT_PROVIDER', rail: 'breb', ours: { ourId: ids.failed!.our }, theirs: {} });
  });

  it('a third run of the same report opens nothing: still 2 breaks and 2 exceptions, last_seen_run_id moved to it', async () => {
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({ outcome: 'RECONCILED', breaks: { total: 2, opened: 0 } });
    const b = await breaks();
    expect(b).toHaveLength(2);
    for (const x of b) expect(x).toMatchObject({ run_id: discrepancyRun, last_seen_run_id: run.id });
    expect(await exceptions()).toHaveLength(2);
  });

  it('a trailer discrepancy: the run is REJECTED with its reason, nothing opened or seen', async () => {
    const before = await breaks();
    await inject({ kind: 'trailer', lines: 3 });
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({ outcome: 'REJECTED', rejectReason: 'TRAILER_MISMATCH', report: null, breaks: null });
    expect(run.detail).toMatch(/\S/);
    expect(await breaks()).toEqual(before);
    expect(await exceptions()).toHaveLength(2);
  });

  it('an unpublished date: the run is FAILED (ReportNotAvailableError, thrown by the source), recorded, nothing opened', async () => {
    const run = await useCase.run('breb', '2999-01-01');
    expect(run).toMatchObject({ rail: 'breb', date: '2999-01-01', outcome: 'FAILED', breaks: null, openedBeforeFailure: 0 });
    expect(run.detail).toMatch(/^ReportNotAvailableError/);
    expect(await runs.get(run.id)).toEqual(run);
  });

  it('the sandbox stopped: the run is FAILED with the fetch error, recorded; every run of the day is listed', async () => {
    await sandbox.stop();
    sandboxStopped = true;
    const run = await useCase.run('breb', D);
    expect(run).toMatchObject({ outcome: 'FAILED', breaks: null, openedBeforeFailure: 0 });
    expect(run.detail).toMatch(/^ReportFetchError/);
    expect((await runs.list('breb', D)).map((r) => r.outcome)).toEqual(['FAILED', 'REJECTED', 'RECONCILED', 'RECONCILED', 'RECONCILED']);
    expect(await breaks()).toHaveLength(2);
    expect(await exceptions()).toHaveLength(2);
  });
});
