import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, signatureValid, txId } from './support.js';

const CONFIRM_MS = 250;

describe('ACH rail', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  const call = api(() => sandbox.url);
  const account = {
    bankCode: '1007',
    accountTypeId: 20,
    accountNumber: '12345678901',
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderName: 'ANA GOMEZ',
  };
  const transfer = (name: string, o: Record<string, unknown> = {}) => ({
    transactionId: txId(name),
    amountCents: 2_500_000,
    ...account,
    callbackUrl: receiver.urlFor(name),
    ...o,
  });

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_ach');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_ACH_CONFIRM_MS: String(CONFIRM_MS), SANDBOX_CALLBACK_SECRET: SECRET } });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    await call('POST', '/sandbox/faults', { achRail: 'up' });
  });

  it('validates accounts: 200 valid, 422 for 0000000000, 503 while the rail is down', async () => {
    expect(await call('POST', '/ach/accounts/validate', account)).toMatchObject({ status: 200, body: { valid: true } });
    // Codes may come as numeric strings too.
    expect((await call('POST', '/ach/accounts/validate', { ...account, accountTypeId: '21', documentTypeId: '8', bankCode: 1051 })).status).toBe(200);
    const invalid = await call('POST', '/ach/accounts/validate', { ...account, accountNumber: '0000000000' });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toEqual({ error: 'INVALID_BANK_ACCOUNT', message: expect.any(String) });

    await call('POST', '/sandbox/faults', { achRail: 'down' });
    const down = await call('POST', '/ach/accounts/validate', account);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' });
  });

  it('refuses malformed account data with 400', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...account, accountTypeId: 23 }, 'accountTypeId'],
      [{ ...account, documentTypeId: 2 }, 'documentTypeId'],
      [{ ...account, accountNumber: 12345678 }, 'accountNumber'],
      [{ ...account, accountNumber: '12-34' }, 'accountNumber'],
      [{ ...account, holderName: '' }, 'holderName'],
      [{ ...account, bankCode: 'BANCO' }, 'bankCode'],
      [{ ...account, documentNumber: undefined }, 'documentNumber'],
    ];
    for (const [body, field] of cases) {
      const r = await call('POST', '/ach/accounts/validate', body);
      expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);
      expect(r.body.details.fields.map((f: { path: string }) => f.path)).toContain(field);
    }
  });

  it('accepts a transfer and calls back COMPLETED after the ACH delay; GET reports it', async () => {
    const body = transfer('ach-ok');
    const r = await call('POST', '/ach/transfers', body);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ providerTransferId: expect.stringMatching(/^ach_[0-9a-f]{24}$/), status: 'PENDING' });
    expect((await call('GET', `/ach/transfers/${body.transactionId}`)).body.status).toBe('PENDING');
    const repeat = await call('POST', '/ach/transfers', body);
    expect(repeat.body.providerTransferId).toBe(r.body.providerTransferId);

    const [cb] = await receiver.waitFor('ach-ok');
    expect(signatureValid(cb!)).toBe(true);
    expect(cb!.body).toEqual({
      eventId: expect.any(String),
      transactionId: body.transactionId,
      providerTransferId: r.body.providerTransferId,
      rail: 'ACH',
      status: 'COMPLETED',
      occurredAt: expect.any(String),
    });
    expect((await call('GET', `/ach/transfers/${body.transactionId}`)).body).toEqual({
      transactionId: body.transactionId,
      providerTransferId: r.body.providerTransferId,
      status: 'COMPLETED',
    });
    expect((await call('GET', '/ach/transfers/unknown')).status).toBe(404);
  });

  it('fails an amount ending in 13 and refuses 0000000000 and an outage synchronously', async () => {
    const b13 = transfer('ach-13', { amountCents: 913 });
    await call('POST', '/ach/transfers', b13);
    expect((await receiver.waitFor('ach-13'))[0]!.body).toMatchObject({
      rail: 'ACH',
      status: 'FAILED',
      errorMessage: 'Transferencia rechazada por la entidad receptora',
    });

    const invalid = transfer('ach-invalid', { accountNumber: '0000000000' });
    expect(await call('POST', '/ach/transfers', invalid)).toMatchObject({ status: 422, body: { error: 'INVALID_BANK_ACCOUNT' } });
    expect((await call('GET', `/ach/transfers/${invalid.transactionId}`)).status).toBe(404);

    await call('POST', '/sandbox/faults', { achRail: 'down' });
    const down = transfer('ach-down');
    expect((await call('POST', '/ach/transfers', down)).status).toBe(503);
    expect((await call('GET', `/ach/transfers/${down.transactionId}`)).status).toBe(404);
  });

  it('forces an ACH outcome', async () => {
    const slow = await startSandbox({ databaseUrl: tdb.url, env: { SANDBOX_ACH_CONFIRM_MS: '60000', SANDBOX_CALLBACK_SECRET: SECRET } });
    try {
      const body = transfer('ach-force');
      await api(() => slow.url)('POST', '/ach/transfers', body);
      const r = await call('POST', `/sandbox/rails/ach/transfers/${body.transactionId}/fail`, { errorMessage: 'Cuenta cancelada' });
      expect(r.body).toMatchObject({ status: 'FAILED', errorMessage: 'Cuenta cancelada' });
      expect((await receiver.waitFor('ach-force'))[0]!.body).toMatchObject({ rail: 'ACH', status: 'FAILED', errorMessage: 'Cuenta cancelada' });
      expect((await call('POST', `/sandbox/rails/breb/transfers/${body.transactionId}/complete`)).status).toBe(404);
    } finally {
      await slow.stop();
    }
  });
});
