import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, achTransfer, api, signatureValid, txId } from './support.js';

/** POST /breb/rail/transfers/bulk and /ach/transfers/bulk (docs/sandbox.md "Bulk submission"). */
describe('bulk submission to the rails', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  const call = api(() => sandbox.url);

  /** The directory's anchor handle of each key the tests send to (the rail checks a transfer's against it). */
  const anchors = new Map<string, string>();
  const breb = (name: string, o: Record<string, unknown> = {}) => ({
    transactionId: txId(name),
    amountCents: 150_000,
    anchorHandle: anchors.get(String(o.keyValue ?? '3001234567')) ?? 'anh_000000000000000000000000',
    keyType: 'AUTO',
    keyValue: '3001234567',
    targetName: 'CAMILO MARIN',
    targetDocument: '40828038',
    callbackUrl: receiver.urlFor(name),
    ...o,
  });
  const ach = (name: string, o: Record<string, unknown> = {}) => achTransfer(txId(name), receiver.urlFor(name), o);

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_bulk');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({
      databaseUrl: tdb.url,
      port: 0,
      env: { SANDBOX_BREB_CONFIRM_MS: '150', SANDBOX_ACH_CONFIRM_MS: '150', SANDBOX_CALLBACK_SECRET: SECRET },
    });
    for (const key of ['3001234567', 'Ana@Example.com']) {
      anchors.set(key, (await call('GET', `/breb/directory/keys/${encodeURIComponent(key)}`)).body.anchorHandle);
    }
  });
  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    await call('POST', '/sandbox/faults', { brebRail: 'up', achRail: 'up' });
  });

  it('takes many Bre-B transfers in one call: each answered in order, each settled and called back on its own', async () => {
    const items = [breb('b-one'), breb('b-two', { amountCents: 2_013 }), breb('b-three', { keyValue: 'Ana@Example.com', keyType: 'EMAIL' })];
    const r = await call('POST', '/breb/rail/transfers/bulk', { transfers: items });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      results: items.map((t) => ({
        transactionId: t.transactionId,
        status: 202,
        providerTransferId: expect.stringMatching(/^brb_[0-9a-f]{24}$/),
        replayed: false,
      })),
    });
    const ids = new Set(r.body.results.map((x: { providerTransferId: string }) => x.providerTransferId));
    expect(ids.size).toBe(3);
    // As the single submission stores it: the key in its canonical form.
    const third = await call('GET', `/breb/rail/transfers/${items[2]!.transactionId}`);
    expect(third.body).toMatchObject({ status: 'PENDING', providerTransferId: r.body.results[2].providerTransferId });

    const [ok] = await receiver.waitFor('b-one');
    const [failed] = await receiver.waitFor('b-two');
    const [three] = await receiver.waitFor('b-three');
    expect(signatureValid(ok!)).toBe(true);
    expect(ok!.body).toMatchObject({ transactionId: items[0]!.transactionId, providerTransferId: r.body.results[0].providerTransferId, status: 'COMPLETED' });
    expect(failed!.body).toMatchObject({ transactionId: items[1]!.transactionId, status: 'FAILED', errorMessage: expect.any(String) });
    expect(three!.body).toMatchObject({ transactionId: items[2]!.transactionId, status: 'COMPLETED' });
  });

  it('is idempotent per transactionId: a repeat answers the first providerTransferId, replayed, and schedules nothing new', async () => {
    const first = breb('b-rep');
    const a = await call('POST', '/breb/rail/transfers/bulk', { transfers: [first] });
    const fresh = breb('b-new');
    const b = await call('POST', '/breb/rail/transfers/bulk', { transfers: [fresh, first] });
    expect(b.status).toBe(200);
    expect(b.body.results).toEqual([
      { transactionId: fresh.transactionId, status: 202, providerTransferId: expect.stringMatching(/^brb_/), replayed: false },
      { transactionId: first.transactionId, status: 202, providerTransferId: a.body.results[0].providerTransferId, replayed: true },
    ]);
    // The single submission sees the same transfer.
    const single = await call('POST', '/breb/rail/transfers', first);
    expect(single).toMatchObject({ status: 202, body: { providerTransferId: a.body.results[0].providerTransferId } });
    await receiver.waitFor('b-rep');
    await receiver.waitFor('b-new');
    await new Promise((r) => setTimeout(r, 400));
    expect(receiver.for('b-rep')).toHaveLength(1);
  });

  it('answers each refused transfer with the single submission’s status and body, and takes the others', async () => {
    const taken = breb('b-taken', { amountCents: 100 });
    await call('POST', '/breb/rail/transfers', taken);
    const good = breb('b-good');
    const badKey = breb('b-badkey', { keyType: 'PHONE', keyValue: 'no-es-telefono' });
    const badAmount = breb('b-badamount', { amountCents: '12' });
    const r = await call('POST', '/breb/rail/transfers/bulk', { transfers: [badKey, good, { ...taken, amountCents: 200 }, badAmount] });
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([
      {
        transactionId: badKey.transactionId,
        status: 400,
        error: 'INVALID_REQUEST',
        message: expect.any(String),
        details: { fields: [{ path: 'transfers.0.keyValue', message: expect.any(String) }] },
      },
      { transactionId: good.transactionId, status: 202, providerTransferId: expect.stringMatching(/^brb_/), replayed: false },
      {
        transactionId: taken.transactionId,
        status: 409,
        error: 'TRANSACTION_ID_CONFLICT',
        message: expect.any(String),
        details: { providerTransferId: expect.stringMatching(/^brb_/) },
      },
      {
        transactionId: badAmount.transactionId,
        status: 400,
        error: 'INVALID_REQUEST',
        message: expect.any(String),
        details: { fields: [expect.objectContaining({ path: 'transfers.3.amountCents' })] },
      },
    ]);
    expect((await call('GET', `/breb/rail/transfers/${badKey.transactionId}`)).status).toBe(404);
    expect((await call('GET', `/breb/rail/transfers/${good.transactionId}`)).status).toBe(200);
  });

  it('takes ACH transfers in bulk; the invalid account is refused on its own line', async () => {
    const good = ach('a-good');
    const invalid = ach('a-invalid', { accountNumber: '0000000000' });
    const r = await call('POST', '/ach/transfers/bulk', { transfers: [good, invalid] });
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([
      { transactionId: good.transactionId, status: 202, providerTransferId: expect.stringMatching(/^ach_/), replayed: false },
      { transactionId: invalid.transactionId, status: 422, error: 'INVALID_BANK_ACCOUNT', message: expect.any(String) },
    ]);
    const [cb] = await receiver.waitFor('a-good');
    expect(cb!.body).toMatchObject({ transactionId: good.transactionId, rail: 'ACH', status: 'COMPLETED' });
    expect((await call('GET', `/ach/transfers/${invalid.transactionId}`)).status).toBe(404);
  });

  it('takes nothing while the rail is down: 503 as a whole', async () => {
    await call('POST', '/sandbox/faults', { brebRail: 'down' });
    const t = breb('b-down');
    const r = await call('POST', '/breb/rail/transfers/bulk', { transfers: [t] });
    expect(r).toMatchObject({ status: 503, body: { error: 'SERVICE_UNAVAILABLE', message: expect.any(String) } });
    await call('POST', '/sandbox/faults', { brebRail: 'up' });
    expect((await call('GET', `/breb/rail/transfers/${t.transactionId}`)).status).toBe(404);
  });

  it('refuses a body that is not a list of 1 to 200 transfers, or names a transactionId twice, as a whole (400)', async () => {
    const one = breb('b-shape');
    const bad = async (body: unknown, path: string) => {
      const r = await call('POST', '/breb/rail/transfers/bulk', body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'INVALID_REQUEST', details: { fields: expect.arrayContaining([expect.objectContaining({ path })]) } });
    };
    await bad({}, 'transfers');
    await bad({ transfers: [] }, 'transfers');
    await bad({ transfers: 'todas' }, 'transfers');
    await bad({ transfers: Array.from({ length: 201 }, () => one) }, 'transfers');
    await bad({ transfers: [one], extra: true }, 'extra');
    await bad([one], '');
    await bad({ transfers: [one, { ...one, amountCents: 5 }] }, 'transfers.1.transactionId');
    const malformed = await call('POST', '/breb/rail/transfers/bulk', '{"transfers": [');
    expect(malformed).toMatchObject({ status: 400, body: { error: 'INVALID_REQUEST' } });
    expect((await call('GET', `/breb/rail/transfers/${one.transactionId}`)).status).toBe(404);
  });
});
