import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { AppError, ERRORS, createAsyncClient, type CallContext, type CompanyProfileClaims } from '@wallet/platform';
import { TEST_COMPANY_PROFILE, createTestDatabase, deleteNamespaceStreams, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { depositV1, ledgerV1 } from '@wallet/proto';
import { startLedger, type StartedLedger } from '@wallet/ledger/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import { startDeposit, type StartedDeposit } from '../../src/testing.js';
import { depositAccess } from '../../src/grpc/deposit.handlers.js';
import { ledgerAccess } from '@wallet/ledger/testing';
import { policyClient } from '@wallet/platform/testing';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const { Rail, MovementType, MovementStatus, FeeOperation } = ledgerV1;

type DepositClient = ReturnType<typeof createAsyncClient<depositV1.DepositServiceServer>>;
type LedgerClient = ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;
type StartedSandbox = Awaited<ReturnType<typeof startSandbox>>;

/**
 * Receives the PSE provider's callbacks exactly as the gateway does (POST /webhooks/pse): the raw
 * body and the `x-provider-signature` header go to HandlePseCallback over gRPC. Every delivery is kept
 * (raw bytes + signature) so a test can replay one.
 */
export class CallbackReceiver {
  private server: Server | undefined;
  url = '';
  readonly received: Array<{ status: number; raw: Buffer; signature: string; body: Record<string, unknown>; duplicate?: boolean }> = [];
  client: DepositClient | undefined;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const signature = String(req.headers['x-provider-signature'] ?? '');
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        } catch {
          /* kept empty */
        }
        const reply = (status: number, out: Record<string, unknown>) => {
          this.received.push({ status, raw, signature, body, ...(typeof out.duplicate === 'boolean' ? { duplicate: out.duplicate } : {}) });
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(out));
        };
        if (!this.client) {
          reply(503, { error: 'SERVICE_UNAVAILABLE' });
          return;
        }
        this.client.handlePseCallback({ rawBody: raw, signature }, { requestId: randomUUID() }).then(
          (r) => reply(200, { received: true, duplicate: r.duplicate }),
          (err: unknown) => {
            const e = err instanceof AppError ? err : new AppError('INTERNAL_ERROR');
            reply(ERRORS[e.code].http, { error: e.code });
          },
        );
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/webhooks/pse`;
  }

  forDeposit(id: string) {
    return this.received.filter((r) => r.body.depositId === id);
  }

  async stop(): Promise<void> {
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

export interface Harness {
  tdb: TestDatabase;
  namespace: string;
  ledger: StartedLedger;
  sandbox: StartedSandbox;
  deposit: StartedDeposit;
  receiver: CallbackReceiver;
  client: DepositClient;
  ledgerClient: LedgerClient;
  /**
   * A call for the company as the gateway makes it: an API key's principal carrying the company's
   * profile (DEFAULT_PROFILE unless `profile` overrides part of it). No company: no principal.
   */
  ctx(companyId?: string, profile?: Partial<CompanyProfileClaims>): CallContext;
  /** A company with ACH + BREB wallets and its own PSE_INFLOW fee (fixed 1,000, 0 bps). */
  newCompany(): Promise<string>;
  sandboxPost(path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  sandboxGet(path: string): Promise<{ status: number; body: Record<string, unknown> }>;
  achAvailable(companyId: string): Promise<bigint>;
  expectInvariants(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(opts: { depositEnv?: Record<string, string> } = {}): Promise<Harness> {
  const tdb = await createTestDatabase('pse_deposit');
  const namespace = testNamespace();
  const ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
  const sandbox = await startSandbox({
    databaseUrl: tdb.url,
    port: 0,
    env: { SANDBOX_SMTP_PORT: '0', SANDBOX_CALLBACK_RETRY_BASE_MS: '100', SANDBOX_CALLBACK_RETRY_MAX_MS: '500', SANDBOX_POLL_MS: '50' },
  });
  const receiver = new CallbackReceiver();
  await receiver.start();
  const deposit = await startDeposit({
    databaseUrl: tdb.url,
    natsUrl: NATS_URL,
    namespace,
    ledgerAddress: ledger.address,
    providerUrl: sandbox.url,
    smtpUrl: `smtp://127.0.0.1:${sandbox.smtpPort}`,
    callbackUrl: receiver.url,
    port: 0,
    env: { SWEEPER_INTERVAL_MS: '100', SWEEPER_GRACE_SECONDS: '1', PSE_PAID_GRACE_SECONDS: '0', PROVIDER_HTTP_TIMEOUT_MS: '2000', ...opts.depositEnv },
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
  });
  const client = policyClient<depositV1.DepositServiceServer>(depositV1.DepositServiceClient, deposit.address, 'pse-deposit', depositAccess, 15_000);
  receiver.client = client;
  const ledgerClient = policyClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, 'ledger', ledgerAccess, 15_000);
  const ctx = (companyId?: string, profile: Partial<CompanyProfileClaims> = {}): CallContext => {
    if (!companyId) return { requestId: randomUUID() };
    return {
      requestId: randomUUID(),
      companyId,
      principal: { kind: 'apikey', companyId, keyId: 'test-key', scope: 'WRITE', profile: { ...DEFAULT_PROFILE, ...profile } },
    };
  };
  const http = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  return {
    tdb,
    namespace,
    ledger,
    sandbox,
    deposit,
    receiver,
    client,
    ledgerClient,
    ctx,
    async newCompany() {
      const co = `co-${randomUUID()}`;
      await ledgerClient.openWallets({ rails: [Rail.BREB, Rail.ACH] }, ctx(co));
      await ledgerClient.setFeeConfig({ operation: FeeOperation.PSE_INFLOW, companyId: co, fixedFeeCents: 1_000n, variableBps: 0 }, ctx());
      return co;
    },
    sandboxPost: (path, body) => http('POST', path, body ?? {}),
    sandboxGet: (path) => http('GET', path),
    async achAvailable(co) {
      const r = await ledgerClient.getBalances({ ivaApplicable: true }, ctx(co));
      return r.wallets.find((w) => w.rail === Rail.ACH)?.availableCents ?? 0n;
    },
    async expectInvariants() {
      const r = await ledgerClient.checkInvariants({}, ctx());
      expect(r.violations).toEqual([]);
      expect(r.ok).toBe(true);
    },
    async stop() {
      client.close();
      ledgerClient.close();
      await deposit.stop();
      await receiver.stop();
      await sandbox.stop();
      await ledger.stop();
      await deleteNamespaceStreams(NATS_URL, namespace);
      await tdb.drop();
    },
  };
}

export async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected the call to fail');
}

/** The profile the gateway signs for the test companies unless a test says otherwise: tax regime COMMON (IVA applies). */
export const DEFAULT_PROFILE: CompanyProfileClaims = { ...TEST_COMPANY_PROFILE, name: 'Acme S.A.S.', ivaApplicable: true };

export const payer = (over: Partial<depositV1.CreatePseDepositRequest> = {}): depositV1.CreatePseDepositRequest => ({
  amountCents: 100_000n,
  payerDocumentTypeId: 1,
  payerDocumentNumber: '1020304050',
  payerFirstName: 'Ana María',
  payerLastName: 'Pérez',
  payerEmail: 'ana@example.com',
  payerPhone: '3001234567',
  internalRef: 'pedido-1',
  ...over,
});
