import { eventually } from '@wallet/platform/testing';
import { failure, payer, startHarness, type Harness } from './harness.js';

/**
 * Refunds (devoluciones) of paid PSE deposits (docs/returns.md): all or part of a credited PSE payment
 * refunded to its payer by the PSE provider, from the ACH wallet; several within the gross; the
 * provider's refusal released; the provider down left PENDING and finished by the sweeper; another
 * company's deposit not found; the ledger's and the cross-service invariants after each.
 */
describe('refunds of paid PSE deposits', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.sandboxPost('/sandbox/faults', { pse: 'up' }).catch(() => undefined);
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  /** A PSE deposit of `amountCents`, paid and credited (ASSIGNED). */
  const paid = async (co: string, amountCents: bigint) => {
    const d = await h.client.createPseDeposit(payer({ amountCents }), h.ctx(co));
    expect((await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'APPROVED', payerBank: 'Bancolombia' })).status).toBeLessThan(300);
    return eventually(async () => {
      const x = await h.client.getDeposit({ id: d.id }, h.ctx(co));
      return x.status === 'ASSIGNED' ? x : undefined;
    }, 15_000);
  };
  const create = (co: string | undefined, depositId: string, over: { amountCents?: bigint; reason?: string } = {}) =>
    h.client.createDepositReturn({ depositId, reason: 'CUSTOMER_REQUEST', requestedBy: '', ...over }, h.ctx(co));

  it('refunds part of a payment, then the rest, from the ACH wallet; more is refused', async () => {
    const co = await h.newCompany();
    const d = await paid(co, 100_000n);
    const before = await h.achAvailable(co);
    const a = await create(co, d.id, { amountCents: 40_000n, reason: 'DUPLICATE' });
    expect(a).toMatchObject({
      depositId: d.id,
      rail: 'PSE',
      amountCents: 40_000n,
      status: 'RETURNED',
      depositAmountCents: 100_000n,
      returnedAmountCents: 40_000n,
    });
    expect(a.returnedAt).toBeInstanceOf(Date);
    expect(await h.achAvailable(co)).toBe(before - 40_000n);
    const rest = await failure(create(co, d.id));
    // What is left of the gross is more than the wallet holds (the fee came out of the credit): refused, nothing moved.
    expect(rest.code).toBe('INSUFFICIENT_BALANCE');
    const left = await h.achAvailable(co);
    const b = await create(co, d.id, { amountCents: left });
    expect(b).toMatchObject({ status: 'RETURNED', returnedAmountCents: 40_000n + left });
    expect((await failure(create(co, d.id, { amountCents: 100_000n }))).code).toBe('RETURN_EXCEEDS_PAYMENT');
    const listed = await h.client.listDepositReturns({ depositId: d.id }, h.ctx(co));
    expect(listed.items.map((r) => r.status)).toEqual(['RETURNED', 'FAILED', 'RETURNED']);
    const m = await h.ledger.db.query<{ type: string; rail: string; wallet_rail: string; status: string }>(
      `select type, rail, wallet_rail, status from ledger.movements where id = ?::uuid`,
      [a.transactionId],
    );
    expect(m).toEqual([{ type: 'TRANSFER_OUT', rail: 'PSE', wallet_rail: 'ACH', status: 'COMPLETED' }]);
    const subjects = (
      await h.deposit.db.query<{ subject: string }>(`select subject from pse_deposit.outbox where payload #>> '{depositReturn,depositId}' = ? order by seq`, [
        d.id,
      ])
    ).map((r) => r.subject);
    expect(subjects).toEqual(['deposit.returned', 'deposit.return_failed', 'deposit.returned']);
  });

  it("another company's deposit and an unpaid one cannot be refunded", async () => {
    const co = await h.newCompany();
    const d = await paid(co, 20_000n);
    expect((await failure(create(await h.newCompany(), d.id))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await failure(h.client.listDepositReturns({ depositId: d.id }, h.ctx(await h.newCompany())))).code).toBe('DEPOSIT_NOT_FOUND');
    const pending = await h.client.createPseDeposit(payer({ amountCents: 20_000n }), h.ctx(co));
    expect((await failure(create(co, pending.id))).code).toBe('INVALID_STATE_TRANSITION');
  });

  it('the provider down: PENDING with the funds held; the sweeper finishes it when it is back', async () => {
    const co = await h.newCompany();
    const d = await paid(co, 50_000n);
    const before = await h.achAvailable(co);
    await h.sandboxPost('/sandbox/faults', { pse: 'down' });
    const r = await create(co, d.id, { amountCents: 10_000n });
    expect(r).toMatchObject({ status: 'PENDING' });
    expect(await h.achAvailable(co)).toBe(before - 10_000n);
    await h.sandboxPost('/sandbox/faults', { pse: 'up' });
    const done = await eventually(async () => {
      const [x] = (await h.client.listDepositReturns({ depositId: d.id }, h.ctx(co))).items;
      return x?.status === 'RETURNED' ? x : undefined;
    }, 30_000);
    expect(done.amountCents).toBe(10_000n);
  });
});
