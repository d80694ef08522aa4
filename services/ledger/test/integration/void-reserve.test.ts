import { randomUUID } from 'node:crypto';
import { ledgerV1 } from '@wallet/proto';
import { HoldStatus, Rail, expectLedgerConsistent, failure, fee, startHarness, walletOf, type Harness } from './harness.js';

const ctx = (companyId: string) => ({ companyId, requestId: randomUUID() });

/** VoidReserve: the fence a send's owner puts up before giving the send up. */
describe('VoidReserve', () => {
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

  async function funded(amount: bigint): Promise<string> {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: amount });
    return co;
  }
  const voidKey = (co: string, key: string) => h.client.voidReserve(ledgerV1.VoidReserveRequest.fromPartial({ idempotencyKey: key, rail: Rail.BREB }), ctx(co));
  const reserveKey = (co: string, key: string, amount = 10_000n) =>
    h.client.reserve(ledgerV1.ReserveRequest.fromPartial({ idempotencyKey: key, rail: Rail.BREB, amount, fee: fee(0n, 0n, 0n) }), ctx(co));

  it('voids an unused key: a Reserve under it afterwards is refused with RESERVE_VOIDED and moves nothing', async () => {
    const co = await funded(10_000n);
    const key = `transfer:${randomUUID()}:reserve`;
    expect(await voidKey(co, key)).toEqual({ voided: true });
    expect(await voidKey(co, key)).toEqual({ voided: true }); // idempotent
    expect((await failure(reserveKey(co, key))).code).toBe('RESERVE_VOIDED');
    const w = walletOf((await h.api.balances(co)).wallets, Rail.BREB);
    expect(w).toMatchObject({ availableCents: 10_000n, pendingOutCents: 0n });
  });

  it('answers the hold of a Reserve that landed first, voiding nothing', async () => {
    const co = await funded(10_000n);
    const key = `transfer:${randomUUID()}:reserve`;
    const r = await reserveKey(co, key);
    const v = await voidKey(co, key);
    expect(v.voided).toBe(false);
    expect(v.hold).toMatchObject({ id: r.hold!.id, status: HoldStatus.OPEN, total: 10_000n });
    // The Reserve still replays (the key is the Reserve's, not a void).
    expect((await reserveKey(co, key)).replayed).toBe(true);
  });

  it('another company cannot void or read a key it does not own', async () => {
    const co = await funded(10_000n);
    const key = `transfer:${randomUUID()}:reserve`;
    await reserveKey(co, key);
    expect((await failure(voidKey(h.newCompany(), key))).code).toBe('REFERENCE_CONFLICT');
  });

  it('a Reserve and a Void racing on one key: exactly one wins, every time', async () => {
    const co = await funded(1_000_000n);
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const key = `transfer:${randomUUID()}:reserve`;
        const [res, v] = await Promise.allSettled([reserveKey(co, key, 1_000n), voidKey(co, key)]);
        if (v.status !== 'fulfilled') throw v.reason;
        const reserved = res.status === 'fulfilled';
        // Void lost ⇔ the Reserve landed; void won ⇔ the Reserve was refused.
        expect(v.value.voided).toBe(!reserved);
        if (!reserved) expect((res.reason as { code?: string }).code).toBe('RESERVE_VOIDED');
        return reserved;
      }),
    );
    const landed = BigInt(outcomes.filter(Boolean).length);
    const w = walletOf((await h.api.balances(co)).wallets, Rail.BREB);
    expect(w).toMatchObject({ availableCents: 1_000_000n - landed * 1_000n, pendingOutCents: landed * 1_000n });
  });
});
