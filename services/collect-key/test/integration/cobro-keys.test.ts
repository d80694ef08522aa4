import { randomBytes, randomUUID } from 'node:crypto';
import { createAsyncClient, devMeshTls, type CallContext } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { collectKeyV1 } from '@wallet/proto';
import { decodeQr } from '../../src/domain/emvco.js';
import { Rail, failure, startHarness, type Harness } from './harness.js';

/**
 * A cobro's dynamic key and QR (IssueCobroKey / CloseCobroKey, called by pse-deposit with the
 * company in the metadata): an ordinary collect key registered at the directory, idempotent on the
 * cobro, hidden from the customer keys; its payments' deposits carry the QR's transaction id and the cobro.
 */
describe('cobro keys: IssueCobroKey, payments to them, CloseCobroKey', () => {
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

  /** pse-deposit's call: a service identity naming the company in the metadata (no signed principal). */
  const svc = (companyId: string): CallContext => ({ requestId: randomUUID(), companyId });
  const newCobroId = () => `cob_${randomBytes(12).toString('hex')}`;
  const inAnHour = () => new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000);
  const issue = (co: string, cobroId: string, over: Partial<collectKeyV1.IssueCobroKeyRequest> = {}) =>
    h.client.issueCobroKey(
      {
        cobroId,
        transactionId: `TX-${cobroId.slice(4, 16)}`,
        amountCents: 1_500_050n,
        expiresAt: inAnHour(),
        merchantName: 'Ferretería El Tornillo',
        ivaApplicable: false,
        ...over,
      },
      svc(co),
    );
  const payQr = (qrPayload: string, over: Record<string, unknown> = {}) =>
    h.sandboxPost('/sandbox/breb/incoming', { qrPayload, payerName: 'Ana Gómez', payerDocument: 'CC 1010', payerBank: 'Nequi', ...over });
  const depositEvents = async (providerTransferId: string) =>
    await h.service.db.query<{ subject: string; payload: Record<string, any> }>(
      `select subject, payload from collect_key.outbox where payload #>> '{deposit,providerTransferId}' = ? order by seq`,
      [providerTransferId],
    );
  const keyEvents = async (keyId: string) =>
    (await h.service.db.query<{ subject: string }>(`select subject from collect_key.outbox where payload #>> '{key,id}' = ?`, [keyId])).map((r) => r.subject);

  it('issues an ACTIVE key registered at the directory with a dynamic QR; a second call answers the same key and payload (created false)', async () => {
    const co = await h.newCompany();
    const cobroId = newCobroId();
    const expiresAt = inAnHour();
    const first = await issue(co, cobroId, { expiresAt });
    expect(first.created).toBe(true);
    expect(first.key).toMatchObject({ externalId: `cobro:${cobroId}`, name: 'Ferretería El Tornillo', keyType: 'ALPHANUM', state: 'ACTIVE' });
    expect(first.key!.keyValue).toMatch(/^@[a-z0-9]{10}$/);
    expect(await h.service.db.query(`select 1 from sandbox.breb_registrations where key_value = ? and deleted_at is null`, [first.key!.keyValue])).toHaveLength(
      1,
    );
    const qr = decodeQr(first.qrPayload);
    expect(qr).toMatchObject({ crcValid: true, pointOfInitiation: '12', keyValue: first.key!.keyValue, gui: 'CO.BREB', amount: '15000.50' });
    expect(qr.reference).toBe(`TX-${cobroId.slice(4, 16)}`);
    expect(qr.expiry).toBe(expiresAt.toISOString().slice(0, 19).replace(/[-T:]/g, ''));

    const again = await issue(co, cobroId, { expiresAt, merchantName: 'Otro nombre' });
    expect(again).toEqual({ ...first, created: false });
    // Other terms for the same cobro: a conflict, never a second key.
    expect((await failure(issue(co, cobroId, { expiresAt, amountCents: 1n }))).code).toBe('REFERENCE_CONFLICT');
    expect((await failure(issue(co, cobroId, { expiresAt, transactionId: 'OTHER' }))).code).toBe('REFERENCE_CONFLICT');
    expect(await h.service.db.query(`select 1 from collect_key.keys where cobro_id = ?`, [cobroId])).toHaveLength(1);
  });

  it('racing calls for one cobro make one key (one created), registered once', async () => {
    const co = await h.newCompany();
    const cobroId = newCobroId();
    const expiresAt = inAnHour();
    const racers = await Promise.all(Array.from({ length: 6 }, () => issue(co, cobroId, { expiresAt, amountCents: undefined })));
    expect(new Set(racers.map((r) => r.key!.id)).size).toBe(1);
    expect(new Set(racers.map((r) => r.qrPayload)).size).toBe(1);
    expect(racers.filter((r) => r.created)).toHaveLength(1);
    expect(decodeQr(racers[0]!.qrPayload).amount).toBeNull();
    expect(await h.service.db.query(`select 1 from collect_key.keys where cobro_id = ?`, [cobroId])).toHaveLength(1);
    expect(await h.service.db.query(`select 1 from sandbox.breb_registrations where key_value = ?`, [racers[0]!.key!.keyValue])).toHaveLength(1);
  });

  it('is hidden from the customer keys: not listed, not found by id or ext:, no collectkey.* events; a customer key of the same externalId is its own', async () => {
    const co = await h.newCompany();
    const cobroId = newCobroId();
    const { key } = await issue(co, cobroId);
    const listed = await h.client.listKeys({ limit: 200 }, h.ctx(co));
    expect(listed.items.map((k) => k.id)).not.toContain(key!.id);
    expect((await h.client.listKeys({ externalId: `cobro:${cobroId}`, limit: 0 }, h.ctx(co))).items).toEqual([]);
    expect((await failure(h.client.getKey({ id: key!.id }, h.ctx(co)))).code).toBe('KEY_NOT_FOUND');
    expect((await failure(h.client.getKey({ id: `ext:cobro:${cobroId}` }, h.ctx(co)))).code).toBe('KEY_NOT_FOUND');
    expect((await failure(h.client.deleteKey({ id: key!.id }, h.ctx(co)))).code).toBe('KEY_NOT_FOUND');
    expect((await failure(h.client.issueQr({ keyId: key!.id }, h.ctx(co)))).code).toBe('KEY_NOT_FOUND');
    expect(await keyEvents(key!.id)).toEqual([]);
    const customer = await h.client.createKey({ externalId: `cobro:${cobroId}`, name: 'Cliente' }, h.ctx(co));
    expect(customer).toMatchObject({ created: true, key: { externalId: `cobro:${cobroId}`, state: 'ACTIVE' } });
    expect(customer.key!.id).not.toBe(key!.id);
  });

  it('refuses bad input naming every field, an expiry already past, a company without a BREB wallet, and any caller but pse-deposit', async () => {
    const co = await h.newCompany();
    const e = await failure(h.client.issueCobroKey({ cobroId: 'x', transactionId: '', amountCents: 0n, merchantName: '', ivaApplicable: false }, svc(co)));
    expect(e.code).toBe('INVALID_REQUEST');
    expect((e.details!.fields as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(['amountCents', 'cobroId', 'expiresAt', 'transactionId']);
    const past = await failure(issue(co, newCobroId(), { expiresAt: new Date(Date.now() - 1000) }));
    expect(past.code).toBe('INVALID_REQUEST');
    const achOnly = `co-${randomUUID()}`;
    await h.ledgerClient.openWallets({ rails: [Rail.ACH] }, h.ctx(achOnly));
    expect((await failure(issue(achOnly, newCobroId()))).code).toBe('FAST_WALLET_MISSING');
    expect(
      (
        await failure(
          h.client.issueCobroKey(
            { cobroId: newCobroId(), transactionId: 'T', merchantName: '', ivaApplicable: false, expiresAt: inAnHour() },
            { requestId: randomUUID() },
          ),
        )
      ).code,
    ).toBe('AUTH_REQUIRED');
    const gateway = createAsyncClient<collectKeyV1.CollectKeyServiceServer>(collectKeyV1.CollectKeyServiceClient, h.service.address, {
      deadlineMs: 15_000,
      mesh: { tls: devMeshTls('gateway'), server: 'collect-key' },
    });
    const recon = createAsyncClient<collectKeyV1.CollectKeyServiceServer>(collectKeyV1.CollectKeyServiceClient, h.service.address, {
      deadlineMs: 15_000,
      mesh: { tls: devMeshTls('reconciliation'), server: 'collect-key' },
    });
    try {
      for (const c of [gateway, recon]) {
        expect((await failure(c.closeCobroKey({ cobroId: newCobroId() }, svc(co)))).code).toMatch(/^CALLER_NOT_(ALLOWED|AUTHENTICATED)$/);
      }
      expect(
        (
          await failure(
            recon.issueCobroKey({ cobroId: newCobroId(), transactionId: 'T', merchantName: '', ivaApplicable: false, expiresAt: inAnHour() }, svc(co)),
          )
        ).code,
      ).toBe('CALLER_NOT_ALLOWED');
    } finally {
      gateway.close();
      recon.close();
    }
  });

  it("a payment of the cobro's QR is credited, and its deposit.paid carries the QR's transaction id and the cobro", async () => {
    const co = await h.newCompany();
    const cobroId = newCobroId();
    const { key, qrPayload } = await issue(co, cobroId);
    const before = await h.brebAvailable(co);
    const paid = await payQr(qrPayload);
    expect(paid.status).toBe(202);
    const providerTransferId = String(paid.body.providerTransferId);
    const events = await eventually(async () => {
      const e = await depositEvents(providerTransferId);
      expect(e.map((x) => x.subject)).toEqual(['deposit.paid']);
      return e;
    });
    const deposit = events[0]!.payload.deposit;
    expect(deposit).toMatchObject({
      status: 'ASSIGNED',
      source: 'BREB',
      amountCents: '1500050',
      transactionId: `TX-${cobroId.slice(4, 16)}`,
      cobroId,
      brebKey: { id: key!.id, externalId: `cobro:${cobroId}`, value: key!.keyValue },
    });
    expect(await h.brebAvailable(co)).toBe(before + BigInt(deposit.netAmountCents));
    expect(await h.service.db.query(`select transaction_id, cobro_id from collect_key.payments where provider_transfer_id = ?`, [providerTransferId])).toEqual([
      { transaction_id: `TX-${cobroId.slice(4, 16)}`, cobro_id: cobroId },
    ]);

    // A customer's key paid by key: neither field.
    const customer = await h.client.createKey({ externalId: `c-${randomUUID().slice(0, 8)}`, name: 'Cliente' }, h.ctx(co));
    const byKey = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue: customer.key!.keyValue,
      amountCents: 10_000,
      payerName: 'Ana Gómez',
      payerDocument: 'CC 1010',
      payerBank: 'Nequi',
    });
    const plain = await eventually(async () => {
      const e = await depositEvents(String(byKey.body.providerTransferId));
      expect(e).toHaveLength(1);
      return e[0]!.payload.deposit;
    });
    expect(plain).not.toHaveProperty('transactionId');
    expect(plain).not.toHaveProperty('cobroId');
  });

  it('CloseCobroKey deletes the key at the directory and here, idempotently; a later payment (after expiry) is held UNASSIGNED with the cobro', async () => {
    const co = await h.newCompany();
    const cobroId = newCobroId();
    const expiresAt = new Date(Date.now() + 2_000);
    const { key, qrPayload } = await issue(co, cobroId, { expiresAt });
    expect((await failure(h.client.closeCobroKey({ cobroId: newCobroId() }, svc(co)))).code).toBe('KEY_NOT_FOUND');
    expect((await failure(h.client.closeCobroKey({ cobroId }, svc(await h.newCompany())))).code).toBe('KEY_NOT_FOUND');
    const closed = await h.client.closeCobroKey({ cobroId }, svc(co));
    expect(closed).toMatchObject({ id: key!.id, state: 'DELETED' });
    expect(closed.deletedAt).toBeInstanceOf(Date);
    expect(await h.client.closeCobroKey({ cobroId }, svc(co))).toEqual(closed);
    expect(await h.service.db.query(`select 1 from sandbox.breb_registrations where key_value = ? and deleted_at is null`, [key!.keyValue])).toHaveLength(0);
    expect(await keyEvents(key!.id)).toEqual([]);
    // IssueCobroKey after the close answers the closed key (a replay), never a new one.
    expect((await issue(co, cobroId, { expiresAt })).key).toMatchObject({ id: key!.id, state: 'DELETED' });
    expect(decodeQr(qrPayload).expiry).toBe(expiresAt.toISOString().slice(0, 19).replace(/[-T:]/g, ''));

    await new Promise((r) => setTimeout(r, 2_100));
    expect(await payQr(qrPayload)).toMatchObject({ status: 422, body: { error: 'QR_EXPIRED' } });
    const late = await payQr(qrPayload, { ignoreExpiry: true, amountCents: 20_000 });
    expect(late.status).toBe(202);
    const events = await eventually(async () => {
      const e = await depositEvents(String(late.body.providerTransferId));
      expect(e.map((x) => x.subject)).toEqual(['deposit.unassigned']);
      return e;
    });
    expect(events[0]!.payload.deposit).toMatchObject({ status: 'UNASSIGNED', amountCents: '20000', cobroId, transactionId: `TX-${cobroId.slice(4, 16)}` });
  });
});
