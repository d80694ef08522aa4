import pg from 'pg';
import { createTestDatabase, eventually, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, brebQrPayload, signatureValid, sleep } from './support.js';

describe('Bre-B collect keys: participant registrations and inbound payments', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  const call = api(() => sandbox.url);
  let n = 0;
  /** An alias unique to this run. */
  const alias = (label: string) => `@${label}-${process.pid.toString(36)}-${Date.now().toString(36)}-${(n += 1)}`;
  const register = (keyValue: string, name: string, over: Record<string, unknown> = {}) =>
    call('POST', '/breb/directory/registrations', {
      keyValue,
      keyType: 'ALPHANUM',
      holderName: 'Ferretería El Tornillo',
      holderDocument: '900123456-7',
      participantCallbackUrl: receiver.urlFor(name),
      ...over,
    });
  const pay = (keyValue: string, over: Record<string, unknown> = {}) =>
    call('POST', '/sandbox/breb/incoming', {
      keyValue,
      amountCents: 150_000,
      payerName: 'Ana María Gómez',
      payerDocument: '1020304050',
      payerBank: 'Bancolombia',
      ...over,
    });
  const lookup = (key: string) => call('GET', `/breb/directory/keys/${encodeURIComponent(key)}`);

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_collect');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({
      databaseUrl: tdb.url,
      port: 0,
      env: { SANDBOX_CALLBACK_SECRET: SECRET, SANDBOX_POLL_MS: '50', SANDBOX_CALLBACK_RETRY_BASE_MS: '100', SANDBOX_BREB_CONFIRM_MS: '100' },
    });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    await call('POST', '/sandbox/faults', { directory: 'up', callbacks: 'up' });
  });

  it('registers a key (lower-cased), idempotently for the same callback URL; 409 for another', async () => {
    const key = alias('Tienda');
    const a = await register(key.toUpperCase(), 'reg');
    expect(a.status).toBe(201);
    expect(a.body).toEqual({ anchorHandle: expect.stringMatching(/^anh_[0-9a-f]{24}$/), keyValue: key.toLowerCase() });
    const b = await register(key, 'reg', { holderName: 'Otro Nombre' });
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const c = await register(key, 'reg-other');
    expect(c.status).toBe(409);
    expect(c.body.error).toBe('KEY_ALREADY_REGISTERED');
  });

  it('answers 503 while the directory is down, and 400 for a bad registration', async () => {
    await call('POST', '/sandbox/faults', { directory: 'down' });
    const down = await register(alias('down'), 'down');
    expect(down.status).toBe(503);
    expect(down.body.error).toBe('SERVICE_UNAVAILABLE');
    await call('POST', '/sandbox/faults', { directory: 'up' });
    const bad = await register('x', 'bad', { keyType: 'ALPHANUM', holderName: '', participantCallbackUrl: 'ftp://nope', holderDocument: 'a' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('INVALID_REQUEST');
    const paths = (bad.body.details.fields as Array<{ path: string }>).map((f) => f.path).sort();
    expect(paths).toEqual(['holderDocument', 'holderName', 'keyValue', 'participantCallbackUrl']);
    const misfit = await register('not a key!', 'bad');
    expect(misfit.status).toBe(400);
    expect(misfit.body.details.fields).toEqual([{ path: 'keyValue', message: expect.any(String) }]);
    expect((await register(alias('t'), 'bad', { keyType: 'IBAN' })).status).toBe(400);
  });

  it('a registered key resolves to its holder and anchor handle, over the deterministic holder', async () => {
    const key = alias('holder');
    const before = await lookup(key);
    expect(before.status).toBe(200);
    const reg = await register(key, 'holder', { holderName: '  Ferretería   El Tornillo S.A.S. ' });
    const r = await lookup(key.toUpperCase());
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      anchorHandle: reg.body.anchorHandle,
      keyType: 'ALPHANUM',
      keyValue: key,
      status: 'active',
      holder: {
        firstName: 'Ferretería El',
        lastName: 'Tornillo S.A.S.',
        idType: 'NIT',
        idValue: '900123456-7',
        bankName: 'Wallet',
        bankAccountType: 'Ahorros',
      },
    });
    expect(r.body.anchorHandle).not.toBe(before.body.anchorHandle);
    // A person's cédula → CC; a magic not-found value resolves once registered.
    await register('@notfound', 'holder', { holderName: 'Juan Pérez', holderDocument: '1020304050' });
    const person = await lookup('@notfound');
    expect(person.status).toBe(200);
    expect(person.body.holder).toMatchObject({ firstName: 'Juan', lastName: 'Pérez', idType: 'CC', idValue: '1020304050' });
    await call('DELETE', '/breb/directory/registrations/@notfound');
    expect((await lookup('@notfound')).status).toBe(404);
  });

  it('lookups read the registrations from memory, kept current by the change feed: another instance, another writer and a lost feed', async () => {
    const other = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_CALLBACK_SECRET: SECRET, SANDBOX_MIGRATE_ON_START: 'false' } });
    const sql = new pg.Client({ connectionString: tdb.url });
    await sql.connect();
    try {
      const lookupOn = (url: string, key: string) => api(() => url)('GET', `/breb/directory/keys/${encodeURIComponent(key)}`);
      const key = alias('feed');
      const deterministic = (await lookupOn(other.url, key)).body;
      // Registered through this instance: it answers at once; the other as soon as the notification arrives.
      const reg = await register(key, 'feed');
      expect((await lookup(key)).body.anchorHandle).toBe(reg.body.anchorHandle);
      expect(await eventually(async () => (await lookupOn(other.url, key)).body.anchorHandle === reg.body.anchorHandle, 3_000, 20)).toBe(true);
      // Another writer (SQL): both follow.
      await sql.query(`update sandbox.breb_registrations set holder_name = 'Tornillos Unidos' where key_value = $1 and deleted_at is null`, [key]);
      expect(await eventually(async () => (await lookupOn(other.url, key)).body.holder?.firstName === 'Tornillos', 3_000, 20)).toBe(true);
      expect(await eventually(async () => (await lookup(key)).body.holder?.firstName === 'Tornillos', 3_000, 20)).toBe(true);
      // Feeds lost: lookups read the table, so a deletion by SQL shows at once.
      await sql.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen sandbox_registrations%'`,
      );
      await sql.query(`update sandbox.breb_registrations set deleted_at = clock_timestamp() where key_value = $1 and deleted_at is null`, [key]);
      expect(await eventually(async () => (await lookupOn(other.url, key)).body.anchorHandle === deterministic.anchorHandle, 3_000, 20)).toBe(true);
      expect(await eventually(async () => (await lookup(key)).body.anchorHandle === deterministic.anchorHandle, 3_000, 20)).toBe(true);
    } finally {
      await sql.end();
      await other.stop();
    }
  });

  it('delete is a soft, idempotent delete: the key falls back to the deterministic holder and can be registered again', async () => {
    const key = alias('del');
    const deterministic = await lookup(key);
    const reg = await register(key, 'del');
    const d1 = await call('DELETE', `/breb/directory/registrations/${encodeURIComponent(key)}`);
    expect(d1).toMatchObject({ status: 200, body: { keyValue: key, deleted: true } });
    const d2 = await call('DELETE', `/breb/directory/registrations/${encodeURIComponent(key)}`);
    expect(d2).toMatchObject({ status: 200, body: { keyValue: key, deleted: false } });
    expect((await call('DELETE', `/breb/directory/registrations/${encodeURIComponent(alias('never'))}`)).status).toBe(200);
    expect((await lookup(key)).body).toEqual(deterministic.body);
    const again = await register(key, 'del-other');
    expect(again.status).toBe(201);
    expect(again.body.anchorHandle).not.toBe(reg.body.anchorHandle);
  });

  it('an inbound payment sends a signed callback to the participant; redeliver resends it with the same eventId', async () => {
    const key = alias('pay');
    const reg = await register(key, 'pay');
    const r = await pay(key.toUpperCase(), { amountCents: 987_654 });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ providerTransferId: expect.stringMatching(/^brb_in_[0-9a-f]{24}$/), eventId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const [cb] = await receiver.waitFor('pay');
    expect(signatureValid(cb!)).toBe(true);
    expect(signatureValid(cb!, 'another-secret')).toBe(false);
    expect(cb!.headers['content-type']).toBe('application/json');
    expect(cb!.body).toEqual({
      eventId: r.body.eventId,
      providerTransferId: r.body.providerTransferId,
      keyValue: key,
      anchorHandle: reg.body.anchorHandle,
      amountCents: 987_654,
      payerName: 'Ana María Gómez',
      payerDocument: '1020304050',
      payerBank: 'Bancolombia',
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      occurredAt: expect.any(String),
    });
    const re = await call('POST', `/sandbox/callbacks/${r.body.providerTransferId}/redeliver`);
    expect(re).toMatchObject({ status: 200, body: { eventId: r.body.eventId, transactionId: r.body.providerTransferId, delivered: true } });
    const two = await receiver.waitFor('pay', 2);
    expect(two[1]!.raw).toBe(cb!.raw);
    expect(signatureValid(two[1]!)).toBe(true);
  });

  it('a deleted registration still receives payments (the last holder); retries and the callbacks fault apply', async () => {
    const key = alias('gone');
    const reg = await register(key, 'gone');
    await call('DELETE', `/breb/directory/registrations/${encodeURIComponent(key)}`);
    await call('POST', '/sandbox/faults', { callbacks: 'down' });
    receiver.respond = ({ path, nth }) => (path === '/webhooks/gone' && nth === 1 ? 500 : 200);
    try {
      const r = await pay(key);
      expect(r.status).toBe(202);
      await sleep(250);
      expect(receiver.for('gone')).toHaveLength(0);
      await call('POST', '/sandbox/faults', { callbacks: 'up' });
      const [first, second] = await receiver.waitFor('gone', 2);
      expect(first!.status).toBe(500);
      expect(second!.raw).toBe(first!.raw);
      // The deleted registration it was routed to, named in the notification.
      expect(second!.body).toMatchObject({
        providerTransferId: r.body.providerTransferId,
        eventId: r.body.eventId,
        keyValue: key,
        anchorHandle: reg.body.anchorHandle,
      });
    } finally {
      receiver.respond = () => 200;
    }
  });

  it('after re-registration, payments go to the new participant', async () => {
    const key = alias('moved');
    await register(key, 'moved-a');
    await call('DELETE', `/breb/directory/registrations/${encodeURIComponent(key)}`);
    await register(key, 'moved-b');
    await pay(key);
    await receiver.waitFor('moved-b');
    expect(receiver.for('moved-a')).toHaveLength(0);
  });

  it('404 KEY_NOT_FOUND for a value never registered; 400 for bad input; redeliver of an unknown id → 404', async () => {
    const unknown = await pay(alias('never'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('KEY_NOT_FOUND');
    const key = alias('bad');
    await register(key, 'bad-pay');
    for (const over of [
      { amountCents: 0 },
      { amountCents: 1.5 },
      { amountCents: '100' },
      { payerName: '' },
      { payerDocument: ' ' },
      { payerDocument: 'x'.repeat(41) },
      { payerBank: undefined },
      { keyValue: 'not a key!' },
    ]) {
      const r = await pay(key, over);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('INVALID_REQUEST');
    }
    expect((await pay(key, { amountCents: 1, payerDocument: 'CC 79123456' })).status).toBe(202);
    expect((await call('POST', '/sandbox/callbacks/brb_in_000000000000000000000000/redeliver')).status).toBe(404);
  });

  describe('paying a QR by its payload (the payer reads it: key, amount, transaction id, expiry)', () => {
    const payQr = (qrPayload: string, over: Record<string, unknown> = {}) =>
      call('POST', '/sandbox/breb/incoming', { qrPayload, payerName: 'Ana María Gómez', payerDocument: '1020304050', payerBank: 'Nequi', ...over });
    const inAnHour = () => new Date(Date.now() + 3_600_000);

    it("pays the QR's amount to its key, and the notification carries the QR's transaction id", async () => {
      const key = alias('qr');
      const reg = await register(key, 'qr');
      const r = await payQr(brebQrPayload({ keyValue: key, amountCents: 1_500_050, transactionId: 'TX-COB-0001', expiresAt: inAnHour() }));
      expect(r.status).toBe(202);
      const [cb] = await receiver.waitFor('qr');
      expect(signatureValid(cb!)).toBe(true);
      expect(cb!.body).toMatchObject({
        providerTransferId: r.body.providerTransferId,
        keyValue: key,
        anchorHandle: reg.body.anchorHandle,
        amountCents: 1_500_050,
        payerBank: 'Nequi',
        transactionId: 'TX-COB-0001',
      });
      // A payment by key carries none.
      await pay(key, { amountCents: 100 });
      const two = await receiver.waitFor('qr', 2);
      expect(two[1]!.body).not.toHaveProperty('transactionId');
    });

    it("an amount in the body overrides the QR's (paying a different amount); a QR without one needs it", async () => {
      const key = alias('qr-amt');
      await register(key, 'qr-amt');
      const fixed = brebQrPayload({ keyValue: key, amountCents: 50_000, transactionId: 'TX-AMT', expiresAt: inAnHour() });
      expect((await payQr(fixed, { amountCents: 20_000 })).status).toBe(202);
      const open = brebQrPayload({ keyValue: key, transactionId: 'TX-OPEN', expiresAt: inAnHour() });
      const none = await payQr(open);
      expect(none.status).toBe(400);
      expect(none.body).toMatchObject({ error: 'INVALID_REQUEST', details: { fields: [{ path: 'amountCents' }] } });
      expect((await payQr(open, { amountCents: 7_777 })).status).toBe(202);
      const cbs = await receiver.waitFor('qr-amt', 2);
      expect(cbs.map((c) => [c.body.amountCents, c.body.transactionId]).sort()).toEqual([
        [20_000, 'TX-AMT'],
        [7_777, 'TX-OPEN'],
      ]);
    });

    it('refuses an expired QR with 422 QR_EXPIRED unless ignoreExpiry; a QR without an expiry never expires', async () => {
      const key = alias('qr-exp');
      await register(key, 'qr-exp');
      const expired = brebQrPayload({ keyValue: key, amountCents: 10_000, transactionId: 'TX-LATE', expiresAt: new Date(Date.now() - 1_000) });
      const refused = await payQr(expired);
      expect(refused).toMatchObject({ status: 422, body: { error: 'QR_EXPIRED' } });
      const late = await payQr(expired, { ignoreExpiry: true });
      expect(late.status).toBe(202);
      expect((await payQr(brebQrPayload({ keyValue: key, amountCents: 10_000 }))).status).toBe(202);
      const cbs = await receiver.waitFor('qr-exp', 2);
      expect(cbs.find((c) => c.body.providerTransferId === late.body.providerTransferId)?.body.transactionId).toBe('TX-LATE');
    });

    it('400 "QR inválido" for a bad CRC or no Bre-B key; 400 for both or neither of keyValue and qrPayload; 404 for an unregistered key', async () => {
      const key = alias('qr-bad');
      await register(key, 'qr-bad');
      const good = brebQrPayload({ keyValue: key, amountCents: 10_000, transactionId: 'TX-BAD', expiresAt: inAnHour() });
      const corrupted = good.replace('TX-BAD', 'TX-BAE');
      for (const bad of [corrupted, good.slice(0, -4) + '0000', 'not a qr', brebQrPayload({ keyValue: key, amountCents: 1, gui: 'BR.GOV.BCB.PIX' })]) {
        const r = await payQr(bad);
        expect(r.status).toBe(400);
        expect(r.body).toMatchObject({ error: 'INVALID_REQUEST', message: 'QR inválido.' });
      }
      expect((await payQr(good, { keyValue: key })).status).toBe(400);
      expect((await call('POST', '/sandbox/breb/incoming', { payerName: 'A', payerDocument: '123', payerBank: 'B', amountCents: 1 })).status).toBe(400);
      expect((await pay(key, { ignoreExpiry: true })).status).toBe(400);
      const unknown = await payQr(brebQrPayload({ keyValue: alias('never-qr'), amountCents: 100 }));
      expect(unknown).toMatchObject({ status: 404, body: { error: 'KEY_NOT_FOUND' } });
      await sleep(100);
      expect(receiver.for('qr-bad')).toHaveLength(0);
    });
  });

  it('a Bre-B rail transfer to a registered key settles against the registration anchor handle', async () => {
    const key = alias('rail');
    const reg = await register(key, 'rail-reg');
    const send = (transactionId: string, anchorHandle: string, name: string) =>
      call('POST', '/breb/rail/transfers', {
        transactionId,
        amountCents: 10_000,
        anchorHandle,
        keyType: 'ALPHANUM',
        keyValue: key,
        targetName: 'Ferretería',
        targetDocument: '900123456',
        callbackUrl: receiver.urlFor(name),
      });
    const id = `${key.slice(1)}-ok`;
    expect((await send(id, reg.body.anchorHandle, 'rail-ok')).status).toBe(202);
    expect((await send(`${id}-x`, 'anh_000000000000000000000000', 'rail-bad')).status).toBe(202);
    const [ok] = await receiver.waitFor('rail-ok');
    expect(ok!.body).toMatchObject({ transactionId: id, status: 'COMPLETED' });
    const [bad] = await receiver.waitFor('rail-bad');
    expect(bad!.body).toMatchObject({ status: 'FAILED', errorMessage: 'El anchorHandle no corresponde a la llave de destino' });
  });

  const ret = (body: Record<string, unknown>) => call('POST', '/breb/network/returns', body);
  const bogotaToday = () => new Date(Date.now() - 5 * 3600_000).toISOString().slice(0, 10); // Bogotá (UTC-5)
  /** The breb-inbound report's lines of one payment: provider_id … status. */
  const reportLines = async (ptid: string) =>
    String((await call('GET', `/sandbox/reports/breb-inbound/${bogotaToday()}.csv`)).body)
      .split('\r\n')
      .filter((l) => l.startsWith(`${ptid},`))
      .map((l) => l.split(',').slice(0, 6).join(','));
  const paid = async (label: string, amountCents: number) => {
    const key = alias(label);
    await register(key, label);
    const r = await pay(key, { amountCents });
    expect(r.status).toBe(202);
    return String((r.body as Record<string, unknown>).providerTransferId);
  };

  it('a participant returns an inbound payment in full (issue 35), idempotent by returnId; the breb-inbound report carries RECEIVED (IN) and RETURNED (OUT, our_id the returnId)', async () => {
    const ptid = await paid('ret', 43_210);
    expect((await ret({ returnId: 'ret-x', providerTransferId: 'brb_in_unknown', amountCents: 1 })).status).toBe(404);
    const first = await ret({ returnId: `ret-1-${ptid}`, providerTransferId: ptid, amountCents: 43_210 });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ returnId: `ret-1-${ptid}`, providerTransferId: ptid, status: 'RETURNED', returnedAt: expect.stringMatching(/Z$/) });
    const again = await ret({ returnId: `ret-1-${ptid}`, providerTransferId: ptid, amountCents: 43_210 });
    expect([again.status, again.headers.get('idempotent-replayed'), (again.body as Record<string, unknown>).returnedAt]).toEqual([
      200,
      'true',
      (first.body as Record<string, unknown>).returnedAt,
    ]);
    // Nothing is left to return.
    expect(await ret({ returnId: `ret-2-${ptid}`, providerTransferId: ptid, amountCents: 1 })).toMatchObject({
      status: 409,
      body: { error: 'RETURN_EXCEEDS_PAYMENT', details: { remainingCents: 0 } },
    });
    expect(await reportLines(ptid)).toEqual([`${ptid},,IN,43210,0,RECEIVED`, `${ptid},ret-1-${ptid},OUT,43210,0,RETURNED`]);
  });

  it('returns a payment in parts, several times, up to its amount: replays, other terms under a used returnId (409 ALREADY_RETURNED), past the amount (409 RETURN_EXCEEDS_PAYMENT); one report line per return', async () => {
    const ptid = await paid('parts', 10_000);
    const other = await paid('parts-other', 5_000);
    const id = (n: number) => `ret_${n}_${ptid.slice(-12)}`;
    const a = await ret({ returnId: id(1), providerTransferId: ptid, amountCents: 3_000 });
    expect([a.status, a.headers.get('idempotent-replayed')]).toEqual([201, null]);
    const b = await ret({ returnId: id(2), providerTransferId: ptid, amountCents: 2_500 });
    expect(b.status).toBe(201);
    // A replay of the first (same payment, same amount) after the second: the same return.
    const replay = await ret({ returnId: id(1), providerTransferId: ptid, amountCents: 3_000 });
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body]).toEqual([200, 'true', a.body]);
    // The same returnId with another amount, or for another payment: a conflict, nothing recorded.
    const conflict = await ret({ returnId: id(1), providerTransferId: ptid, amountCents: 3_001 });
    expect([conflict.status, (conflict.body as Record<string, unknown>).error]).toEqual([409, 'ALREADY_RETURNED']);
    expect(String((conflict.body as Record<string, unknown>).message)).toMatch(/returnId/);
    expect(await ret({ returnId: id(2), providerTransferId: other, amountCents: 2_500 })).toMatchObject({ status: 409, body: { error: 'ALREADY_RETURNED' } });
    // 4,500 left: 4,501 is too much (a Spanish message naming what is left), nothing recorded; 4,500 passes.
    const over = await ret({ returnId: id(3), providerTransferId: ptid, amountCents: 4_501 });
    expect(over).toMatchObject({ status: 409, body: { error: 'RETURN_EXCEEDS_PAYMENT', details: { remainingCents: 4_500 } } });
    expect(String((over.body as Record<string, unknown>).message)).toContain('quedan 4500 centavos');
    expect((await ret({ returnId: id(3), providerTransferId: ptid, amountCents: 4_500 })).status).toBe(201);
    expect(await ret({ returnId: id(4), providerTransferId: ptid, amountCents: 1 })).toMatchObject({ status: 409, body: { error: 'RETURN_EXCEEDS_PAYMENT' } });
    // More than the payment at once; 0 is no amount.
    expect(await ret({ returnId: id(5), providerTransferId: other, amountCents: 5_001 })).toMatchObject({
      status: 409,
      body: { error: 'RETURN_EXCEEDS_PAYMENT' },
    });
    expect((await ret({ returnId: id(5), providerTransferId: other, amountCents: 0 })).status).toBe(400);

    const lines = await reportLines(ptid);
    expect(lines[0]).toBe(`${ptid},,IN,10000,0,RECEIVED`);
    expect(lines.slice(1).sort()).toEqual([
      `${ptid},${id(1)},OUT,3000,0,RETURNED`,
      `${ptid},${id(2)},OUT,2500,0,RETURNED`,
      `${ptid},${id(3)},OUT,4500,0,RETURNED`,
    ]);
    expect(await reportLines(other)).toEqual([`${other},,IN,5000,0,RECEIVED`]);
  });

  it("two returns racing for the last peso of a payment: exactly one wins (the sum is decided under the payment's row lock)", async () => {
    for (let round = 0; round < 3; round += 1) {
      const ptid = await paid(`race${round}`, 10_000);
      expect((await ret({ returnId: `race-a-${ptid}`, providerTransferId: ptid, amountCents: 9_999 })).status).toBe(201);
      const racing = await Promise.all(['b', 'c'].map((x) => ret({ returnId: `race-${x}-${ptid}`, providerTransferId: ptid, amountCents: 1 })));
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(racing.find((r) => r.status === 409)!.body).toMatchObject({ error: 'RETURN_EXCEEDS_PAYMENT', details: { remainingCents: 0 } });
      // And the same returnId twice at once: one return, the other answer its replay.
      const twin = await paid(`twin${round}`, 10_000);
      const same = await Promise.all([0, 1].map(() => ret({ returnId: `twin-${twin}`, providerTransferId: twin, amountCents: 10_000 })));
      expect(same.map((r) => r.status).sort()).toEqual([200, 201]);
      expect(new Set(same.map((r) => (r.body as Record<string, unknown>).returnedAt)).size).toBe(1);
      expect((await reportLines(twin)).filter((l) => l.includes(',OUT,'))).toEqual([`${twin},twin-${twin},OUT,10000,0,RETURNED`]);
    }
  });

  it('answers 503 while the Bre-B rail is down, recording nothing', async () => {
    const ptid = await paid('ret-down', 1_000);
    await call('POST', '/sandbox/faults', { brebRail: 'down' });
    try {
      expect(await ret({ returnId: `down-${ptid}`, providerTransferId: ptid, amountCents: 1_000 })).toMatchObject({
        status: 503,
        body: { error: 'SERVICE_UNAVAILABLE' },
      });
    } finally {
      await call('POST', '/sandbox/faults', { brebRail: 'up' });
    }
    expect(await reportLines(ptid)).toEqual([`${ptid},,IN,1000,0,RECEIVED`]);
    expect((await ret({ returnId: `down-${ptid}`, providerTransferId: ptid, amountCents: 1_000 })).status).toBe(201);
  });
});
