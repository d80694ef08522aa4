import { randomUUID } from 'node:crypto';
import { eventually } from '@wallet/platform/testing';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { metricsRegistry, signPayload } from '@wallet/platform';
import { decodeQr } from '../../src/domain/emvco.js';
import { FeeOperation, MovementType, Rail, failure, startHarness, type Harness } from './harness.js';

// jsqr is CommonJS with `export default`: under ESM interop the function may sit on .default.
const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule }).default ?? jsQRModule) as unknown as (
  data: Uint8ClampedArray,
  w: number,
  h: number,
) => { data: string } | null;
const SECRET = 'dev-rail-callback-secret';

describe('collect keys, QR and inbound Bre-B payments', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const create = async (co: string, over: Record<string, string> = {}) => {
    const r = await h.client.createKey({ externalId: `cust-${randomUUID().slice(0, 8)}`, name: 'Tienda Doña Pepa', ...over }, h.ctx(co));
    return { key: r.key!, created: r.created };
  };
  const issue = async (co: string, keyId: string) => {
    const r = await h.client.issueQr({ keyId }, h.ctx(co));
    return { qr: r.qr!, reused: r.reused };
  };
  const outbox = async (subjectLike: string, jsonPath: string, value: string) =>
    await h.service.db.query<{ subject: string; payload: Record<string, any> }>(
      `select subject, payload from collect_key.outbox where subject like ? and payload #>> ? = ? order by seq`,
      [subjectLike, `{${jsonPath}}`, value],
    );

  it('refuses bad input, naming every field; AUTH_REQUIRED without a company', async () => {
    const co = await h.newCompany();
    const e = await failure(h.client.createKey({ externalId: 'bad id!', name: '', keyType: 'PHONE', keyValue: '@x' }, h.ctx(co)));
    expect(e.code).toBe('INVALID_REQUEST');
    expect((e.details!.fields as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(['externalId', 'keyType', 'keyValue', 'name']);
    expect((await failure(h.client.createKey({ externalId: 'a', name: 'n'.repeat(101) }, h.ctx(co)))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.client.createKey({ externalId: 'a', name: 'A' }, h.ctx()))).code).toBe('CALLER_NOT_ALLOWED');
    for (const bad of [{ limit: 201 }, { limit: -1 }, { state: 'GONE', limit: 0 }, { cursor: 'nope', limit: 0 }]) {
      expect((await failure(h.client.listKeys(bad, h.ctx(co)))).code).toBe('INVALID_REQUEST');
    }
    expect(await h.service.db.query(`select 1 from collect_key.keys where company_id = ?`, [co])).toHaveLength(0);
  });

  it('generates an alias, registers it, and is idempotent per externalId (also under concurrency)', async () => {
    const co = await h.newCompany();
    const r = await create(co, { externalId: 'cust-001' });
    expect(r.created).toBe(true);
    expect(r.key).toMatchObject({ externalId: 'cust-001', name: 'Tienda Doña Pepa', keyType: 'ALPHANUM', state: 'ACTIVE' });
    expect(r.key.id).toMatch(/^bkey_[a-z0-9]{24}$/);
    expect(r.key.keyValue).toMatch(/^@[a-z0-9]{10}$/);
    expect(r.key.deletedAt).toBeUndefined();
    expect(await h.service.db.query(`select 1 from sandbox.breb_registrations where key_value = ? and deleted_at is null`, [r.key.keyValue])).toHaveLength(1);
    const again = await create(co, { externalId: 'cust-001', name: 'Otro nombre' });
    expect(again).toMatchObject({ created: false, key: { id: r.key.id, name: 'Tienda Doña Pepa' } });
    expect(await outbox('collectkey.created', 'key,id', r.key.id)).toHaveLength(1);

    const racers = await Promise.all(Array.from({ length: 6 }, () => create(co, { externalId: 'cust-race' })));
    expect(new Set(racers.map((x) => x.key.id)).size).toBe(1);
    expect(racers.filter((x) => x.created)).toHaveLength(1);
    expect(await h.service.db.query(`select 1 from collect_key.keys where company_id = ? and external_id = 'cust-race'`, [co])).toHaveLength(1);
  });

  it('KEY_ALREADY_REGISTERED across companies; lower-cases the given value; directory down → 503, nothing visible, completed once it is back', async () => {
    const [a, b] = [await h.newCompany(), await h.newCompany()];
    const value = `@Shop${randomUUID().slice(0, 8)}`;
    const k = await create(a, { keyValue: value });
    expect(k.key.keyValue).toBe(value.toLowerCase());
    expect((await failure(create(b, { keyValue: value.toLowerCase() }))).code).toBe('KEY_ALREADY_REGISTERED');
    expect((await failure(create(a, { keyValue: value }))).code).toBe('KEY_ALREADY_REGISTERED'); // another externalId, same company
    await h.sandboxPost('/sandbox/faults', { directory: 'down' });
    try {
      expect((await failure(create(b, { externalId: 'down-1' }))).code).toBe('BREB_DIRECTORY_LOOKUP_FAILED');
      // The directory's answer is unknown: the row waits as REGISTERING, which no client read shows.
      expect(await h.service.db.query(`select state from collect_key.keys where company_id = ?`, [b])).toEqual([{ state: 'REGISTERING' }]);
      expect((await h.client.listKeys({ limit: 0 }, h.ctx(b))).items).toEqual([]);
      expect((await failure(h.client.getKey({ id: 'ext:down-1' }, h.ctx(b)))).code).toBe('KEY_NOT_FOUND');
      expect((await failure(create(b, { externalId: 'down-1' }))).code).toBe('BREB_DIRECTORY_LOOKUP_FAILED'); // a retry asks again
    } finally {
      await h.sandboxPost('/sandbox/faults', { directory: 'up' });
    }
    // Back up: the sweeper asks again and finishes it; a retry then returns that key.
    const done = await eventually(async () => (await h.client.listKeys({ limit: 0 }, h.ctx(b))).items[0], 10_000);
    expect(done).toMatchObject({ externalId: 'down-1', state: 'ACTIVE' });
    expect(await create(b, { externalId: 'down-1' })).toMatchObject({ created: false, key: { id: done.id } });
    expect(await outbox('collectkey.created', 'key,id', done.id)).toHaveLength(1);
    expect(await h.service.db.query(`select 1 from collect_key.keys where company_id = ?`, [b])).toHaveLength(1);
  });

  it('ext: lookup, delete (idempotent, unregistered), ext: after delete, new key for the customer', async () => {
    const directoryCalls = async (operation: string) => {
      const line = `wallet_rail_requests_total{rail="BREB_DIRECTORY",operation="${operation}",outcome="ok"}`;
      const found = (await metricsRegistry.metrics()).split('\n').find((l) => l.startsWith(`${line} `));
      return found === undefined ? 0 : Number(found.slice(line.length + 1));
    };
    const unregisteredBefore = await directoryCalls('unregister');
    const co = await h.newCompany();
    const k = (await create(co, { externalId: 'cust-del' })).key;
    // The directory calls are metered (the rail alerts read them).
    expect(await directoryCalls('register')).toBeGreaterThan(0);
    expect((await h.client.getKey({ id: 'ext:cust-del' }, h.ctx(co))).id).toBe(k.id);
    expect((await h.client.getKey({ id: k.id }, h.ctx(co))).id).toBe(k.id);
    const d1 = await h.client.deleteKey({ id: 'ext:cust-del' }, h.ctx(co));
    expect(d1.state).toBe('DELETED');
    expect(d1.deletedAt).toBeInstanceOf(Date);
    const d2 = await h.client.deleteKey({ id: k.id }, h.ctx(co));
    expect(d2).toMatchObject({ state: 'DELETED', deletedAt: d1.deletedAt });
    expect(await outbox('collectkey.deleted', 'key,id', k.id)).toHaveLength(1);
    // Unregistered at the directory (the sandbox shares the test database).
    expect(await h.service.db.query(`select 1 from sandbox.breb_registrations where key_value = ? and deleted_at is null`, [k.keyValue])).toHaveLength(0);
    expect(await directoryCalls('unregister')).toBe(unregisteredBefore + 1);
    expect(await h.client.getKey({ id: 'ext:cust-del' }, h.ctx(co))).toMatchObject({ id: k.id, state: 'DELETED' });
    const k2 = await create(co, { externalId: 'cust-del' });
    expect(k2.created).toBe(true);
    expect((await h.client.getKey({ id: 'ext:cust-del' }, h.ctx(co))).id).toBe(k2.key.id);
    expect((await failure(h.client.getKey({ id: 'ext:nobody' }, h.ctx(co)))).code).toBe('KEY_NOT_FOUND');
    expect((await failure(h.client.getKey({ id: 'garbage' }, h.ctx(co)))).code).toBe('KEY_NOT_FOUND');
  });

  it('pages through more than one page newest first, with state and externalId filters', async () => {
    const co = await h.newCompany();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await create(co, { externalId: `page-${i}` })).key.id);
    await h.client.deleteKey({ id: ids[1]! }, h.ctx(co));
    await h.client.deleteKey({ id: ids[4]! }, h.ctx(co));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await h.client.listKeys({ limit: 3, ...(cursor ? { cursor } : {}) }, h.ctx(co));
      seen.push(...r.items.map((k) => k.id));
      cursor = r.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const active: string[] = [];
    cursor = undefined;
    do {
      const r = await h.client.listKeys({ limit: 2, state: 'ACTIVE', ...(cursor ? { cursor } : {}) }, h.ctx(co));
      active.push(...r.items.map((k) => k.id));
      cursor = r.nextCursor;
    } while (cursor);
    expect(active).toEqual([ids[6], ids[5], ids[3], ids[2], ids[0]]);
    expect((await h.client.listKeys({ state: 'DELETED', limit: 0 }, h.ctx(co))).items.map((k) => k.id)).toEqual([ids[4], ids[1]]);
    expect((await h.client.listKeys({ externalId: 'page-3', limit: 0 }, h.ctx(co))).items.map((k) => k.id)).toEqual([ids[3]]);
    const other = await h.newCompany();
    expect((await h.client.listKeys({ limit: 0 }, h.ctx(other))).items).toEqual([]);
  });

  it('SetKeyState: ACTIVE ⇄ SUSPENDED (admin, no company), never from DELETED; QR reuse and KEY_NOT_ACTIVE', async () => {
    const co = await h.newCompany();
    const k = (await create(co)).key;
    const q1 = await issue(co, k.id);
    expect(q1.reused).toBe(false);
    expect(q1.qr).toMatchObject({ type: 'STATIC', isPaid: false, keyId: k.id });
    expect(q1.qr.id).toMatch(/^qr_[a-z0-9]{24}$/);
    const q2 = await issue(co, `ext:${k.externalId}`);
    expect(q2).toMatchObject({ reused: true, qr: { id: q1.qr.id, payload: q1.qr.payload } });
    expect(await outbox('collectkey.qr_issued', 'qr,id', q1.qr.id)).toHaveLength(1);

    expect(await h.client.setKeyState({ id: k.id, state: 'SUSPENDED' }, h.ctx())).toMatchObject({ state: 'SUSPENDED' });
    expect((await failure(h.client.issueQr({ keyId: k.id }, h.ctx(co)))).code).toBe('KEY_NOT_ACTIVE');
    expect(await h.client.setKeyState({ id: k.id, state: 'ACTIVE' }, h.ctx())).toMatchObject({ state: 'ACTIVE' });
    expect((await failure(h.client.setKeyState({ id: k.id, state: 'DELETED' }, h.ctx()))).code).toBe('INVALID_REQUEST');
    await h.client.deleteKey({ id: k.id }, h.ctx(co));
    expect((await failure(h.client.issueQr({ keyId: k.id }, h.ctx(co)))).code).toBe('KEY_NOT_ACTIVE');
    expect((await failure(h.client.setKeyState({ id: k.id, state: 'ACTIVE' }, h.ctx()))).code).toBe('KEY_NOT_ACTIVE');
    expect((await failure(h.client.setKeyState({ id: `bkey_${'z'.repeat(24)}`, state: 'ACTIVE' }, h.ctx()))).code).toBe('KEY_NOT_FOUND');
  });

  it('the PNG decodes back to exactly the payload, whose CRC checks and carries the key', async () => {
    const co = await h.newCompany();
    const k = (await create(co)).key;
    const { qr } = await issue(co, k.id);
    const { png } = await h.client.getQrPng({ qrId: qr.id }, h.ctx(co));
    expect(Buffer.from(png).subarray(1, 4).toString('latin1')).toBe('PNG');
    const img = PNG.sync.read(Buffer.from(png));
    const decoded = jsQR(new Uint8ClampedArray(img.data), img.width, img.height);
    expect(decoded?.data).toBe(qr.payload);
    const d = decodeQr(decoded!.data);
    expect(d).toMatchObject({ crcValid: true, keyValue: k.keyValue, reference: qr.reference });
    expect(d.fields).toMatchObject({ '00': '01', '01': '11', '52': '0000', '53': '170', '58': 'CO', '59': 'Tienda Dona Pepa' });
  });

  it('company isolation: KEY_NOT_FOUND and QR_NOT_FOUND for another company', async () => {
    const [a, b] = [await h.newCompany(), await h.newCompany()];
    const k = (await create(a, { externalId: 'iso' })).key;
    const { qr } = await issue(a, k.id);
    for (const call of [
      h.client.getKey({ id: k.id }, h.ctx(b)),
      h.client.getKey({ id: 'ext:iso' }, h.ctx(b)),
      h.client.deleteKey({ id: k.id }, h.ctx(b)),
      h.client.issueQr({ keyId: k.id }, h.ctx(b)),
      h.client.setKeyState({ id: k.id, state: 'SUSPENDED' }, h.ctx(b)),
    ])
      expect((await failure(call)).code).toBe('KEY_NOT_FOUND');
    expect((await failure(h.client.getQrPng({ qrId: qr.id }, h.ctx(b)))).code).toBe('QR_NOT_FOUND');
    expect((await failure(h.client.getQrPng({ qrId: `qr_${'0'.repeat(24)}` }, h.ctx(a)))).code).toBe('QR_NOT_FOUND');
    expect((await h.client.getKey({ id: k.id }, h.ctx(a))).state).toBe('ACTIVE');
  });

  it('an inbound payment delivered three times is credited once (BREB wallet, TRANSFER_IN) with one deposit.paid', async () => {
    const co = await h.newCompany();
    const k = (await create(co, { externalId: 'payer-target' })).key;
    const before = await h.brebAvailable(co);
    const pay = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue: k.keyValue,
      amountCents: 250_000,
      payerName: 'Juan Pérez',
      payerDocument: 'CC 79123456',
      payerBank: 'Bancolombia',
    });
    expect(pay.status).toBe(202);
    const transfer = String(pay.body.providerTransferId);
    await eventually(async () => h.receiver.forTransfer(transfer).some((r) => r.status === 200) || undefined, 10_000);
    for (let i = 0; i < 2; i++) {
      expect((await h.sandboxPost(`/sandbox/callbacks/${transfer}/redeliver`)).status).toBeLessThan(300);
      await eventually(async () => h.receiver.forTransfer(transfer).filter((r) => r.status === 200).length >= i + 2 || undefined, 10_000);
    }
    const deliveries = h.receiver.forTransfer(transfer).filter((r) => r.status === 200);
    expect(deliveries.map((r) => r.reply.duplicate)).toEqual([false, true, true]);
    // A replay of the same signed bytes straight to the service is a duplicate too.
    const first = deliveries[0]!;
    expect(await h.client.handleIncomingPayment({ rawBody: first.raw, signature: first.signature }, h.ctx())).toEqual({ accepted: true, duplicate: true });

    expect((await h.brebAvailable(co)) - before).toBe(250_000n);
    const events = await outbox('deposit.%', 'deposit,providerTransferId', transfer);
    expect(events.map((e) => e.subject)).toEqual(['deposit.paid']);
    const dep = events[0]!.payload.deposit;
    expect(dep).toMatchObject({
      status: 'ASSIGNED',
      source: 'BREB',
      amountCents: '250000',
      netAmountCents: '250000',
      currency: 'COP',
      brebKey: { id: k.id, externalId: 'payer-target', name: k.name, value: k.keyValue },
      payerName: 'Juan Pérez',
      payerDocument: 'CC 79123456',
      payerBank: 'Bancolombia',
      providerTransferId: transfer,
    });
    expect(dep.id).toMatch(/^dep_[a-z0-9]{24}$/);
    expect(dep.providerConfirmedAt).toBeTruthy();
    expect(events[0]!.payload.companyId).toBe(co);
    const credited = await eventually(async () => {
      const mv = await h.ledgerClient.listMovements({ page: 0, limit: 50 }, h.ctx(co));
      const c = mv.items.filter((m) => m.type === MovementType.TRANSFER_IN);
      return c.length > 0 ? c : undefined;
    }, 10_000);
    expect(credited).toHaveLength(1);
    expect(credited[0]).toMatchObject({ rail: Rail.BREB, netAmount: 250_000n, reference: dep.id });

    // A bad signature is refused.
    expect(
      (
        await failure(
          h.client.handleIncomingPayment(
            { rawBody: first.raw, signature: signPayload('wrong-secret-0123456789', first.raw, Math.floor(Date.now() / 1000)) },
            h.ctx(),
          ),
        )
      ).code,
    ).toBe('INVALID_SIGNATURE');
  });

  it("IVA on a key's payments follows the tax regime in the signed caller context when the key was issued", async () => {
    const co = await h.newCompany();
    await h.ledgerClient.setFeeConfig({ operation: FeeOperation.BREB_INFLOW, companyId: co, fixedFeeCents: 1_000n, variableBps: 0 }, h.ctx());
    const common = (await h.client.createKey({ externalId: 'iva-common', name: 'Con IVA' }, h.ctx(co, { ivaApplicable: true }))).key!;
    const simple = (await h.client.createKey({ externalId: 'iva-simple', name: 'Sin IVA' }, h.ctx(co, { ivaApplicable: false }))).key!;
    const stored = await h.service.db.query<{ id: string; iva_applicable: boolean }>(
      `select id, iva_applicable from collect_key.keys where company_id = ? order by external_id`,
      [co],
    );
    expect(stored).toEqual([
      { id: common.id, iva_applicable: true },
      { id: simple.id, iva_applicable: false },
    ]);

    // The notification carries no company or regime: the stored key's decide.
    const paid = async (keyValue: string) => {
      const pay = await h.sandboxPost('/sandbox/breb/incoming', {
        keyValue,
        amountCents: 100_000,
        payerName: 'Juan Pérez',
        payerDocument: 'CC 79123456',
        payerBank: 'Bancolombia',
      });
      expect(pay.status).toBe(202);
      const transfer = String(pay.body.providerTransferId);
      const events = await eventually(async () => {
        const e = await outbox('deposit.%', 'deposit,providerTransferId', transfer);
        return e.length > 0 ? e : undefined;
      }, 10_000);
      return events[0]!.payload.deposit;
    };
    expect(await paid(common.keyValue)).toMatchObject({
      status: 'ASSIGNED',
      amountCents: '100000',
      feeAmountCents: '1000',
      ivaAmountCents: '190',
      netAmountCents: '98810',
    });
    const none = await paid(simple.keyValue);
    expect(none).toMatchObject({ status: 'ASSIGNED', amountCents: '100000', feeAmountCents: '1000', netAmountCents: '99000' });
    expect(none.ivaAmountCents ?? '0').toBe('0'); // proto3 JSON leaves a zero out

    // A caller context without a profile (a dashboard user's, as signed today) issues nothing: no default regime.
    const user = {
      requestId: randomUUID(),
      companyId: co,
      principal: { kind: 'user' as const, companyId: co, userId: 'u-1', email: 'u@example.com', role: 'ADMIN' },
    };
    expect((await failure(h.client.createKey({ externalId: 'iva-none', name: 'Sin perfil' }, user))).code).toBe('CALLER_NOT_ALLOWED');
    expect(await h.service.db.query(`select 1 from collect_key.keys where company_id = ? and external_id = 'iva-none'`, [co])).toHaveLength(0);
  });

  it('the same notification delivered concurrently is credited exactly once', async () => {
    const co = await h.newCompany();
    const k = (await create(co, { externalId: 'payer-race' })).key;
    const before = await h.brebAvailable(co);
    const now = new Date().toISOString();
    const providerTransferId = `brb_in_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const raw = Buffer.from(
      JSON.stringify({
        eventId: randomUUID(),
        providerTransferId,
        keyValue: k.keyValue,
        amountCents: 70_000,
        payerName: 'Rosa',
        payerDocument: 'CC 1020',
        payerBank: 'Nequi',
        receivedAt: now,
        occurredAt: now,
      }),
    );
    const signature = signPayload(SECRET, raw, Math.floor(Date.now() / 1000));
    const results = await Promise.all(Array.from({ length: 8 }, () => h.client.handleIncomingPayment({ rawBody: raw, signature }, h.ctx())));
    expect(results.filter((r) => r.accepted && !r.duplicate)).toHaveLength(1);
    expect((await h.brebAvailable(co)) - before).toBe(70_000n);
    const events = await outbox('deposit.%', 'deposit,providerTransferId', providerTransferId);
    expect(events.map((e) => e.subject)).toEqual(['deposit.paid']);
  });

  it('a payment to a deleted (or suspended) key → UNASSIGNED with its brebKey, not credited; unknown value → retryable, nothing booked', async () => {
    const co = await h.newCompany();
    const k = (await create(co, { externalId: 'gone' })).key;
    await h.client.deleteKey({ id: k.id }, h.ctx(co));
    const before = await h.brebAvailable(co);
    const pay = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue: k.keyValue,
      amountCents: 90_000,
      payerName: 'Ana',
      payerDocument: 'CC 1010',
      payerBank: 'Nequi',
    });
    expect(pay.status).toBe(202);
    const transfer = String(pay.body.providerTransferId);
    const events = await eventually(async () => {
      const e = await outbox('deposit.%', 'deposit,providerTransferId', transfer);
      return e.length > 0 ? e : undefined;
    }, 10_000);
    expect(events.map((e) => e.subject)).toEqual(['deposit.unassigned']);
    expect(events[0]!.payload.deposit).toMatchObject({ status: 'UNASSIGNED', source: 'BREB', brebKey: { id: k.id, value: k.keyValue } });
    expect(await h.brebAvailable(co)).toBe(before);

    // Suspended key, notified directly with a signed body.
    const s = (await create(co, { externalId: 'susp' })).key;
    await h.client.setKeyState({ id: s.id, state: 'SUSPENDED' }, h.ctx());
    const body = (value: string, id: string) =>
      Buffer.from(
        JSON.stringify({
          eventId: `evt-${id}`,
          providerTransferId: id,
          keyValue: value,
          amountCents: 5_000,
          payerName: 'X',
          payerDocument: 'CC 1',
          payerBank: 'B',
          receivedAt: new Date().toISOString(),
          occurredAt: new Date().toISOString(),
        }),
      );
    const raw = body(s.keyValue, `tr-${randomUUID()}`);
    const sig = signPayload(SECRET, raw, Math.floor(Date.now() / 1000));
    expect(await h.client.handleIncomingPayment({ rawBody: raw, signature: sig }, h.ctx())).toEqual({ accepted: true, duplicate: false });
    expect(await h.brebAvailable(co)).toBe(before);
    const unknownId = `tr-${randomUUID()}`;
    const unknown = body('@nobodyhere123', unknownId);
    expect(
      (await failure(h.client.handleIncomingPayment({ rawBody: unknown, signature: signPayload(SECRET, unknown, Math.floor(Date.now() / 1000)) }, h.ctx())))
        .code,
    ).toBe('SERVICE_UNAVAILABLE');
    expect(await h.service.db.query(`select 1 from collect_key.payments where provider_transfer_id = ?`, [unknownId])).toHaveLength(0);
    const stale = signPayload(SECRET, raw, Math.floor(Date.now() / 1000) - 301);
    expect((await failure(h.client.handleIncomingPayment({ rawBody: raw, signature: stale }, h.ctx()))).code).toBe('INVALID_SIGNATURE');
  });
});
