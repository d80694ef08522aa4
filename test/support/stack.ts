import pg from 'pg';
import { checkInvariants, violationLines } from '@wallet/invariants';
import { ledgerV1 } from '@wallet/proto';
import { createAsyncClient, devMeshTls } from '@wallet/platform';
import { captureLogs, createTestDatabase, deleteNamespaceStreams, testNamespace, type CapturedLogs } from '@wallet/platform/testing';
import { startLedger } from '@wallet/ledger/testing';
import { startGateway } from '@wallet/gateway/testing';
import { checkDocumented } from './openapi-check.js';
import { freePort } from './ports.js';
import { startReconciliationDouble } from './reconciliation-double.js';

export { freePort };

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface StackOptions {
  gatewayEnv?: Record<string, string>;
  /** Also start the provider sandbox and the transfer service (transfers, rails, webhooks). */
  transfers?: boolean;
  /** Also start the pse-deposit service (implies the sandbox: PSE gateway, SMTP sink, and collect-key: /admin/exceptions merges both). */
  deposits?: boolean;
  /** Also start the collect-key service (implies the sandbox and the deposit listing). */
  collectKeys?: boolean;
  /** Also start the receipt service (its read model follows transfer.* and deposit.*). */
  receipts?: boolean;
  /** Also start the webhook service (outgoing webhooks: consumes transfer.*, deposit.*, collectkey.*). */
  webhooks?: boolean;
  /** Environment of the webhook service (e.g. short retry delays). */
  webhookEnv?: Record<string, string>;
  /**
   * Also start the reconciliation service (implies transfers, deposits and collect keys: it reads
   * their settled records, and the sandbox's reports at RECON_REPORTS_URL). No schedule
   * (RECON_SCHEDULE=off): runs start on demand. `E2E_RECONCILIATION=1` turns it on for every stack
   * that starts the sandbox (to run the existing suites with it).
   * Without it the gateway still needs a reconciliation (GET /admin/exceptions merges its money
   * exceptions with transfer's and pse-deposit's): `'double'` or the default start the in-memory TEST
   * DOUBLE of support/reconciliation-double.ts (real mTLS gRPC, empty unless a test seeds it, as
   * stack.reconciliationDouble); `'none'` gives the gateway none (those routes answer 503).
   */
  reconciliation?: boolean | 'double' | 'none';
  /** Environment of the reconciliation service (e.g. RECON_RETRY_BASE_MS). */
  reconciliationEnv?: Record<string, string>;
  sandboxEnv?: Record<string, string>;
  /** pse-deposit's environment (e.g. a short COBRO_MIN_TTL_SECONDS). */
  depositEnv?: Record<string, string>;
  /** collect-key's environment. */
  collectKeyEnv?: Record<string, string>;
  transferEnv?: Record<string, string>;
  /**
   * Capture every log line of every process of the stack at this level (e.g. 'trace'), whatever
   * level each is started with (they are 'silent' otherwise); read them with `logs()`.
   */
  captureLogs?: string;
}

/** The product as it runs (gateway → gRPC → services → Postgres/NATS, sandbox providers), in this process, on fresh data. */
export async function startStack(opts: StackOptions | Record<string, string> = {}) {
  const o: StackOptions =
    'gatewayEnv' in opts ||
    'transfers' in opts ||
    'deposits' in opts ||
    'collectKeys' in opts ||
    'receipts' in opts ||
    'webhooks' in opts ||
    'reconciliation' in opts ||
    'captureLogs' in opts
      ? { ...(opts as StackOptions) }
      : { gatewayEnv: opts as Record<string, string> };
  if (process.env.E2E_RECONCILIATION === '1' && !o.reconciliation && (o.transfers || o.deposits || o.collectKeys)) o.reconciliation = true;
  if (o.reconciliation === true) {
    o.transfers = true;
    o.collectKeys = true;
  }
  // Before any process starts: each creates its logger at start-up.
  const captured: CapturedLogs | undefined = o.captureLogs ? captureLogs(o.captureLogs) : undefined;
  const tdb = await createTestDatabase('e2e');
  const namespace = testNamespace();
  const ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
  const gatewayPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;

  let sandbox: { url: string; smtpPort?: number; stop(): Promise<void> } | undefined;
  let transfer: { address: string; stop(): Promise<void> } | undefined;
  let deposit: { address: string; stop(): Promise<void> } | undefined;
  let collectKey: { address: string; stop(): Promise<void> } | undefined;
  let receipt: { address: string; stop(): Promise<void>; rebuild(): Promise<void> } | undefined;
  let webhook: { address: string; stop(): Promise<void> } | undefined;
  let reconciliation: { address: string; stop(): Promise<void> } | undefined;
  if (o.collectKeys) o.deposits = true;
  // GET /admin/exceptions merges pse-deposit's money exceptions with collect-key's (inbound Bre-B
  // payments): a stack with deposits has both, as the product always does.
  if (o.deposits) o.collectKeys = true;
  if (o.transfers || o.deposits) {
    const { startSandbox } = await import('@wallet/sandbox/testing');
    sandbox = await startSandbox({
      databaseUrl: tdb.url,
      port: 0,
      env: { LOG_LEVEL: 'silent', SANDBOX_BREB_CONFIRM_MS: '300', SANDBOX_ACH_CONFIRM_MS: '500', SANDBOX_SMTP_PORT: '0', ...o.sandboxEnv },
    });
  }
  if (o.collectKeys) {
    const { startCollectKey } = await import('@wallet/collect-key/testing');
    collectKey = await startCollectKey({
      databaseUrl: tdb.url,
      natsUrl: NATS_URL,
      namespace,
      ledgerAddress: ledger.address,
      providerUrl: sandbox!.url,
      callbackUrl: `${gatewayUrl}/webhooks/breb/incoming`,
      port: 0,
      logLevel: process.env.E2E_CK_LOG ?? 'silent',
      ...(o.collectKeyEnv ? { env: o.collectKeyEnv } : {}),
    });
  }
  if (o.deposits) {
    const { startDeposit } = await import('@wallet/pse-deposit/testing');
    deposit = await startDeposit({
      databaseUrl: tdb.url,
      natsUrl: NATS_URL,
      namespace,
      ledgerAddress: ledger.address,
      ...(collectKey ? { collectKeyAddress: collectKey.address } : {}),
      providerUrl: sandbox!.url,
      smtpUrl: `smtp://127.0.0.1:${sandbox!.smtpPort}`,
      callbackUrl: `${gatewayUrl}/webhooks/pse`,
      port: 0,
      logLevel: process.env.E2E_DEP_LOG ?? 'silent',
      ...(o.depositEnv ? { env: o.depositEnv } : {}),
    });
  }
  if (o.receipts) {
    const { startReceipt } = await import('@wallet/receipt/testing');
    // every receipt's QR opens this stack's gateway's public verification page, as `npm run up` sets it
    receipt = await startReceipt({
      databaseUrl: tdb.url,
      natsUrl: NATS_URL,
      namespace,
      port: 0,
      logLevel: 'silent',
      env: { RECEIPT_VERIFY_BASE_URL: `${gatewayUrl}/receipts/verify` },
    });
  }
  if (o.webhooks) {
    const { startWebhook } = await import('@wallet/webhook/testing');
    webhook = await startWebhook({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent', env: { ...o.webhookEnv } });
  }
  if (o.transfers) {
    const { startTransfer } = await import('@wallet/transfer/testing');
    transfer = await startTransfer({
      databaseUrl: tdb.url,
      natsUrl: NATS_URL,
      namespace,
      ledgerAddress: ledger.address,
      providerUrl: sandbox!.url,
      callbackBaseUrl: `${gatewayUrl}/webhooks/rails`,
      port: 0,
      logLevel: 'silent',
      env: { ...o.transferEnv },
    });
  }
  if (o.reconciliation === true) {
    const { startReconciliation } = await import('@wallet/reconciliation/testing');
    reconciliation = await startReconciliation({
      databaseUrl: tdb.url,
      natsUrl: NATS_URL,
      namespace,
      ledgerAddress: ledger.address,
      transferAddress: transfer!.address,
      pseDepositAddress: deposit!.address,
      collectKeyAddress: collectKey!.address,
      reportsUrl: `${sandbox!.url}/sandbox/reports`,
      port: 0,
      logLevel: process.env.E2E_RECON_LOG ?? 'silent',
      env: { RECON_SCHEDULE: 'off', ...o.reconciliationEnv },
    });
  }

  const reconciliationDouble =
    o.reconciliation === undefined || o.reconciliation === false || o.reconciliation === 'double' ? await startReconciliationDouble() : undefined;
  const gatewayArgs = {
    databaseUrl: tdb.url,
    redisUrl: REDIS_URL,
    ledgerAddress: ledger.address,
    transferAddress: transfer?.address,
    depositAddress: deposit?.address,
    collectKeyAddress: collectKey?.address,
    receiptAddress: receipt?.address,
    webhookAddress: webhook?.address,
    reconciliationAddress: (reconciliation ?? reconciliationDouble)?.address,
    namespace,
    port: gatewayPort,
    // Its outbox (company.security_changed) on this run's streams; its mails to the sandbox's sink when there is one.
    natsUrl: NATS_URL,
    busNamespace: namespace,
    ...(sandbox?.smtpPort ? { smtpUrl: `smtp://127.0.0.1:${sandbox.smtpPort}` } : {}),
    // Every service runs inside this Jest process, whose VM-module sandbox makes some libraries far
    // slower than in a real process (qrcode's PNG: 2.3-2.9 s here against 40-120 ms in plain Node),
    // so on a loaded machine a 5 s gRPC deadline expired on the QR image (503). Tests check results,
    // not latency: a generous deadline (a test that needs a short one sets it).
    env: {
      LOG_LEVEL: process.env.E2E_GW_LOG ?? 'silent',
      RATE_LIMIT_PREFIX: namespace,
      GRPC_DEADLINE_MS: '30000',
      ...o.gatewayEnv,
    },
  };
  const gateway = await startGateway(gatewayArgs);
  const extraGateways: Array<Awaited<ReturnType<typeof startGateway>>> = [];
  /** Another replica of the gateway on the same database, services and streams (its own ports); `env` adds to the first one's. */
  async function extraGateway(env: Record<string, string> = {}) {
    const g = await startGateway({ ...gatewayArgs, port: 0, env: { ...gatewayArgs.env, GATEWAY_MIGRATE_ON_START: 'false', ...env } });
    extraGateways.push(g);
    return g;
  }
  // The invariant report, as an operator tool asks for it (mesh identity `ops`).
  const ledgerClient = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, {
    mesh: { tls: devMeshTls('ops'), server: 'ledger' },
    // The full check reads the whole journal; after the 5,000-line batch, on 2 loaded cores, it took over the
    // client's 5 s default (CI stop 57). Tests check its verdict, not its latency.
    deadlineMs: 120_000,
  });

  async function http(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: { type: string; data: string | Uint8Array } } = {},
  ) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.raw) headers['content-type'] = opts.raw.type;
    const payload = opts.raw ? opts.raw.data : opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const res = await fetch(`${gateway.url}${path}`, { method, headers, body: payload as string | undefined });
    const text = await res.text();
    // Every answer must be one GET /openapi.json declares (throws with the differences otherwise).
    const request = typeof payload === 'string' ? { contentType: headers['content-type'], text: payload } : undefined;
    await checkDocumented(gateway.url, { method, path, status: res.status, headers: res.headers, text, ...(request ? { request } : {}) });
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, body: json, text };
  }
  const admin = (method: string, path: string, body?: unknown) => http(method, path, { token: gateway.adminToken, body });

  async function provision(name: string, opts: { wallets?: string[]; taxRegime?: 'COMMON' | 'SIMPLE'; nit?: string } = {}) {
    const c = await admin('POST', '/admin/companies', {
      name,
      nit: opts.nit ?? `900${Math.floor(Math.random() * 1e6)}-1`,
      taxRegime: opts.taxRegime ?? 'COMMON',
      ...(opts.wallets ? { wallets: opts.wallets } : {}),
    });
    if (c.status !== 201) throw new Error(`provision failed: ${c.status} ${c.text}`);
    const w = await admin('POST', `/admin/companies/${c.body.id}/api-keys`, { scope: 'WRITE', label: 'e2e-write' });
    const r = await admin('POST', `/admin/companies/${c.body.id}/api-keys`, { scope: 'READ', label: 'e2e-read' });
    return { id: c.body.id as string, writeKey: w.body.key as string, readKey: r.body.key as string, raw: c.body };
  }

  /**
   * The cross-service money invariants (services/invariants: holds ⇔ transfers ⇔ the sandbox rail,
   * deposits, inbound payments, the journal, exceptions) over the services this stack runs, through
   * their read-only roles in one snapshot, plus the ledger's own CheckInvariants RPC over the mesh.
   * Live mode: work may still be in flight; only what no snapshot of a correct system shows fails.
   */
  async function invariants() {
    const rpc = await ledgerClient.checkInvariants({}, { requestId: 'e2e-invariants' });
    const client = new pg.Client({ connectionString: tdb.url });
    await client.connect();
    try {
      const report = await checkInvariants(client, { partial: true, rail: 'auto' });
      return { ...rpc, violations: [...rpc.violations, ...violationLines(report)], report };
    } finally {
      await client.end();
    }
  }

  /**
   * Every part is stopped even when one of them fails (a stop that throws must not leave the services
   * after it running past the test file, where their work meets a torn-down module registry); the first
   * failure is thrown at the end.
   */
  async function stop() {
    ledgerClient.close();
    const failures: unknown[] = [];
    const step = async (fn: (() => Promise<unknown>) | undefined) => {
      try {
        await fn?.();
      } catch (err) {
        failures.push(err);
      }
    };
    for (const g of extraGateways) await g.stop().catch(() => undefined); // a test may have stopped it already
    for (const s of [gateway, reconciliation, reconciliationDouble, webhook, transfer, receipt, collectKey, deposit, sandbox, ledger]) {
      await step(s && (() => s.stop()));
    }
    await step(() => deleteNamespaceStreams(NATS_URL, namespace));
    await step(() => tdb.drop());
    captured?.stop();
    if (failures.length > 0) throw failures[0];
  }

  /** Every captured log line so far (JSON text), with `captureLogs`; [] without. */
  const logs = (): string[] => captured?.lines() ?? [];

  return {
    gateway,
    ledger,
    ledgerClient,
    sandbox,
    receipt,
    reconciliation,
    reconciliationDouble,
    namespace,
    databaseUrl: tdb.url,
    http,
    admin,
    provision,
    invariants,
    extraGateway,
    stop,
    logs,
  };
}
