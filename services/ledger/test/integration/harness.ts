import { randomUUID } from 'node:crypto';
import { createAsyncClient, type AppError, type CallContext } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { ledgerV1 } from '@wallet/proto';
import { startLedger, type StartedLedger } from '../../src/testing.js';
import { ledgerAccess } from '../../src/grpc/ledger.handlers.js';
import { policyClient } from '@wallet/platform/testing';
import { createLogger } from '@wallet/platform';
import { JournalSealer } from '../../src/app/journal.js';
import { JournalStore } from '../../src/persistence/journal.store.js';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const { Rail, MovementStatus, MovementType, FeeOperation, HoldStatus, InflowSource } = ledgerV1;

type Client = ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;

/**
 * One ledger per test file: its own database and NATS namespace, the real gRPC server in this
 * process, and a client that sends complete messages (fromPartial) like any generated client.
 */
export interface Harness {
  ledger: StartedLedger;
  namespace: string;
  tdb: TestDatabase;
  client: Client;
  ctx(companyId?: string): CallContext;
  newCompany(): string;
  api: ReturnType<typeof api>;
  stop(): Promise<void>;
}

export async function startHarness(
  opts: { balanceAlertIntervalMs?: number; journalSealIntervalMs?: number; balanceCheckpoints?: 'off' } = {},
): Promise<Harness> {
  const tdb = await createTestDatabase('ledger');
  const namespace = testNamespace();
  const ledger = await startLedger({ databaseUrl: tdb.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'silent', ...opts });
  const client = policyClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, ledger.address, 'ledger', ledgerAccess, 15_000);
  return {
    ledger,
    namespace,
    tdb,
    client,
    ctx: (companyId) => ({ requestId: randomUUID(), ...(companyId ? { companyId } : {}) }),
    newCompany: () => randomUUID(),
    api: api(client),
    async stop() {
      client.close();
      await ledger.stop();
      await deleteNamespaceStreams(NATS_URL, namespace);
      await tdb.drop();
    },
  };
}

const ctxOf = (companyId?: string): CallContext => ({ requestId: randomUUID(), ...(companyId ? { companyId } : {}) });

/** Calls by company id with partial requests. */
function api(c: Client) {
  const L = ledgerV1;
  return {
    open: (co: string | undefined, rails = [Rail.BREB, Rail.ACH]) => c.openWallets(L.OpenWalletsRequest.fromPartial({ rails }), ctxOf(co)),
    balances: (co: string | undefined, ivaApplicable = false) => c.getBalances(L.GetBalancesRequest.fromPartial({ ivaApplicable }), ctxOf(co)),
    credit: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.CreditRequest>) =>
      c.credit(L.CreditRequest.fromPartial({ idempotencyKey: `credit-${randomUUID()}`, rail: Rail.BREB, ...r }), ctxOf(co)),
    chargeFee: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.ChargeFeeRequest>) =>
      c.chargeFee(
        L.ChargeFeeRequest.fromPartial({ idempotencyKey: `fee-${randomUUID()}`, rail: Rail.BREB, operation: FeeOperation.BREB_OUTFLOW, ...r }),
        ctxOf(co),
      ),
    reserve: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.ReserveRequest>) =>
      c.reserve(
        L.ReserveRequest.fromPartial({
          idempotencyKey: `reserve-${randomUUID()}`,
          rail: Rail.BREB,
          fee: zeroFee(),
          movement: { id: randomUUID(), status: MovementStatus.PENDING },
          ...r,
        }),
        ctxOf(co),
      ),
    commit: (co: string | undefined, holdId: string, key = `commit-${randomUUID()}`, expected?: ledgerV1.DeepPartial<ledgerV1.HoldExpectation>) =>
      c.commit(L.CommitRequest.fromPartial({ idempotencyKey: key, holdId, ...(expected ? { expected } : {}) }), ctxOf(co)),
    release: (co: string | undefined, holdId: string, r: ledgerV1.DeepPartial<ledgerV1.ReleaseRequest> = {}) =>
      c.release(L.ReleaseRequest.fromPartial({ idempotencyKey: `release-${randomUUID()}`, holdId, ...r }), ctxOf(co)),
    reserveReturn: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.ReserveReturnRequest>) =>
      c.reserveReturn(
        L.ReserveReturnRequest.fromPartial({
          idempotencyKey: `return-${randomUUID()}`,
          movement: { id: randomUUID(), status: MovementStatus.PENDING },
          ...r,
        }),
        ctxOf(co),
      ),
    commitReturn: (co: string | undefined, holdId: string, key = `return-commit-${randomUUID()}`) =>
      c.commitReturn(L.CloseReturnRequest.fromPartial({ idempotencyKey: key, holdId }), ctxOf(co)),
    releaseReturn: (co: string | undefined, holdId: string, key = `return-release-${randomUUID()}`, errorMessage?: string) =>
      c.releaseReturn(L.CloseReturnRequest.fromPartial({ idempotencyKey: key, holdId, ...(errorMessage ? { errorMessage } : {}) }), ctxOf(co)),
    setStatus: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.SetMovementStatusRequest>) =>
      c.setMovementStatus(L.SetMovementStatusRequest.fromPartial(r), ctxOf(co)),
    setStatuses: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.SetMovementStatusesRequest>) =>
      c.setMovementStatuses(L.SetMovementStatusesRequest.fromPartial(r), ctxOf(co)),
    inflow: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.RecordInflowRequest>) =>
      c.recordInflow(L.RecordInflowRequest.fromPartial({ idempotencyKey: `inflow-${randomUUID()}`, assign: true, ...r }), ctxOf(co)),
    /** A PSE inflow of 100,000 (fee 1,000 + IVA 190: 98,810 credited to ACH) under `key`. */
    pseInflow: (co: string | undefined, key: string) =>
      c.recordInflow(
        L.RecordInflowRequest.fromPartial({
          idempotencyKey: key,
          assign: true,
          source: InflowSource.PSE,
          grossCents: 100_000n,
          fee: fee(1_000n, 0n, 190n),
          movement: { id: randomUUID(), status: MovementStatus.UNSPECIFIED },
        }),
        ctxOf(co),
      ),
    reverseInflow: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.ReverseInflowRequest>) =>
      c.reverseInflow(L.ReverseInflowRequest.fromPartial({ idempotencyKey: `reverse-${randomUUID()}`, ...r }), ctxOf(co)),
    computeFees: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.ComputeFeesRequest>) =>
      c.computeFees(L.ComputeFeesRequest.fromPartial(r), ctxOf(co)),
    setFee: (r: ledgerV1.DeepPartial<ledgerV1.SetFeeConfigRequest>) => c.setFeeConfig(L.SetFeeConfigRequest.fromPartial(r), ctxOf()),
    list: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.ListMovementsRequest> = {}) =>
      c.listMovements(L.ListMovementsRequest.fromPartial(r), ctxOf(co)),
    movement: (co: string | undefined, id: string) => c.getMovement(L.GetMovementRequest.fromPartial({ id }), ctxOf(co)),
    move: (co: string | undefined, r: ledgerV1.DeepPartial<ledgerV1.MoveRequest>) =>
      c.move(L.MoveRequest.fromPartial({ idempotencyKey: `move-${randomUUID()}`, fromRail: Rail.ACH, toRail: Rail.BREB, ...r }), ctxOf(co)),
    getMove: (co: string | undefined, moveId: string) => c.getMove(L.GetMoveRequest.fromPartial({ moveId }), ctxOf(co)),
    invariants: () => c.checkInvariants({}, ctxOf()),
    verifyJournal: (r: ledgerV1.DeepPartial<ledgerV1.VerifyJournalRequest> = {}) => c.verifyJournal(L.VerifyJournalRequest.fromPartial(r), ctxOf()),
    journalHeads: (co: string, fromDay: string, toDay: string) => c.getJournalHeads(L.GetJournalHeadsRequest.fromPartial({ fromDay, toDay }), ctxOf(co)),
  };
}

/** A new company with both wallets open, credited `breb` and `ach` (none when 0). */
export async function fundedCompany(h: Harness, breb: bigint, ach: bigint): Promise<string> {
  const co = h.newCompany();
  await h.api.open(co);
  if (breb > 0n) await h.api.credit(co, { rail: Rail.BREB, amountCents: breb });
  if (ach > 0n) await h.api.credit(co, { rail: Rail.ACH, amountCents: ach });
  return co;
}

export function zeroFee(): ledgerV1.FeeBreakdown {
  return { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 0n };
}

export function fee(fixed: bigint, variable: bigint, iva: bigint): ledgerV1.FeeBreakdown {
  return {
    fixedFee: fixed,
    variableFee: variable,
    subtotalFee: fixed + variable,
    ivaApplicable: iva > 0n,
    ivaAmount: iva,
    totalCharged: fixed + variable + iva,
  };
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

export function walletOf(wallets: ledgerV1.Wallet[], rail: ledgerV1.Rail): ledgerV1.Wallet {
  const w = wallets.find((x) => x.rail === rail);
  if (!w) throw new Error(`no ${rail} wallet`);
  return w;
}

/**
 * The ledger's invariants, checked twice: by the service's own CheckInvariants, and here,
 * independently, from the raw rows: all entries sum to 0, each posting sums to 0, each wallet's
 * available/pending equal its accounts' entries, and its version equals the postings touching it.
 */
export async function expectLedgerConsistent(h: Harness): Promise<void> {
  const report = await h.api.invariants();
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
  // the tamper-evident journal (docs/journal.md): every posting sealed or queued, every seal intact
  const journal = await h.api.verifyJournal();
  expect({ firstBroken: journal.firstBroken, outside: journal.outsideJournal }).toEqual({ firstBroken: undefined, outside: [] });
  expect(journal.ok).toBe(true);

  const db = h.ledger.db;
  const entries = await db.query<{ posting_id: string; account: string; amount: string }>(
    'select posting_id::text as posting_id, account, amount::text as amount from ledger.entries',
  );
  const wallets = await db.query<{ company_id: string; rail: string; available_cents: string; pending_out_cents: string; version: string }>(
    'select company_id, rail, available_cents::text as available_cents, pending_out_cents::text as pending_out_cents, version::text as version from ledger.wallets',
  );
  const [{ n: postingCount } = { n: '0' }] = await db.query<{ n: string }>("select count(*)::text as n from ledger.postings where kind <> 'void'");

  let total = 0n;
  const perPosting = new Map<string, bigint>();
  const perAccount = new Map<string, bigint>();
  const touching = new Map<string, Set<string>>();
  for (const e of entries) {
    const a = BigInt(e.amount);
    total += a;
    perPosting.set(e.posting_id, (perPosting.get(e.posting_id) ?? 0n) + a);
    perAccount.set(e.account, (perAccount.get(e.account) ?? 0n) + a);
    const m = /^wallet_(?:available|pending_out):(.+):(BREB|ACH)$/.exec(e.account);
    if (m) {
      const key = `${m[1]}:${m[2]}`;
      if (!touching.has(key)) touching.set(key, new Set());
      touching.get(key)!.add(e.posting_id);
    }
  }
  expect(total).toBe(0n);
  expect(perPosting.size).toBe(Number(postingCount));
  for (const [posting, sum] of perPosting) expect({ posting, sum }).toEqual({ posting, sum: 0n });
  for (const w of wallets) {
    const key = `${w.company_id}:${w.rail}`;
    expect({ key, available: BigInt(w.available_cents), pending: BigInt(w.pending_out_cents), version: BigInt(w.version) }).toEqual({
      key,
      available: perAccount.get(`wallet_available:${key}`) ?? 0n,
      pending: perAccount.get(`wallet_pending_out:${key}`) ?? 0n,
      version: BigInt(touching.get(key)?.size ?? 0),
    });
  }
}

/** A single count(*) from the ledger's database. */
export async function countRows(h: Harness, sql: string, params: unknown[] = []): Promise<number> {
  const rows = await h.ledger.db.query<{ n: string }>(sql, params);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Seals every committed posting now (docs/journal.md). A test that damages rows by hand calls it
 * first: a posting sealed while damaged would be sealed as damaged, and fail verification once repaired.
 */
export async function sealJournal(h: Harness): Promise<void> {
  const sealer = new JournalSealer(
    new JournalStore(h.ledger.db),
    { newId: randomUUID, now: () => new Date() },
    { intervalMs: 3_600_000 },
    createLogger('test', 'silent'),
  );
  // another sealer may hold the lock (the service's own): drain until the queue is empty
  for (let i = 0; i < 100 && (await countRows(h, 'select count(*) as n from ledger.journal_queue')) > 0; i++) {
    await sealer.drain();
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(await countRows(h, 'select count(*) as n from ledger.journal_queue')).toBe(0);
}
