import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { AppError, ERRORS, createAsyncClient, type CallContext, type CompanyProfileClaims } from '@wallet/platform';
import { TEST_COMPANY_PROFILE, createTestDatabase, deleteNamespaceStreams, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { collectKeyV1, ledgerV1 } from '@wallet/proto';
import { startLedger, type StartedLedger } from '@wallet/ledger/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import { startCollectKey, type StartedCollectKey } from '../../src/testing.js';
import { ledgerAccess } from '@wallet/ledger/testing';
import { collectKeyAccess } from '../../src/grpc/collect-key.handlers.js';
import { policyClient } from '@wallet/platform/testing';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const { Rail, MovementType, FeeOperation } = ledgerV1;

type CollectKeyClient = ReturnType<typeof createAsyncClient<collectKeyV1.CollectKeyServiceServer>>;
type LedgerClient = ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;
type StartedSandbox = Awaited<ReturnType<typeof startSandbox>>;

/**
 * Receives the network's inbound-payment notifications as the gateway does (POST /webhooks/breb/incoming):
 * raw body + `x-provider-signature` → HandleIncomingPayment over gRPC; every delivery is kept.
 */
export class IncomingReceiver {
  private server: Server | undefined;
  url = '';
  client: CollectKeyClient | undefined;
  readonly received: Array<{ status: number; raw: Buffer; signature: string; body: Record<string, unknown>; reply: Record<string, unknown> }> = [];

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
          this.received.push({ status, raw, signature, body, reply: out });
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(out));
        };
        if (!this.client) {
          reply(503, { error: 'SERVICE_UNAVAILABLE' });
          return;
        }
        this.client.handleIncomingPayment({ rawBody: raw, signature }, { requestId: randomUUID() }).then(
          (r) => reply(200, { received: true, accepted: r.accepted, duplicate: r.duplicate }),
          (err: unknown) => {
            const e = err instanceof AppError ? err : new AppError('INTERNAL_ERROR');
            reply(ERRORS[e.code].http, { error: e.code });
          },
        );
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/webhooks/breb/incoming`;
  }

  forTransfer(id: string) {
    return this.received.filter((r) => r.body.providerTransferId === id);
  }

  async stop(): Promise<void> {
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

type GateMode = 'pass' | 'hold' | 'drop';

/**
 * Stands between the service and the sandbox's directory (BREB_DIRECTORY_URL) and can hold or lose
 * the directory's answer to a registration after the sandbox has applied it: `hold` forwards each
 * registration and keeps its answer until `release()`; `drop` forwards it and then cuts the
 * connection (the registration landed, the service never hears it). Everything else passes through.
 */
export class DirectoryGate {
  private server: Server | undefined;
  private mode: GateMode = 'pass';
  private held: Array<() => void> = [];
  url = '';
  /** Registrations the sandbox answered (forwarded), by key value. */
  readonly forwarded: string[] = [];

  constructor(private readonly target: string) {}

  set(mode: GateMode): void {
    this.mode = mode;
  }
  /** Answers every held registration and passes the next ones through. */
  release(): void {
    this.mode = 'pass';
    const held = this.held;
    this.held = [];
    for (const answer of held) answer();
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const registration = req.method === 'POST' && req.url === '/breb/directory/registrations';
        const mode = registration ? this.mode : 'pass';
        void fetch(`${this.target}${req.url ?? '/'}`, {
          method: req.method ?? 'GET',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          ...(body.length > 0 ? { body } : {}),
        }).then(
          async (up) => {
            const text = await up.text();
            if (registration) this.forwarded.push(String((JSON.parse(body.toString('utf8')) as { keyValue?: string }).keyValue));
            const answer = () => {
              res.writeHead(up.status, { 'content-type': 'application/json' }).end(text);
            };
            if (mode === 'drop') res.socket?.destroy();
            else if (mode === 'hold') this.held.push(answer);
            else answer();
          },
          () => res.socket?.destroy(),
        );
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  async stop(): Promise<void> {
    this.release();
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise<void>((r) => this.server!.close(() => r()));
    }
  }
}

export interface HarnessOptions {
  /** Extra collect-key environment (e.g. a longer SWEEPER_GRACE_SECONDS). */
  env?: Record<string, string>;
  /** Put a DirectoryGate between the service and the sandbox's directory. */
  gate?: boolean;
}

export interface Harness {
  gate: DirectoryGate | undefined;
  tdb: TestDatabase;
  ledger: StartedLedger;
  sandbox: StartedSandbox;
  service: StartedCollectKey;
  receiver: IncomingReceiver;
  client: CollectKeyClient;
  ledgerClient: LedgerClient;
  /**
   * A call for the company as the gateway makes it: an API key's principal carrying the company's
   * profile (the test profile, tax regime SIMPLE, unless `profile` overrides part of it). No company: no principal.
   */
  ctx(companyId?: string, profile?: Partial<CompanyProfileClaims>): CallContext;
  newCompany(): Promise<string>;
  sandboxPost(path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  sandboxGet(path: string): Promise<{ status: number; body: Record<string, unknown> }>;
  brebAvailable(companyId: string): Promise<bigint>;
  expectInvariants(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const tdb = await createTestDatabase('collect_key');
  const namespace = testNamespace();
  const ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent' });
  const sandbox = await startSandbox({
    databaseUrl: tdb.url,
    port: 0,
    env: { SANDBOX_SMTP_PORT: '0', SANDBOX_CALLBACK_RETRY_BASE_MS: '100', SANDBOX_CALLBACK_RETRY_MAX_MS: '500', SANDBOX_POLL_MS: '50' },
  });
  const receiver = new IncomingReceiver();
  await receiver.start();
  const gate = opts.gate ? new DirectoryGate(sandbox.url) : undefined;
  await gate?.start();
  const service = await startCollectKey({
    databaseUrl: tdb.url,
    natsUrl: NATS_URL,
    namespace,
    ledgerAddress: ledger.address,
    providerUrl: sandbox.url,
    callbackUrl: receiver.url,
    port: 0,
    env: {
      SWEEPER_INTERVAL_MS: '100',
      SWEEPER_GRACE_SECONDS: '1',
      PROVIDER_HTTP_TIMEOUT_MS: '2000',
      ...opts.env,
      ...(gate ? { BREB_DIRECTORY_URL: gate.url } : {}),
    },
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
  });
  // Tests check results, not latency: a QR PNG takes 2-3 s in Jest's VM sandbox alone, and a full run once
  // took it past 15 s beside the other lane (SERVICE_UNAVAILABLE on a deadline), so the deadline is generous.
  const client = policyClient<collectKeyV1.CollectKeyServiceServer>(
    collectKeyV1.CollectKeyServiceClient,
    service.address,
    'collect-key',
    collectKeyAccess,
    60_000,
  );
  receiver.client = client;
  const ledgerClient = policyClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, 'ledger', ledgerAccess, 15_000);
  const ctx = (companyId?: string, profile: Partial<CompanyProfileClaims> = {}): CallContext => {
    if (!companyId) return { requestId: randomUUID() };
    return {
      requestId: randomUUID(),
      companyId,
      principal: { kind: 'apikey', companyId, keyId: 'test-key', scope: 'WRITE', profile: { ...TEST_COMPANY_PROFILE, ...profile } },
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
    ledger,
    sandbox,
    service,
    receiver,
    gate,
    client,
    ledgerClient,
    ctx,
    async newCompany() {
      const co = `co-${randomUUID()}`;
      await ledgerClient.openWallets({ rails: [Rail.BREB, Rail.ACH] }, ctx(co));
      return co;
    },
    sandboxPost: (path, body) => http('POST', path, body ?? {}),
    sandboxGet: (path) => http('GET', path),
    async brebAvailable(co) {
      const r = await ledgerClient.getBalances({ ivaApplicable: false }, ctx(co));
      return r.wallets.find((w) => w.rail === Rail.BREB)?.availableCents ?? 0n;
    },
    async expectInvariants() {
      const r = await ledgerClient.checkInvariants({}, ctx());
      expect(r.violations).toEqual([]);
      expect(r.ok).toBe(true);
    },
    async stop() {
      client.close();
      ledgerClient.close();
      await service.stop();
      await gate?.stop();
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
