import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { AppError, ERRORS, createAsyncClient, type CallContext } from '@wallet/platform';
import { SANDBOX_ACH_ACCOUNT, createTestDatabase, deleteNamespaceStreams, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { ledgerV1, transferEventsV1, transferV1 } from '@wallet/proto';
import { startLedger, type StartedLedger } from '@wallet/ledger/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import type { TransferSettings } from '../../src/app/deps.js';
import { TransferDataProtection } from '../../src/persistence/data-protection.js';
import { startTransfer, type StartedTransfer } from '../../src/testing.js';
import { ledgerAccess } from '@wallet/ledger/testing';
import { transferAccess } from '../../src/grpc/transfer.handlers.js';
import { policyClient } from '@wallet/platform/testing';
import { EMPTY_PROFILE, type CompanyProfile } from '../../src/app/send-input.js';
import { SECRET_VARIABLES } from '@wallet/platform';

/** The data protection a test transfer service uses (NODE_ENV=test: the development TRANSFER_DATA_KEY), for stores built by hand. */
export const testProtection = new TransferDataProtection(SECRET_VARIABLES.TRANSFER_DATA_KEY.dev);

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const { Rail, MovementStatus, FeeOperation } = ledgerV1;

type TransferClient = ReturnType<typeof createAsyncClient<transferV1.TransferServiceServer>>;
type LedgerClient = ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;
type StartedSandbox = Awaited<ReturnType<typeof startSandbox>>;

/** Short delays so a whole scenario runs in about a second. */
export const SANDBOX_ENV = { SANDBOX_BREB_CONFIRM_MS: '150', SANDBOX_ACH_CONFIRM_MS: '250' };
export const TRANSFER_ENV: Record<string, string> = {
  SWEEPER_INTERVAL_MS: '100',
  SWEEPER_GRACE_SECONDS: '1',
  RAIL_DISPATCH_RETRY_BASE_MS: '150',
  RAIL_DISPATCH_RETRY_MAX_MS: '600',
  RAIL_CONFIRM_TIMEOUT_SECONDS: '30',
  PROVIDER_HTTP_TIMEOUT_MS: '2000',
};

/**
 * Receives the providers' callbacks exactly as the gateway does (POST /webhooks/rails/{rail}):
 * the raw body and the `x-provider-signature` header go to HandleRailCallback over gRPC.
 */
export class CallbackReceiver {
  private server: Server | undefined;
  url = '';
  readonly received: Array<{ rail: string; status: number; body: string }> = [];
  client: TransferClient | undefined;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const rail = (req.url ?? '').endsWith('/ach') ? Rail.ACH : Rail.BREB;
        const signature = String(req.headers['x-provider-signature'] ?? '');
        const reply = (status: number, body: unknown) => {
          this.received.push({ rail, status, body: raw.toString('utf8') });
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        };
        if (!this.client) {
          reply(503, { error: 'SERVICE_UNAVAILABLE' });
          return;
        }
        this.client.handleRailCallback({ rail, rawBody: raw, signature }, { requestId: randomUUID() }).then(
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
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/webhooks/rails`;
  }

  async stop(): Promise<void> {
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

export interface HarnessOptions {
  transferEnv?: Record<string, string>;
  sandboxEnv?: Record<string, string>;
  /** false: the test starts (and stops) its own transfer instances. */
  startTransferService?: boolean;
}

export interface Harness {
  tdb: TestDatabase;
  namespace: string;
  ledger: StartedLedger;
  sandbox: StartedSandbox;
  receiver: CallbackReceiver;
  transfer: StartedTransfer | undefined;
  client: TransferClient;
  ledgerClient: LedgerClient;
  /** Starts a transfer instance on the same database, bus, ledger and sandbox (and points the client at it). */
  startTransferInstance(env?: Record<string, string>): Promise<StartedTransfer>;
  /** Stops every running transfer instance (gracefully). */
  stopTransferInstances(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const tdb = await createTestDatabase('transfer');
  const namespace = testNamespace();
  const ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { ...SANDBOX_ENV, ...opts.sandboxEnv } });
  const receiver = new CallbackReceiver();
  await receiver.start();
  const ledgerClient = policyClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, 'ledger', ledgerAccess, 15_000);
  const instances: StartedTransfer[] = [];
  const h: Harness = {
    tdb,
    namespace,
    ledger,
    sandbox,
    receiver,
    ledgerClient,
    transfer: undefined,
    client: undefined as unknown as TransferClient,
    async startTransferInstance(env = {}) {
      const t = await startTransfer({
        databaseUrl: tdb.url,
        natsUrl: NATS_URL,
        namespace,
        ledgerAddress: ledger.address,
        providerUrl: sandbox.url,
        callbackBaseUrl: receiver.url,
        port: 0,
        env: { ...TRANSFER_ENV, ...opts.transferEnv, ...env },
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      });
      instances.push(t);
      h.client?.close?.();
      h.client = policyClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, t.address, 'transfer', transferAccess, 30_000);
      receiver.client = h.client;
      h.transfer = t;
      return t;
    },
    async stopTransferInstances() {
      for (const t of instances.splice(0)) await t.stop();
    },
    async stop() {
      h.client?.close?.();
      for (const t of instances) await t.stop();
      await receiver.stop();
      await sandbox.stop();
      ledgerClient.close();
      await ledger.stop();
      await deleteNamespaceStreams(NATS_URL, namespace);
      await tdb.drop();
    },
  };
  if (opts.startTransferService !== false) await h.startTransferInstance();
  return h;
}

/**
 * Settings for use cases wired by hand (the saga tests): no grace, no back-off, limits out of the
 * way, so every step is due at once and only the order of the steps decides the outcome.
 */
export function sagaSettings(callbackSecret: string, o: Partial<TransferSettings> = {}): TransferSettings {
  return {
    idempotencyWindowSeconds: 60,
    dispatchTimeoutSeconds: 300,
    confirmTimeoutSeconds: 300,
    dispatchRetryBaseMs: 0,
    dispatchRetryMaxMs: 0,
    sweeperGraceSeconds: 0,
    counterpartyDailyLimit: 10n ** 15n,
    counterpartyMonthlyLimit: 10n ** 15n,
    callbackBaseUrl: 'http://127.0.0.1:1/rails',
    callbackSecret,
    duplicateWaitMs: 1_000,
    resolvedKeyTtlSeconds: 600,
    approvalTtlSeconds: 3600,
    ...o,
  };
}

// ───────────────────────────── helpers used by every test file ─────────────────────────────

/** Each test company's profile, as the gateway would sign it into the caller context of its calls. */
const profiles = new Map<string, CompanyProfile>();

/**
 * The context of a call for a company's API key: the principal (with the company's profile, or
 * `profile` to override it) is what the test client signs, as the gateway does; no company: an operator.
 */
export const ctxOf = (companyId?: string, apiKeyId?: string, profile?: CompanyProfile): CallContext => {
  if (!companyId) return { requestId: randomUUID() };
  const p = profile ?? profiles.get(companyId) ?? EMPTY_PROFILE;
  return {
    requestId: randomUUID(),
    companyId,
    ...(apiKeyId ? { apiKeyId } : {}),
    principal: { kind: 'apikey', companyId, keyId: apiKeyId ?? 'test-key', scope: 'WRITE', profile: { ...p, name: 'Empresa de Pruebas S.A.S.' } },
  };
};

/** The context of a dashboard user of the company (who signs and rejects approvals), with the company's profile as the gateway signs it. */
export const userCtxOf = (companyId: string, user: { userId: string; email: string; role: string }): CallContext => {
  const p = profiles.get(companyId);
  return {
    requestId: randomUUID(),
    companyId,
    principal: { kind: 'user', companyId, ...user, ...(p ? { profile: { ...p, name: 'Empresa de Pruebas S.A.S.' } } : {}) },
  };
};

export interface CompanySetup {
  id: string;
  profile: CompanyProfile;
}

/** A company with both wallets open and funded, and (optionally) its own fee configuration. */
export async function newCompany(
  h: Harness,
  o: {
    breb?: bigint;
    ach?: bigint;
    iva?: boolean;
    nit?: string;
    multiSig?: number;
    daily?: bigint;
    monthly?: bigint;
    brebFee?: [bigint, number];
    achFee?: [bigint, number];
    rails?: ledgerV1.Rail[];
  } = {},
): Promise<CompanySetup> {
  const id = randomUUID();
  const rails = o.rails ?? [Rail.BREB, Rail.ACH];
  if (rails.length > 0) await h.ledgerClient.openWallets({ rails }, ctxOf(id));
  if (o.breb) await h.ledgerClient.credit({ idempotencyKey: `seed-breb-${id}`, rail: Rail.BREB, amountCents: o.breb }, ctxOf(id));
  if (o.ach) await h.ledgerClient.credit({ idempotencyKey: `seed-ach-${id}`, rail: Rail.ACH, amountCents: o.ach }, ctxOf(id));
  const fee = o.brebFee ?? [0n, 0];
  await h.ledgerClient.setFeeConfig({ operation: FeeOperation.BREB_OUTFLOW, companyId: id, fixedFeeCents: fee[0], variableBps: fee[1] }, ctxOf());
  const afee = o.achFee ?? [0n, 0];
  await h.ledgerClient.setFeeConfig({ operation: FeeOperation.ACH_OUTFLOW, companyId: id, fixedFeeCents: afee[0], variableBps: afee[1] }, ctxOf());
  const profile: CompanyProfile = {
    nit:
      o.nit ??
      `900${Math.floor(Math.random() * 1e6)
        .toString()
        .padStart(6, '0')}-1`,
    ivaApplicable: o.iva ?? false,
    multiSigThreshold: o.multiSig ?? 0,
    counterpartyDailyLimitCents: o.daily ?? 0n,
    counterpartyMonthlyLimitCents: o.monthly ?? 0n,
  };
  profiles.set(id, profile);
  return { id, profile };
}

export async function wallet(h: Harness, companyId: string, rail: ledgerV1.Rail): Promise<{ available: bigint; pending: bigint }> {
  const res = await h.ledgerClient.getBalances({ ivaApplicable: false }, ctxOf(companyId));
  const w = res.wallets.find((x) => x.rail === rail);
  if (!w) throw new Error(`no ${rail} wallet`);
  return { available: w.availableCents, pending: w.pendingOutCents };
}

export async function resolve(h: Harness, companyId: string, keyValue: string, keyType = 'AUTO') {
  return h.client.resolveKey({ keyValue, keyType }, ctxOf(companyId));
}

/** A BREB send request to a key, with the holder the directory reports (resolve-key first, as a client does). */
export async function brebSend(
  h: Harness,
  co: CompanySetup,
  keyValue: string,
  amount: bigint,
  extra: Partial<transferV1.SendRequest> = {},
): Promise<transferV1.SendRequest> {
  const r = await resolve(h, co.id, keyValue);
  if (!r.found) throw new Error(`key ${keyValue} not found: ${r.errorCode}`);
  return transferV1.SendRequest.fromPartial({
    amount,
    brebKey: { type: r.keyType, value: r.keyValue },
    targetName: r.recipient!.fullName,
    targetDocument: r.recipient!.idValue,
    requestHash: randomUUID(),
    ...extra,
  });
}

export const ACH_ACCOUNT = {
  ...SANDBOX_ACH_ACCOUNT,
  bankName: 'Bancolombia',
  bankAchCode: '1007',
};

export function achSend(
  co: CompanySetup,
  amount: bigint,
  extra: Partial<transferV1.SendRequest> = {},
  account: Partial<typeof ACH_ACCOUNT> = {},
): transferV1.SendRequest {
  return transferV1.SendRequest.fromPartial({
    amount,
    bankAccount: { ...ACH_ACCOUNT, ...account },
    requestHash: randomUUID(),
    ...extra,
  });
}

export async function send(h: Harness, co: CompanySetup, req: transferV1.SendRequest, apiKeyId?: string) {
  return h.client.send(req, ctxOf(co.id, apiKeyId));
}

/** The AppError a call fails with (its catalogue code survives the gRPC hop). */
export async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected the call to fail');
}

export async function transferRow(h: Harness, id: string): Promise<Record<string, unknown> | undefined> {
  const rows = await h.ledger.db.query<Record<string, unknown>>('select * from transfer.transfers where id = ?::uuid', [id]);
  return rows[0];
}

export async function stateOf(h: Harness, id: string): Promise<string | undefined> {
  return (await transferRow(h, id))?.state as string | undefined;
}

export async function waitForState(h: Harness, id: string, states: string[], timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stateOf(h, id);
    if (s && states.includes(s)) return s;
    if (Date.now() > deadline) throw new Error(`transfer ${id} is ${s}, expected one of ${states.join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function setFaults(h: Harness, faults: Record<string, 'up' | 'down'>): Promise<void> {
  const res = await fetch(`${h.sandbox.url}/sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults) });
  if (res.status !== 200) throw new Error(`faults: ${res.status}`);
}

/** The ledger's own invariant check (LEDGER.md 1-5). */
export async function expectLedgerOk(h: Harness): Promise<void> {
  const report = await h.ledgerClient.checkInvariants({}, ctxOf());
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
}

/**
 * Every transfer.* event in this file's stream, decoded. Read from JetStream (what subscribers
 * get), so a duplicate publish that JetStream dropped does not show.
 */
export async function streamEvents(h: Harness): Promise<Array<{ subject: string; event: transferEventsV1.TransferEvent }>> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    const stream = `${h.namespace.toUpperCase()}_TRANSFERS`;
    const info = await jsm.streams.info(stream);
    const out: Array<{ subject: string; event: transferEventsV1.TransferEvent }> = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      if (!m) continue;
      out.push({ subject: m.subject.slice(h.namespace.length + 1), event: transferEventsV1.TransferEvent.fromJSON(m.json()) });
    }
    return out;
  } finally {
    await nc.close();
  }
}

export async function eventsOf(h: Harness, transferId: string): Promise<string[]> {
  return (await streamEvents(h)).filter((e) => e.event.transferId === transferId).map((e) => e.subject);
}

/** The transfer's events, each exactly once and in order (polls while the relay catches up). */
export async function expectEvents(h: Harness, id: string, expected: string[], timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && (await eventsOf(h, id)).length < expected.length) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 250)); // and nothing more arrives
  expect(await eventsOf(h, id)).toEqual(expected);
}
