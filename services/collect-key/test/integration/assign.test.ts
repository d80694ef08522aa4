import { randomBytes, randomUUID } from 'node:crypto';
import { eventually } from '@wallet/platform/testing';
import { newKeyId } from '../../src/domain/collect-key.js';
import { SqlCollectKeyStore } from '../../src/persistence/collect-key.store.js';
import { FeeOperation, Rail, failure, startHarness, type Harness } from './harness.js';

/**
 * UNASSIGNED funds have a way out (docs/decisions.md "Inbound Bre-B payments", "Assigning held funds"). A payment held UNASSIGNED (paid to a
 * suspended key, which stays so after the key is re-activated) is assigned to its company by the
 * company itself (or an operator): unassigned_funds(BREB) −G; wallet_available(BREB) +N; fee; IVA;
 * `deposit.paid`. Another company's payment reads as not found; a repeat, or several at once,
 * post once; a ledger refusal leaves it held.
 */
describe('assigning a held (UNASSIGNED) Bre-B payment to its company', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const pay = async (keyValue: string, amountCents: number) => {
    const r = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue,
      amountCents,
      payerName: 'Marta Ruiz',
      payerDocument: 'CC 2040',
      payerBank: 'Daviplata',
    });
    expect(r.status).toBe(202);
    const transfer = String(r.body.providerTransferId);
    return eventually(
      async () =>
        (
          await h.service.db.query<{ deposit_id: string; status: string }>(
            `select deposit_id, status from collect_key.payments where provider_transfer_id = ? and status in ('ASSIGNED', 'UNASSIGNED')`,
            [transfer],
          )
        )[0],
      15_000,
    ).then((row) => ({ transfer, depositId: row.deposit_id, status: row.status }));
  };
  const postings = async (key: string) =>
    (await h.service.db.query<{ n: number }>(`select count(*)::int as n from ledger.postings where idempotency_key = ?`, [key]))[0]!.n;
  const subjects = async (transfer: string) =>
    (
      await h.service.db.query<{ subject: string }>(
        `select subject from collect_key.outbox where payload #>> '{deposit,providerTransferId}' = ? order by seq`,
        [transfer],
      )
    ).map((r) => r.subject);

  it('a payment to a suspended key stays UNASSIGNED after re-activation; the company assigns it once (concurrent repeats included), another company cannot', async () => {
    const co = await h.newCompany();
    await h.ledgerClient.setFeeConfig({ operation: FeeOperation.BREB_INFLOW, companyId: co, fixedFeeCents: 500n, variableBps: 0 }, h.ctx());
    const k = (await h.client.createKey({ externalId: 'susp', name: 'Tienda Suspendida' }, h.ctx(co))).key!;
    await h.client.setKeyState({ id: k.id, state: 'SUSPENDED' }, h.ctx());
    const p = await pay(k.keyValue, 70_000);
    expect(p.status).toBe('UNASSIGNED');
    await h.client.setKeyState({ id: k.id, state: 'ACTIVE' }, h.ctx());
    const before = await h.brebAvailable(co);

    // Another company's deposit reads as not found; a key of another company is not a target.
    const other = await h.newCompany();
    expect((await failure(h.client.assignPayment({ depositId: p.depositId, note: '', assignedBy: '' }, h.ctx(other)))).code).toBe('DEPOSIT_NOT_FOUND');
    const otherKey = (await h.client.createKey({ externalId: 'x', name: 'Otra' }, h.ctx(other))).key!;
    expect((await failure(h.client.assignPayment({ depositId: p.depositId, keyId: otherKey.id, note: '', assignedBy: '' }, h.ctx(co)))).code).toBe(
      'KEY_NOT_FOUND',
    );
    expect(await h.brebAvailable(co)).toBe(before);

    // Four at once: one posting, one deposit.paid, every answer the ASSIGNED deposit.
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => h.client.assignPayment({ depositId: p.depositId, keyId: k.id, note: '', assignedBy: '' }, h.ctx(co))),
    );
    for (const a of answers)
      expect(a).toMatchObject({
        id: p.depositId,
        status: 'ASSIGNED',
        amountCents: 70_000n,
        feeAmountCents: 500n,
        netAmountCents: 69_500n,
        brebKey: { id: k.id },
      });
    expect((await h.brebAvailable(co)) - before).toBe(69_500n);
    expect(await postings(`collectkey:payment:${p.transfer}:assign`)).toBe(1);
    expect(await subjects(p.transfer)).toEqual(['deposit.unassigned', 'deposit.paid']);
    const credited = await h.ledgerClient.listMovements({ page: 0, limit: 50 }, h.ctx(co));
    expect(credited.items.filter((m) => m.reference === p.depositId)).toEqual([expect.objectContaining({ netAmount: 69_500n, rail: Rail.BREB })]);

    // A repeat answers the same, posts nothing.
    expect(await h.client.assignPayment({ depositId: p.depositId, note: '', assignedBy: '' }, h.ctx(co))).toMatchObject({ status: 'ASSIGNED' });
    expect(await postings(`collectkey:payment:${p.transfer}:assign`)).toBe(1);
    const history = await h.service.db.query<{ to_state: string }>(`select to_state from collect_key.payment_history where deposit_id = ? order by id`, [
      p.depositId,
    ]);
    expect(history.map((r) => r.to_state)).toEqual(['HOLDING', 'UNASSIGNED', 'ASSIGNING', 'ASSIGNED']);
  });

  it('a ledger refusal (the company has no BREB wallet) leaves it UNASSIGNED, fees zero; a credited payment is not assignable again', async () => {
    const co = `co-${randomUUID()}`;
    await h.ledgerClient.openWallets({ rails: [Rail.ACH] }, h.ctx(co));
    const store = new SqlCollectKeyStore(h.service.db);
    // A key of this company from before the wallet check, now deleted: its payment is held.
    const k = await store.insertKey({
      id: newKeyId(),
      companyId: co,
      externalId: 'legacy',
      name: 'Legado',
      keyType: 'ALPHANUM',
      keyValue: `@leg${randomBytes(5).toString('hex')}`,
      ivaApplicable: false,
      state: 'REGISTERING',
      createdAt: new Date(),
      deletedAt: null,
    });
    if (typeof k === 'string') throw new Error(k);
    const reg = await h.sandboxPost('/breb/directory/registrations', {
      keyValue: k.keyValue,
      keyType: 'ALPHANUM',
      holderName: 'Legado',
      participantCallbackUrl: h.receiver.url,
    });
    await store.setState(k.id, ['REGISTERING'], 'DELETED', undefined, String(reg.body.anchorHandle));
    const p = await pay(k.keyValue, 20_000);
    expect(p.status).toBe('UNASSIGNED');
    expect((await failure(h.client.assignPayment({ depositId: p.depositId, note: '', assignedBy: '' }, h.ctx(co)))).code).toBe('FAST_WALLET_MISSING');
    expect(
      (
        await h.service.db.query(`select status, total_charged::text as fee, net_amount::text as net from collect_key.payments where deposit_id = ?`, [
          p.depositId,
        ])
      )[0],
    ).toEqual({ status: 'UNASSIGNED', fee: '0', net: '20000' });

    // With the wallet opened, the same request assigns it.
    await h.ledgerClient.openWallets({ rails: [Rail.BREB] }, h.ctx(co));
    expect(await h.client.assignPayment({ depositId: p.depositId, note: '', assignedBy: '' }, h.ctx(co))).toMatchObject({
      status: 'ASSIGNED',
      netAmountCents: 20_000n,
    });
    expect(await h.brebAvailable(co)).toBe(20_000n);
    expect((await failure(h.client.assignPayment({ depositId: 'dep_nope', note: '', assignedBy: '' }, h.ctx(co)))).code).toBe('DEPOSIT_NOT_FOUND');
  });
});
