import { randomBytes, randomUUID } from 'node:crypto';
import { bogotaDateOf, createAsyncClient, devMeshTls, signPayload } from '@wallet/platform';
import { collectKeyV1 } from '@wallet/proto';
import { eventually } from '@wallet/platform/testing';
import { newKeyId } from '../../src/domain/collect-key.js';
import { SqlCollectKeyStore } from '../../src/persistence/collect-key.store.js';
import { Rail, failure, startHarness, type Harness } from './harness.js';

const SECRET = 'dev-rail-callback-secret';

/**
 * A payment nobody books (docs/decisions.md "Inbound Bre-B payments", "A definite ledger refusal"). A company without a BREB wallet cannot get a collect
 * key; a payment whose credit the ledger refuses for good (a key issued before that check) is parked
 * CREDIT_REFUSED with a money exception instead of being retried by the network for 24 h, is PENDING
 * to the reconciliation, and is credited once when an operator retries it after the wallet exists.
 */
describe('inbound payment saga: a credit the ledger refuses', () => {
  let h: Harness;
  let recon: ReturnType<typeof createAsyncClient<collectKeyV1.CollectKeyServiceServer>>;
  beforeAll(async () => {
    h = await startHarness();
    recon = createAsyncClient<collectKeyV1.CollectKeyServiceServer>(collectKeyV1.CollectKeyServiceClient, h.service.address, {
      deadlineMs: 15_000,
      mesh: { tls: devMeshTls('reconciliation'), server: 'collect-key' },
    });
  }, 120_000);
  afterAll(async () => {
    recon?.close();
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const achOnlyCompany = async () => {
    const co = `co-${randomUUID()}`;
    await h.ledgerClient.openWallets({ rails: [Rail.ACH] }, h.ctx(co));
    return co;
  };
  const notification = (keyValue: string, amountCents: number) => {
    const providerTransferId = `brb_in_${randomBytes(12).toString('hex')}`;
    const at = new Date().toISOString();
    const raw = Buffer.from(
      JSON.stringify({
        eventId: randomUUID(),
        providerTransferId,
        keyValue,
        amountCents,
        payerName: 'Ana Gómez',
        payerDocument: 'CC 1010',
        payerBank: 'Nequi',
        receivedAt: at,
        occurredAt: at,
      }),
    );
    return { providerTransferId, receivedAt: at, req: { rawBody: raw, signature: signPayload(SECRET, raw, Math.floor(Date.now() / 1000)) } };
  };
  const outboxFor = async (transfer: string) =>
    (
      await h.service.db.query<{ subject: string }>(
        `select subject from collect_key.outbox where payload #>> '{deposit,providerTransferId}' = ? order by seq`,
        [transfer],
      )
    ).map((r) => r.subject);

  it('a company with only an ACH wallet cannot create a collect key: FAST_WALLET_MISSING, nothing stored or registered', async () => {
    const co = await achOnlyCompany();
    const err = await failure(h.client.createKey({ externalId: 'solo-ach', name: 'Solo ACH', keyValue: '@soloach12345' }, h.ctx(co)));
    expect(err.code).toBe('FAST_WALLET_MISSING');
    expect(err.message).toMatch(/billetera BREB/);
    expect(await h.service.db.query(`select 1 from collect_key.keys where company_id = ?`, [co])).toHaveLength(0);
    expect((await h.sandboxGet('/breb/directory/keys/@soloach12345')).body.holder).not.toMatchObject({ bankName: 'Wallet' });
    // With a BREB wallet the same request creates it.
    await h.ledgerClient.openWallets({ rails: [Rail.BREB] }, h.ctx(co));
    const ok = await h.client.createKey({ externalId: 'solo-ach', name: 'Solo ACH', keyValue: '@soloach12345' }, h.ctx(co));
    expect(ok).toMatchObject({ created: true, key: { state: 'ACTIVE' } });
  });

  it('a refused credit: acknowledged, CREDIT_REFUSED + one money exception, PENDING to the reconciliation; retried after the wallet exists, credited once', async () => {
    const co = await achOnlyCompany();
    // A key issued before the wallet check (or whose wallet went away): stored ACTIVE directly.
    const store = new SqlCollectKeyStore(h.service.db);
    const stored = await store.insertKey({
      id: newKeyId(),
      companyId: co,
      externalId: 'legacy',
      name: 'Legado',
      keyType: 'ALPHANUM',
      keyValue: `@legacy${randomBytes(4).toString('hex')}`,
      ivaApplicable: false,
      state: 'REGISTERING',
      createdAt: new Date(),
      deletedAt: null,
    });
    if (typeof stored === 'string') throw new Error(stored);
    await store.setState(stored.id, ['REGISTERING'], 'ACTIVE');

    const n = notification(stored.keyValue, 120_000);
    expect(await h.client.handleIncomingPayment(n.req, h.ctx())).toEqual({ accepted: true, duplicate: false });
    const row = async () =>
      (
        await h.service.db.query<{ status: string; pending_step: string | null; deposit_id: string }>(
          `select status, pending_step, deposit_id from collect_key.payments where provider_transfer_id = ?`,
          [n.providerTransferId],
        )
      )[0]!;
    expect(await row()).toMatchObject({ status: 'CREDIT_REFUSED', pending_step: null });
    const depositId = (await row()).deposit_id;
    // The network's redelivery is a duplicate: nothing more is tried or opened.
    expect(await h.client.handleIncomingPayment(n.req, h.ctx())).toEqual({ accepted: true, duplicate: true });

    const listed = await h.client.listExceptions({ kind: 'CREDIT_REFUSED', limit: 50 }, h.ctx());
    const mine = listed.items.filter((e) => e.resourceId === depositId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ kind: 'CREDIT_REFUSED', status: 'OPEN', rail: 'BREB', companyId: co, actions: ['retry', 'return', 'dismiss'] });
    expect(JSON.parse(mine[0]!.theirsJson)).toMatchObject({ source: 'ledger', code: 'FAST_WALLET_MISSING' });
    expect(await outboxFor(n.providerTransferId)).toEqual([]);

    // Not final on our side: PENDING, no settlement time; not a settled record of its day.
    const found = await recon.findSettlements({ rail: 'breb-inbound', ids: [n.providerTransferId] }, { requestId: randomUUID() });
    expect(found.records).toEqual([expect.objectContaining({ providerId: n.providerTransferId, status: 'PENDING' })]);
    expect(found.records[0]!.settledAt).toBeUndefined();
    const day = bogotaDateOf(new Date(n.receivedAt));
    const listedIds = async () => {
      const ids: string[] = [];
      for await (const b of recon.listSettlements({ rail: 'breb-inbound', date: day, batchSize: 0 }, { requestId: randomUUID() }))
        ids.push(...b.records.map((r) => r.providerId ?? ''));
      return ids;
    };
    expect(await listedIds()).not.toContain(n.providerTransferId);
    // A refused credit is not a held payment: it cannot be assigned (an operator retries or dismisses it).
    expect((await failure(h.client.assignPayment({ depositId, note: '', assignedBy: '' }, h.ctx(co)))).code).toBe('INVALID_STATE_TRANSITION');

    // A retry while the ledger still refuses leaves the exception RESOLVING (the same action resumes it).
    const early = await failure(h.client.resolveException({ id: mine[0]!.id, action: 'retry', note: 'reintento', resolvedBy: 'operator:op-1' }, h.ctx()));
    expect(early.code).toBe('SERVICE_UNAVAILABLE');
    expect(await row()).toMatchObject({ status: 'CREDIT_REFUSED' });

    await h.ledgerClient.openWallets({ rails: [Rail.BREB] }, h.ctx(co));
    const done = await h.client.resolveException({ id: mine[0]!.id, action: 'retry', note: 'billetera BREB abierta', resolvedBy: 'operator:op-1' }, h.ctx());
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'retry' });
    expect(await row()).toMatchObject({ status: 'ASSIGNED', pending_step: null });
    expect(await h.brebAvailable(co)).toBe(120_000n);
    expect(await outboxFor(n.providerTransferId)).toEqual(['deposit.paid']);
    expect((await failure(h.client.resolveException({ id: mine[0]!.id, action: 'retry', note: 'otra vez', resolvedBy: 'operator:op-2' }, h.ctx()))).code).toBe(
      'EXCEPTION_NOT_OPEN',
    );

    const settled = await recon.findSettlements({ rail: 'breb-inbound', ids: [n.providerTransferId] }, { requestId: randomUUID() });
    expect(settled.records[0]).toMatchObject({ status: 'ASSIGNED', settledAt: n.receivedAt, valueDate: day });
    expect(await listedIds()).toContain(n.providerTransferId);
    const history = await h.service.db.query<{ from_state: string | null; to_state: string }>(
      `select from_state, to_state from collect_key.payment_history where deposit_id = ? order by id`,
      [depositId],
    );
    expect(history).toEqual([
      { from_state: null, to_state: 'CREDITING' },
      { from_state: 'CREDITING', to_state: 'CREDIT_REFUSED' },
      // the retry while the ledger still refused
      { from_state: 'CREDIT_REFUSED', to_state: 'CREDITING' },
      { from_state: 'CREDITING', to_state: 'CREDIT_REFUSED' },
      { from_state: 'CREDIT_REFUSED', to_state: 'CREDITING' },
      { from_state: 'CREDITING', to_state: 'ASSIGNED' },
    ]);
  });

  it('a refused credit returned to the payer by an operator (`return`): held, then returned through the network; RETURNED, the exception RESOLVED', async () => {
    const co = await achOnlyCompany();
    const store = new SqlCollectKeyStore(h.service.db);
    const k = await store.insertKey({
      id: newKeyId(),
      companyId: co,
      externalId: 'legacy-ret',
      name: 'Legado',
      keyType: 'ALPHANUM',
      keyValue: `@legret${randomBytes(4).toString('hex')}`,
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
    await store.setState(k.id, ['REGISTERING'], 'ACTIVE', undefined, String(reg.body.anchorHandle));
    const pay = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue: k.keyValue,
      amountCents: 33_000,
      payerName: 'Eva',
      payerDocument: 'CC 9',
      payerBank: 'Nequi',
    });
    const transfer = String(pay.body.providerTransferId);
    const refused = await eventually(
      async () =>
        (
          await h.service.db.query<{ deposit_id: string }>(
            `select deposit_id from collect_key.payments where provider_transfer_id = ? and status = 'CREDIT_REFUSED'`,
            [transfer],
          )
        )[0],
      15_000,
    );
    const exc = (await h.client.listExceptions({ kind: 'CREDIT_REFUSED', status: 'OPEN', limit: 100 }, h.ctx())).items.find(
      (e) => e.resourceId === refused.deposit_id,
    )!;
    expect(exc.actions).toEqual(['retry', 'return', 'dismiss']);

    const done = await h.client.resolveException(
      { id: exc.id, action: 'return', note: 'La empresa no abrirá billetera BREB', resolvedBy: 'operator:op-1' },
      h.ctx(),
    );
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'return' });
    expect(
      (
        await h.service.db.query<{ status: string; total_charged: string }>(
          `select status, total_charged::text from collect_key.payments where deposit_id = ?`,
          [refused.deposit_id],
        )
      )[0],
    ).toEqual({ status: 'RETURNED', total_charged: '0' });
    const keys = await h.service.db.query<{ idempotency_key: string; kind: string }>(
      `select idempotency_key, kind from ledger.postings where idempotency_key like ? order by created_at`,
      [`collectkey:payment:${transfer}%`],
    );
    expect(keys).toEqual([
      { idempotency_key: `collectkey:payment:${transfer}`, kind: 'inflow' },
      { idempotency_key: `collectkey:payment:${transfer}:returned`, kind: 'reversal' },
    ]);
    expect(
      (await h.service.db.query<{ return_id: string }>(`select return_id from sandbox.breb_incoming where provider_transfer_id = ?`, [transfer]))[0]!.return_id,
    ).toBe(refused.deposit_id);
  });
});
