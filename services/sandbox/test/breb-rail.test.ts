import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, signatureValid, sleep, txId } from './support.js';

const CONFIRM_MS = 200;

describe('Bre-B rail', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  /** A second instance on the same database whose transfers settle only when forced (60 s delay). */
  let slow: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  const call = api(() => sandbox.url);
  const callSlow = api(() => slow.url);

  const directory = async (key: string) => (await call('GET', `/breb/directory/keys/${encodeURIComponent(key)}`)).body;
  async function transferBody(name: string, o: { amountCents?: number; key?: string; transactionId?: string } = {}) {
    const key = o.key ?? '3001234567';
    const entry = await directory(key);
    return {
      transactionId: o.transactionId ?? txId(name),
      amountCents: o.amountCents ?? 150_000,
      anchorHandle: entry.anchorHandle ?? 'anh_000000000000000000000000',
      keyType: 'AUTO',
      keyValue: key,
      targetName: 'CAMILO MARIN',
      targetDocument: '40828038',
      callbackUrl: receiver.urlFor(name),
    };
  }

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_breb');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_BREB_CONFIRM_MS: String(CONFIRM_MS), SANDBOX_CALLBACK_SECRET: SECRET } });
    slow = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_BREB_CONFIRM_MS: '60000', SANDBOX_CALLBACK_SECRET: SECRET } });
  });
  afterAll(async () => {
    await slow?.stop();
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    await call('POST', '/sandbox/faults', { brebRail: 'up', callbacks: 'up' });
  });

  it('accepts a transfer and sends a signed COMPLETED callback after the confirm delay', async () => {
    const body = await transferBody('ok');
    const started = Date.now();
    const r = await call('POST', '/breb/rail/transfers', body);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ providerTransferId: expect.stringMatching(/^brb_[0-9a-f]{24}$/), status: 'PENDING' });
    expect((await call('GET', `/breb/rail/transfers/${body.transactionId}`)).body).toEqual({
      transactionId: body.transactionId,
      providerTransferId: r.body.providerTransferId,
      status: 'PENDING',
    });

    const [cb] = await receiver.waitFor('ok');
    expect(cb!.at - started).toBeGreaterThanOrEqual(CONFIRM_MS - 20);
    expect(cb!.headers['content-type']).toMatch(/^application\/json/);
    expect(signatureValid(cb!)).toBe(true);
    expect(signatureValid(cb!, 'another-secret')).toBe(false);
    expect(cb!.body).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      transactionId: body.transactionId,
      providerTransferId: r.body.providerTransferId,
      rail: 'BREB',
      status: 'COMPLETED',
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Math.abs(Date.parse(cb!.body.occurredAt as string) - Date.now())).toBeLessThan(5_000);
    expect((await call('GET', `/breb/rail/transfers/${body.transactionId}`)).body).toEqual({
      transactionId: body.transactionId,
      providerTransferId: r.body.providerTransferId,
      status: 'COMPLETED',
    });
  });

  it('is idempotent on transactionId: a repeat returns the same transfer and schedules nothing new', async () => {
    const body = await transferBody('idem');
    const first = await call('POST', '/breb/rail/transfers', body);
    const [second, third] = await Promise.all([call('POST', '/breb/rail/transfers', body), call('POST', '/breb/rail/transfers', body)]);
    expect(second.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(third.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    await receiver.waitFor('idem');
    const afterOutcome = await call('POST', '/breb/rail/transfers', body);
    expect(afterOutcome).toMatchObject({ status: 202, body: first.body });
    await sleep(CONFIRM_MS + 400);
    expect(receiver.for('idem')).toHaveLength(1);

    const conflict = await call('POST', '/breb/rail/transfers', { ...body, amountCents: body.amountCents + 1 });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ error: 'TRANSACTION_ID_CONFLICT' });
    // The same transactionId on the other rail is the same conflict.
    const onAch = await call('POST', '/ach/transfers', {
      transactionId: body.transactionId,
      amountCents: body.amountCents,
      bankCode: '1007',
      accountTypeId: 20,
      accountNumber: '12345678901',
      documentTypeId: 1,
      documentNumber: '40828038',
      holderName: 'CAMILO MARIN',
      callbackUrl: body.callbackUrl,
    });
    expect(onAch.status).toBe(409);
  });

  it('fails an amount ending in 13 centavos', async () => {
    const body = await transferBody('thirteen', { amountCents: 100_013 });
    expect((await call('POST', '/breb/rail/transfers', body)).status).toBe(202);
    const [cb] = await receiver.waitFor('thirteen');
    expect(signatureValid(cb!)).toBe(true);
    expect(cb!.body).toMatchObject({
      transactionId: body.transactionId,
      rail: 'BREB',
      status: 'FAILED',
      errorMessage: 'Transferencia rechazada por la entidad receptora',
    });
    expect((await call('GET', `/breb/rail/transfers/${body.transactionId}`)).body).toMatchObject({
      status: 'FAILED',
      errorMessage: 'Transferencia rechazada por la entidad receptora',
    });
    // 113 ends in 13 too; 1_300 does not.
    const b2 = await transferBody('thirteen-b', { amountCents: 1_300 });
    await call('POST', '/breb/rail/transfers', b2);
    expect((await receiver.waitFor('thirteen-b'))[0]!.body.status).toBe('COMPLETED');
  });

  it("settles against the directory: a key that is not registered or an anchor that is not the key's fails", async () => {
    const notFound = { ...(await transferBody('nf')), keyValue: '@notfound' };
    await call('POST', '/breb/rail/transfers', notFound);
    expect((await receiver.waitFor('nf'))[0]!.body).toMatchObject({ status: 'FAILED', errorMessage: expect.stringContaining('no está registrada') });

    const inactive = await transferBody('inactive', { key: '@inactive' });
    await call('POST', '/breb/rail/transfers', inactive);
    expect((await receiver.waitFor('inactive'))[0]!.body).toMatchObject({ status: 'FAILED', errorMessage: expect.stringContaining('inactiva') });

    const mismatch = { ...(await transferBody('anchor')), anchorHandle: 'anh_ffffffffffffffffffffffff' };
    await call('POST', '/breb/rail/transfers', mismatch);
    expect((await receiver.waitFor('anchor'))[0]!.body).toMatchObject({ status: 'FAILED', errorMessage: expect.stringContaining('anchorHandle') });

    // The key may be sent as the user typed it: it is normalized before the anchor check.
    const typed = { ...(await transferBody('typed', { key: 'Ana.Gomez@Example.com' })) };
    await call('POST', '/breb/rail/transfers', typed);
    expect((await receiver.waitFor('typed'))[0]!.body.status).toBe('COMPLETED');
  });

  it('answers 503 while the rail is down and stores nothing', async () => {
    await call('POST', '/sandbox/faults', { brebRail: 'down' });
    const body = await transferBody('down');
    const r = await call('POST', '/breb/rail/transfers', body);
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' });
    expect((await call('GET', `/breb/rail/transfers/${body.transactionId}`)).status).toBe(404);
    await call('POST', '/sandbox/faults', { brebRail: 'up' });
    expect((await call('POST', '/breb/rail/transfers', body)).status).toBe(202);
    await receiver.waitFor('down');
  });

  it('answers 404 for an unknown transfer, and for a transfer of the other rail', async () => {
    expect(await call('GET', '/breb/rail/transfers/nope')).toMatchObject({ status: 404, body: { error: 'TRANSFER_NOT_FOUND' } });
    const body = await transferBody('rail404');
    await call('POST', '/breb/rail/transfers', body);
    expect((await call('GET', `/ach/transfers/${body.transactionId}`)).status).toBe(404);
    await receiver.waitFor('rail404');
  });

  it('forces an outcome now: complete, fail with a message, 409 once settled, 404 unknown', async () => {
    const a = await transferBody('force-ok');
    expect((await callSlow('POST', '/breb/rail/transfers', a)).status).toBe(202);
    await sleep(CONFIRM_MS + 200);
    expect(receiver.for('force-ok')).toHaveLength(0); // the 60 s delay holds it
    const started = Date.now();
    const forced = await call('POST', `/sandbox/rails/breb/transfers/${a.transactionId}/complete`);
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ transactionId: a.transactionId, status: 'COMPLETED' });
    const [cb] = await receiver.waitFor('force-ok');
    expect(cb!.at - started).toBeLessThan(1_000);
    expect(cb!.body).toMatchObject({ status: 'COMPLETED' });
    expect(signatureValid(cb!)).toBe(true);

    const again = await call('POST', `/sandbox/rails/breb/transfers/${a.transactionId}/fail`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'OUTCOME_ALREADY_SET' });

    const b = await transferBody('force-fail');
    await callSlow('POST', '/breb/rail/transfers', b);
    const failed = await call('POST', `/sandbox/rails/breb/transfers/${b.transactionId}/fail`, { errorMessage: 'Cuenta embargada' });
    expect(failed.body).toMatchObject({ status: 'FAILED', errorMessage: 'Cuenta embargada' });
    expect((await receiver.waitFor('force-fail'))[0]!.body).toMatchObject({ status: 'FAILED', errorMessage: 'Cuenta embargada' });

    const c = await transferBody('force-default');
    await callSlow('POST', '/breb/rail/transfers', c);
    expect((await call('POST', `/sandbox/rails/breb/transfers/${c.transactionId}/fail`)).body.errorMessage).toBe(
      'Transferencia rechazada por la entidad receptora',
    );
    await receiver.waitFor('force-default');

    expect((await call('POST', '/sandbox/rails/breb/transfers/unknown-tx/complete')).status).toBe(404);
    expect((await call('POST', `/sandbox/rails/ach/transfers/${a.transactionId}/complete`)).status).toBe(404);
    expect((await call('POST', `/sandbox/rails/pse/transfers/${a.transactionId}/complete`)).status).toBe(404);
    const badBody = await call('POST', `/sandbox/rails/breb/transfers/${a.transactionId}/fail`, { errorMessage: 5 });
    expect(badBody.status).toBe(400);
  });

  it('redelivers the last callback with the same eventId and body, freshly signed', async () => {
    const body = await transferBody('redeliver');
    await call('POST', '/breb/rail/transfers', body);
    const [first] = await receiver.waitFor('redeliver');
    const r = await call('POST', `/sandbox/callbacks/${body.transactionId}/redeliver`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      eventId: first!.body.eventId,
      transactionId: body.transactionId,
      delivered: true,
      queued: false,
      responseStatus: 200,
      attempts: 2,
    });
    const all = receiver.for('redeliver');
    expect(all).toHaveLength(2);
    expect(all[1]!.raw).toBe(first!.raw);
    expect(signatureValid(all[1]!)).toBe(true);

    expect(await call('POST', '/sandbox/callbacks/unknown-tx/redeliver')).toMatchObject({ status: 404, body: { error: 'TRANSFER_NOT_FOUND' } });
    const pending = await transferBody('redeliver-pending');
    await callSlow('POST', '/breb/rail/transfers', pending);
    expect(await call('POST', `/sandbox/callbacks/${pending.transactionId}/redeliver`)).toMatchObject({ status: 409, body: { error: 'NO_CALLBACK_YET' } });
  });

  it('refuses bad input with 400 INVALID_REQUEST naming the fields', async () => {
    const good = await transferBody('bad');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, amountCents: 1.5 }, 'amountCents'],
      [{ ...good, amountCents: '100' }, 'amountCents'],
      [{ ...good, amountCents: -5 }, 'amountCents'],
      [{ ...good, amountCents: 0 }, 'amountCents'],
      [{ ...good, amountCents: 2 ** 53 }, 'amountCents'],
      [{ ...good, callbackUrl: 'not a url' }, 'callbackUrl'],
      [{ ...good, callbackUrl: 'ftp://127.0.0.1/x' }, 'callbackUrl'],
      [{ ...good, transactionId: '' }, 'transactionId'],
      [{ ...good, transactionId: 'has spaces' }, 'transactionId'],
      [{ ...good, keyType: 'IBAN' }, 'keyType'],
      [{ ...good, keyType: 'PHONE', keyValue: 'abc@example.com' }, 'keyValue'],
      [{ ...good, targetName: '   ' }, 'targetName'],
      [{ ...good, anchorHandle: undefined }, 'anchorHandle'],
    ];
    for (const [body, field] of cases) {
      const r = await call('POST', '/breb/rail/transfers', body);
      expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);
      expect(r.body.message).toEqual(expect.any(String));
      expect(r.body.details.fields.map((f: { path: string }) => f.path)).toContain(field);
    }
    expect((await call('POST', '/breb/rail/transfers')).status).toBe(400);
    expect((await call('GET', `/breb/rail/transfers/${good.transactionId}`)).status).toBe(404);
  });
});
