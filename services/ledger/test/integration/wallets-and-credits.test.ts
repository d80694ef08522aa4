import { Rail, countRows, expectLedgerConsistent, failure, startHarness, walletOf, type Harness } from './harness.js';
import { MovementStatus, MovementType } from './harness.js';

describe('wallets and admin credits', () => {
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

  it('opens wallets idempotently and lists every wallet of the company', async () => {
    const co = h.newCompany();
    const first = await h.api.open(co, [Rail.ACH]);
    expect(first.wallets).toEqual([{ rail: Rail.ACH, availableCents: 0n, pendingOutCents: 0n, version: 0n, maxTransferAmount: 0n }]);
    const second = await h.api.open(co, [Rail.BREB, Rail.ACH, Rail.BREB]);
    expect(second.wallets.map((w) => w.rail)).toEqual([Rail.BREB, Rail.ACH]);
    const again = await h.api.open(co, [Rail.BREB, Rail.ACH]);
    expect(again.wallets).toEqual(second.wallets);
    expect((await h.api.balances(co)).wallets.map((w) => w.rail)).toEqual([Rail.BREB, Rail.ACH]);
  });

  it('answers an empty list for a company without wallets, and refuses PSE as a wallet rail', async () => {
    expect((await h.api.balances(h.newCompany())).wallets).toEqual([]);
    const err = await failure(h.api.open(h.newCompany(), [Rail.PSE]));
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.details).toEqual({ fields: [{ path: 'rails[0]', message: 'must be BREB or ACH' }] });
  });

  it('takes the company only from the signed caller context (a call for no company is refused before the handler)', async () => {
    expect((await failure(h.api.balances(undefined))).code).toBe('CALLER_NOT_ALLOWED');
    expect((await failure(h.api.credit(undefined, { amountCents: 100n }))).code).toBe('AUTH_REQUIRED');
    expect((await failure(h.api.balances('bad:company'))).code).toBe('INVALID_REQUEST');
  });

  it('credits a wallet: BALANCE_ADD movement, balances and version move together', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const res = await h.api.credit(co, { rail: Rail.BREB, amountCents: 150_000_000n, reference: 'fund-1', apiKeyId: 'key-1', description: 'seed' });
    expect(res.replayed).toBe(false);
    expect(res.postingId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.movement).toMatchObject({
      type: MovementType.BALANCE_ADD,
      rail: Rail.BREB,
      walletRail: Rail.BREB,
      status: MovementStatus.COMPLETED,
      amount: 150_000_000n,
      totalFee: 0n,
      ivaAmount: 0n,
      netAmount: 150_000_000n,
      reference: 'fund-1',
      apiKeyId: 'key-1',
      details: { description: 'seed' },
    });
    expect(res.movement!.completedAt).toBe(res.movement!.createdAt);
    expect(res.movement!.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    await h.api.credit(co, { rail: Rail.ACH, amountCents: 5_000n });
    await h.api.credit(co, { rail: Rail.ACH, amountCents: 7n });

    const { wallets } = await h.api.balances(co);
    expect(walletOf(wallets, Rail.BREB)).toEqual({
      rail: Rail.BREB,
      availableCents: 150_000_000n,
      pendingOutCents: 0n,
      version: 1n,
      maxTransferAmount: 150_000_000n,
    });
    expect(walletOf(wallets, Rail.ACH)).toEqual({ rail: Rail.ACH, availableCents: 5_007n, pendingOutCents: 0n, version: 2n, maxTransferAmount: 5_007n });
    expect(await h.api.movement(co, res.movement!.id)).toEqual(res.movement);
  });

  it('refuses bad credits: zero, above 2^53-1, unknown rail, missing wallet', async () => {
    const co = h.newCompany();
    await h.api.open(co, [Rail.ACH]);
    const zero = await failure(h.api.credit(co, { amountCents: 0n, rail: Rail.ACH }));
    expect(zero.code).toBe('INVALID_REQUEST');
    expect(zero.details).toEqual({ fields: [{ path: 'amountCents', message: 'must be greater than 0' }] });
    expect((await failure(h.api.credit(co, { amountCents: 2n ** 53n, rail: Rail.ACH }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.credit(co, { amountCents: 5n, rail: Rail.PSE }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.credit(co, { amountCents: 5n, rail: Rail.BREB }))).code).toBe('FAST_WALLET_MISSING');
    expect((await failure(h.api.credit(h.newCompany(), { amountCents: 5n, rail: Rail.ACH }))).code).toBe('WALLET_NOT_PROVISIONED');
    expect((await failure(h.api.credit(co, { amountCents: 5n, rail: Rail.ACH, idempotencyKey: '' }))).code).toBe('INVALID_REQUEST');
  });

  it('a credit is idempotent on its key: same input replays, other input conflicts', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const key = `admin-credit:${co}:ref-1`;
    const first = await h.api.credit(co, { idempotencyKey: key, amountCents: 1_000n, reference: 'ref-1' });
    const again = await h.api.credit(co, { idempotencyKey: key, amountCents: 1_000n, reference: 'ref-1' });
    expect(again.replayed).toBe(true);
    expect(again.postingId).toBe(first.postingId);
    expect(again.movement).toEqual(first.movement);
    expect((await failure(h.api.credit(co, { idempotencyKey: key, amountCents: 2_000n, reference: 'ref-1' }))).code).toBe('REFERENCE_CONFLICT');
    // The key belongs to this company's request: another company replaying it conflicts and learns nothing.
    const other = h.newCompany();
    await h.api.open(other);
    expect((await failure(h.api.credit(other, { idempotencyKey: key, amountCents: 1_000n, reference: 'ref-1' }))).code).toBe('REFERENCE_CONFLICT');
    const breb = walletOf((await h.api.balances(co)).wallets, Rail.BREB);
    expect(breb).toMatchObject({ availableCents: 1_000n, version: 1n });
    expect(await countRows(h, 'select count(*)::text as n from ledger.postings where idempotency_key = ?', [key])).toBe(1);
  });

  it('concurrent identical credits post once; concurrent distinct credits lose no update', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const key = `dup-${co}`;
    const dups = Array.from({ length: 12 }, () => h.api.credit(co, { idempotencyKey: key, rail: Rail.ACH, amountCents: 50_000n }));
    const distinct = Array.from({ length: 30 }, (_, i) => h.api.credit(co, { rail: Rail.ACH, amountCents: BigInt(1000 + i) }));
    const [d, x] = await Promise.all([Promise.all(dups), Promise.all(distinct)]);
    expect(new Set(d.map((r) => r.postingId)).size).toBe(1);
    expect(new Set(d.map((r) => r.movement!.id)).size).toBe(1);
    expect(d.filter((r) => !r.replayed)).toHaveLength(1);
    expect(x.every((r) => !r.replayed)).toBe(true);
    const expected = 50_000n + Array.from({ length: 30 }, (_, i) => BigInt(1000 + i)).reduce((s, v) => s + v, 0n);
    expect(walletOf((await h.api.balances(co)).wallets, Rail.ACH)).toMatchObject({ availableCents: expected, version: 31n });
  });
});
