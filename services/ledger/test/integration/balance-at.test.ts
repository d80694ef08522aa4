import { instantFromDate } from '@wallet/platform';
import { randomUUID } from 'node:crypto';
import { meshClient } from '@wallet/platform/testing';
import { ledgerV1 } from '@wallet/proto';
import { Rail, expectLedgerConsistent, failure, fee, startHarness, walletOf, zeroFee, type Harness } from './harness.js';

/**
 * GetBalanceAt over the real gRPC server (mutual TLS, the `gateway` identity) on a real Postgres:
 * a wallet's balance at instants before, between and after its postings is the journal up to then,
 * and at "now" it equals the wallet row.
 */
describe("GetBalanceAt: a wallet's balance at a past instant, from the journal", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  const ctx = (co?: string) => ({ requestId: randomUUID(), ...(co ? { companyId: co } : {}) });
  const at = (co: string | undefined, rail: ledgerV1.Rail, instant: Date | string | undefined) =>
    h.client.getBalanceAt(
      ledgerV1.GetBalanceAtRequest.fromPartial({ rail, ...(instant ? { at: typeof instant === 'string' ? instant : instantFromDate(instant) } : {}) }),
      ctx(co),
    );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** An instant strictly after everything committed so far and strictly before anything that follows. */
  const mark = async (): Promise<Date> => {
    await sleep(5);
    const t = new Date();
    await sleep(5);
    return t;
  };

  it('is zero before the first posting, then follows every posting: credit, reserve (pending), commit, release, fee', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const t0 = await mark();
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 1_000_000n });
    const t1 = await mark();
    const a = await h.api.reserve(co, { amount: 100_000n, fee: fee(500n, 50n, 105n) });
    const t2 = await mark();
    await h.api.commit(co, a.hold!.id);
    const t3 = await mark();
    const b = await h.api.reserve(co, { amount: 20_000n, fee: zeroFee() });
    const t4 = await mark();
    await h.api.release(co, b.hold!.id, { errorMessage: 'rechazada' });
    const t5 = await mark();
    await h.api.chargeFee(co, { feeCents: 1_000n, ivaCents: 190n });
    const t6 = await mark();
    const c = await h.api.reserve(co, { amount: 30_000n, fee: zeroFee() }); // still pending at the end
    expect(c.hold!.id).toBeTruthy();

    const expected: Array<[Date, bigint, bigint, bigint]> = [
      [t0, 0n, 0n, 0n],
      [t1, 1_000_000n, 0n, 1n],
      [t2, 899_345n, 100_655n, 2n],
      [t3, 899_345n, 0n, 3n],
      [t4, 879_345n, 20_000n, 4n],
      [t5, 899_345n, 0n, 5n],
      [t6, 898_155n, 0n, 6n],
    ];
    for (const [instant, available, pending, postings] of expected) {
      const r = await at(co, Rail.BREB, instant);
      expect({ instant, ...r }).toEqual({
        instant,
        rail: Rail.BREB,
        at: instantFromDate(instant),
        availableCents: available,
        pendingOutCents: pending,
        postings,
      });
    }
    // now: the wallet row, with the transfer still pending
    const now = await at(co, Rail.BREB, await mark());
    const w = walletOf((await h.api.balances(co)).wallets, Rail.BREB);
    expect(now).toMatchObject({ availableCents: w.availableCents, pendingOutCents: w.pendingOutCents, postings: w.version });
    expect(now).toMatchObject({ availableCents: 868_155n, pendingOutCents: 30_000n, postings: 7n });
    // the other wallet of the company is untouched
    expect(await at(co, Rail.ACH, new Date())).toMatchObject({ rail: Rail.ACH, availableCents: 0n, pendingOutCents: 0n, postings: 0n });
  });

  it('an instant before the company existed (epoch) is zeros; the ACH wallet counts PSE inflows and their reversal', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const key = `inflow-${randomUUID()}`;
    await h.api.pseInflow(co, key);
    const t1 = await mark();
    await h.api.reverseInflow(co, { originalIdempotencyKey: key });
    const t2 = await mark();
    expect(await at(co, Rail.ACH, new Date(0))).toMatchObject({ availableCents: 0n, pendingOutCents: 0n, postings: 0n });
    expect(await at(co, Rail.ACH, t1)).toMatchObject({ availableCents: 98_810n, pendingOutCents: 0n, postings: 1n });
    expect(await at(co, Rail.ACH, t2)).toMatchObject({ availableCents: 0n, pendingOutCents: 0n, postings: 2n });
    expect(await at(co, Rail.BREB, t2)).toMatchObject({ availableCents: 0n, postings: 0n });
  });

  it("never sees another company's postings", async () => {
    const a = h.newCompany();
    const b = h.newCompany();
    await h.api.open(a);
    await h.api.open(b);
    await h.api.credit(a, { rail: Rail.BREB, amountCents: 7_000n });
    await h.api.credit(b, { rail: Rail.BREB, amountCents: 5_000n });
    const t = await mark();
    expect(await at(a, Rail.BREB, t)).toMatchObject({ availableCents: 7_000n, postings: 1n });
    expect(await at(b, Rail.BREB, t)).toMatchObject({ availableCents: 5_000n, postings: 1n });
  });

  it('refuses a future instant, a missing instant or rail, an unknown wallet, and no company', async () => {
    const co = h.newCompany();
    await h.api.open(co, [Rail.BREB]);
    const future = await failure(at(co, Rail.BREB, new Date(Date.now() + 60_000)));
    expect(future.code).toBe('INVALID_REQUEST');
    expect(JSON.stringify(future.details ?? future)).toContain('at');
    expect((await failure(at(co, Rail.BREB, undefined))).code).toBe('INVALID_REQUEST');
    expect((await failure(at(co, Rail.UNSPECIFIED, new Date()))).code).toBe('INVALID_REQUEST');
    expect((await failure(at(co, Rail.PSE, new Date()))).code).toBe('INVALID_REQUEST');
    expect((await failure(at(co, Rail.ACH, new Date()))).code).toBe('WALLET_NOT_PROVISIONED');
    expect((await failure(at(h.newCompany(), Rail.BREB, new Date()))).code).toBe('WALLET_NOT_PROVISIONED');
    // a gateway call without a company is refused by the mesh before the handler
    expect((await failure(at(undefined, Rail.BREB, new Date()))).code).toBe('CALLER_NOT_ALLOWED');
  });

  it.each(['transfer', 'pse-deposit', 'ops'] as const)('refuses the %s identity (only the gateway may call it)', async (as) => {
    const c = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, h.ledger.address, as, 'ledger', 10_000);
    try {
      const e = await failure(
        c.getBalanceAt(ledgerV1.GetBalanceAtRequest.fromPartial({ rail: Rail.BREB, at: instantFromDate(new Date()) }), ctx(h.newCompany())),
      );
      expect(e.code).toBe('CALLER_NOT_ALLOWED');
    } finally {
      c.close();
    }
  });

  it('has the (company_id, created_at) index on postings (migration 0006)', async () => {
    const idx = await h.ledger.db.query<{ indexdef: string }>(
      `select indexdef from pg_indexes where schemaname = 'ledger' and indexname = 'postings_company_created_idx'`,
    );
    expect(idx[0]?.indexdef).toContain('(company_id, created_at)');
  });
});
