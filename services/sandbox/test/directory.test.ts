import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { api } from './support.js';

describe('Bre-B directory, faults and health', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  const call = api(() => sandbox.url);
  const lookup = (key: string, type?: string) => call('GET', `/breb/directory/keys/${encodeURIComponent(key)}${type ? `?type=${type}` : ''}`);

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_dir');
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0 });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await tdb?.drop();
  });
  afterEach(async () => {
    await call('POST', '/sandbox/faults', { directory: 'up', brebRail: 'up', achRail: 'up', pse: 'up', callbacks: 'up' });
  });

  it('finds any well-formed key with a holder derived deterministically from the key', async () => {
    const a = await lookup('3001234567');
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      anchorHandle: expect.stringMatching(/^anh_[0-9a-f]{24}$/),
      keyType: 'PHONE',
      keyValue: '3001234567',
      status: 'active',
      holder: {
        firstName: expect.stringMatching(/^[A-Z]+( [A-Z]+)?$/),
        lastName: expect.stringMatching(/^[A-Z]+ [A-Z]+$/),
        idType: 'CC',
        idValue: expect.stringMatching(/^[1-9]\d{7,9}$/),
        bankName: expect.any(String),
        bankAccountType: expect.stringMatching(/^(Ahorros|Corriente)$/),
      },
    });
    const again = await lookup('3001234567', 'PHONE');
    expect(again.body).toEqual(a.body);

    const other = await lookup('3001234568');
    expect(other.body.anchorHandle).not.toBe(a.body.anchorHandle);
    expect(other.body.holder).not.toEqual(a.body.holder);

    // Holders spread over names, banks and both account types.
    const holders = await Promise.all(Array.from({ length: 40 }, (_, i) => lookup(`@cliente${i}`)));
    const names = new Set(holders.map((h) => `${h.body.holder.firstName} ${h.body.holder.lastName}`));
    expect(names.size).toBeGreaterThan(35);
    expect(new Set(holders.map((h) => h.body.holder.bankName)).size).toBeGreaterThan(5);
    expect(new Set(holders.map((h) => h.body.holder.bankAccountType))).toEqual(new Set(['Ahorros', 'Corriente']));
  });

  it('detects the key type and normalizes the value', async () => {
    const email = await lookup('Ana.Gomez@Example.COM');
    expect(email.status).toBe(200);
    expect(email.body).toMatchObject({ keyType: 'EMAIL', keyValue: 'ana.gomez@example.com' });
    // Same key, other spelling: same holder.
    expect((await lookup('ana.gomez@example.com')).body).toEqual(email.body);

    expect((await lookup('@MiTienda')).body).toMatchObject({ keyType: 'ALPHANUM', keyValue: '@mitienda' });
    expect((await lookup('tienda.centro')).body).toMatchObject({ keyType: 'ALPHANUM', keyValue: 'tienda.centro' });

    // A document-number key is the holder's own cédula.
    const nric = await lookup('1020304050');
    expect(nric.body).toMatchObject({ keyType: 'NRIC', keyValue: '1020304050', holder: { idType: 'CC', idValue: '1020304050' } });
    expect((await lookup('12345')).body.keyType).toBe('NRIC');
    expect((await lookup('3001234567', 'auto')).body.keyType).toBe('PHONE');
    // An explicit type the value fits wins over detection.
    expect((await lookup('3001234567', 'NRIC')).body.keyType).toBe('NRIC');
  });

  it('answers 404 KEY_NOT_FOUND and inactive for the magic values', async () => {
    for (const key of ['3009999999', 'notfound@example.com', 'NotFound@Example.com', '@notfound']) {
      const r = await lookup(key);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'KEY_NOT_FOUND', message: expect.any(String) });
    }
    for (const key of ['3008888888', '@inactive']) {
      const r = await lookup(key);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ keyValue: key, status: 'inactive', holder: { idType: 'CC' } });
    }
  });

  it('refuses malformed keys and types with 400 INVALID_REQUEST', async () => {
    for (const [key, type] of [
      ['ab', undefined],
      ['hola mundo', undefined],
      ['abc', 'PHONE'],
      ['3001234567', 'EMAIL'],
      ['x@y', 'EMAIL'],
    ] as const) {
      const r = await lookup(key, type);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({
        error: 'INVALID_REQUEST',
        message: expect.any(String),
        details: { fields: [expect.objectContaining({ path: 'keyValue' })] },
      });
    }
    const badType = await lookup('3001234567', 'IBAN');
    expect(badType.status).toBe(400);
    expect(badType.body.details.fields[0].path).toBe('query.type');
  });

  it('answers 503 while the directory is down, and again once it is up', async () => {
    const down = await call('POST', '/sandbox/faults', { directory: 'down' });
    expect(down.status).toBe(200);
    expect(down.body).toEqual({ directory: 'down', brebRail: 'up', achRail: 'up', pse: 'up', callbacks: 'up' });
    expect((await call('GET', '/sandbox/faults')).body.directory).toBe('down');
    const r = await lookup('3001234567');
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' });
    await call('POST', '/sandbox/faults', { directory: 'up' });
    expect((await lookup('3001234567')).status).toBe(200);
  });

  it('validates the fault switches', async () => {
    const typo = await call('POST', '/sandbox/faults', { directroy: 'down' });
    expect(typo.status).toBe(400);
    expect(typo.body).toMatchObject({ error: 'INVALID_REQUEST', details: { fields: [{ path: 'directroy', message: expect.any(String) }] } });
    const value = await call('POST', '/sandbox/faults', { brebRail: 'off' });
    expect(value.status).toBe(400);
    expect(value.body.details.fields[0].path).toBe('brebRail');
    const notJson = await call('POST', '/sandbox/faults', '{"directory":', { 'content-type': 'application/json' });
    expect(notJson.status).toBe(400);
    const wrongType = await call('POST', '/sandbox/faults', 'directory=down', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(wrongType.status).toBe(415);
  });

  it('serves /healthz, /readyz, request ids and JSON 404s', async () => {
    expect(await call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await call('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', checks: { postgres: 'ok' } } });
    const nf = await call('GET', '/nope', undefined, { 'X-Request-Id': 'req-123' });
    expect(nf.status).toBe(404);
    expect(nf.body).toMatchObject({ error: 'ROUTE_NOT_FOUND' });
    expect(nf.headers.get('x-request-id')).toBe('req-123');
    expect((await call('DELETE', '/healthz')).status).toBe(405);
  });
});
