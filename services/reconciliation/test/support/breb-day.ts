import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devMeshTls } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, eventually, policyClient, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { ledgerV1, transferV1 } from '@wallet/proto';
import { ledgerAccess, startLedger } from '@wallet/ledger/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import { startTransfer, transferAccess } from '@wallet/transfer/testing';
import { GrpcOurRecords } from '../../src/adapters/grpc-our-records.js';
import { HttpReportSource } from '../../src/adapters/http-report-source.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const { Rail, FeeOperation } = ledgerV1;

/** The Bogotá day both sides of the harness settle on. */
export const D = '2025-03-14';
const bog = (time: string) => new Date(`${D}T${time}-05:00`).toISOString();

export interface BrebDay {
  tdb: TestDatabase;
  sandbox: Awaited<ReturnType<typeof startSandbox>>;
  /** Our books as the real transfer service serves them over gRPC (mesh identity `reconciliation`). */
  ours: GrpcOurRecords;
  /** The sandbox's settlement reports, streamed. */
  source: HttpReportSource;
  /** The two transfers of the day: our id and the provider's. */
  ids: { ok: { our: string; provider: string }; failed: { our: string; provider: string } };
  /** Adds a discrepancy to day D's Bre-B report (its id). */
  inject(body: Record<string, unknown>): Promise<string>;
  /** Removes a discrepancy (the provider corrected its report). */
  removeDiscrepancy(id: string): Promise<void>;
  /** The real services' gRPC addresses and the bus namespace they publish in. */
  transferAddress: string;
  ledgerAddress: string;
  namespace: string;
  /** Stops the sandbox early (a provider down); `stop` then leaves it. */
  stopSandbox(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Bre-B day on the real services: what the transfer integration harness starts (ledger, sandbox,
 * a callback receiver handing rail callbacks to transfer as the gateway does, transfer), two real
 * sends (one completed, one failed by the sandbox's 13 rule), moved on both sides to day D in
 * Bogotá as the provider settled them.
 */
export async function startBrebDay(prefix: string, opts: { connectTimeoutMs?: number } = {}): Promise<BrebDay> {
  const tdb = await createTestDatabase(prefix);
  const namespace = testNamespace();
  const ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
  const sandbox = await startSandbox({
    databaseUrl: tdb.url,
    port: 0,
    env: { SANDBOX_BREB_CONFIRM_MS: '150', SANDBOX_ACH_CONFIRM_MS: '3600000', SANDBOX_POLL_MS: '50' },
  });
  let gateway: ReturnType<typeof policyClient<transferV1.TransferServiceServer>> | undefined;
  const callbacks: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rail = (req.url ?? '').endsWith('/ach') ? Rail.ACH : Rail.BREB;
      gateway!
        .handleRailCallback({ rail, rawBody: Buffer.concat(chunks), signature: String(req.headers['x-provider-signature'] ?? '') }, { requestId: randomUUID() })
        .then(
          () => res.writeHead(200).end('{}'),
          () => res.writeHead(503).end('{}'),
        );
    });
  });
  const callbackBaseUrl = await new Promise<string>((r) =>
    callbacks.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/webhooks/rails`)),
  );
  const transfer = await startTransfer({
    databaseUrl: tdb.url,
    natsUrl: NATS_URL,
    namespace,
    ledgerAddress: ledger.address,
    providerUrl: sandbox.url,
    callbackBaseUrl,
    port: 0,
    env: { SWEEPER_INTERVAL_MS: '100', SWEEPER_GRACE_SECONDS: '1', RAIL_CONFIRM_TIMEOUT_SECONDS: '30', PROVIDER_HTTP_TIMEOUT_MS: '2000' },
  });
  gateway = policyClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, transfer.address, 'transfer', transferAccess, 30_000);
  const ledgerClient = policyClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, 'ledger', ledgerAccess, 15_000);
  const ours = new GrpcOurRecords({ mesh: devMeshTls('reconciliation'), transferAddress: transfer.address, batchSize: 1 });
  const source = new HttpReportSource({
    reportsUrl: `${sandbox.url}/sandbox/reports`,
    headersTimeoutMs: 10_000,
    idleTimeoutMs: 10_000,
    ...(opts.connectTimeoutMs ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
  });

  const sendBreb = async (companyId: string, amount: bigint): Promise<string> => {
    const ctx = { requestId: randomUUID(), companyId };
    const r = await gateway!.resolveKey({ keyValue: '3001234567', keyType: 'AUTO' }, ctx);
    if (!r.found) throw new Error('the sandbox directory did not resolve the test key');
    const sent = await gateway!.send(
      transferV1.SendRequest.fromPartial({
        amount,
        brebKey: { type: r.keyType, value: r.keyValue },
        targetName: r.recipient!.fullName,
        targetDocument: r.recipient!.idValue,
        requestHash: randomUUID(),
      }),
      ctx,
    );
    return sent.transfer!.id;
  };
  const row = async (id: string) =>
    (
      await transfer.db.query<{ state: string; provider_transfer_id: string | null }>(
        'select state, provider_transfer_id from transfer.transfers where id = ?::uuid',
        [id],
      )
    )[0];

  const co = randomUUID();
  const ctx = { requestId: randomUUID(), companyId: co };
  await ledgerClient.openWallets({ rails: [Rail.BREB, Rail.ACH] }, ctx);
  await ledgerClient.credit({ idempotencyKey: `seed-${co}`, rail: Rail.BREB, amountCents: 1_000_000n }, ctx);
  await ledgerClient.setFeeConfig({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 0n, variableBps: 0 }, { requestId: randomUUID() });
  const ok = await sendBreb(co, 150_000n);
  const failed = await sendBreb(co, 250_013n); // the sandbox's 13 rule: FAILED at the rail
  await eventually(async () => (await row(ok))?.state === 'COMPLETED' && (await row(failed))?.state === 'FAILED', 15_000);
  const ids = {
    ok: { our: ok, provider: (await row(ok))!.provider_transfer_id! },
    failed: { our: failed, provider: (await row(failed))!.provider_transfer_id! },
  };

  // Both sides to one Bogotá day: the provider's acceptance and outcome, and our settlement times.
  const move = async (id: string, accepted: string, outcome: string) => {
    await transfer.db.query('update sandbox.transfers set created_at = ?::timestamptz, outcome_at = ?::timestamptz where transaction_id = ?', [
      accepted,
      outcome,
      id,
    ]);
    await transfer.db.query(
      `update transfer.transfers set completed_at = case when state = 'COMPLETED' then ?::timestamptz end,
      finished_at = ?::timestamptz where id = ?::uuid`,
      [outcome, outcome, id],
    );
  };
  await move(ok, bog('08:00:00.000'), bog('08:00:03.250'));
  await move(failed, bog('09:00:00.000'), bog('09:00:03.000'));

  let sandboxStopped = false;
  return {
    tdb,
    sandbox,
    ours,
    source,
    ids,
    transferAddress: transfer.address,
    ledgerAddress: ledger.address,
    namespace,
    async inject(body) {
      const res = await fetch(`${sandbox.url}/sandbox/reports/breb/${D}/discrepancies`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`discrepancy not added: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    },
    async removeDiscrepancy(id) {
      const res = await fetch(`${sandbox.url}/sandbox/reports/breb/${D}/discrepancies/${encodeURIComponent(id)}`, { method: 'DELETE' });
      if (res.status >= 300) throw new Error(`discrepancy not removed: ${res.status} ${await res.text()}`);
    },
    async stopSandbox() {
      sandboxStopped = true;
      await sandbox.stop();
    },
    async stop() {
      ours.close();
      gateway?.close();
      ledgerClient.close();
      await transfer.stop();
      await new Promise<void>((r) => callbacks.close(() => r()));
      if (!sandboxStopped) await sandbox.stop();
      await ledger.stop();
      await deleteNamespaceStreams(NATS_URL, namespace);
      await tdb.drop();
    },
  };
}
