import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, signatureValid, sleep, txId } from './support.js';

describe('callback delivery: retries, held callbacks, restarts', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  const call = api(() => sandbox.url);
  const env = { SANDBOX_BREB_CONFIRM_MS: '150', SANDBOX_CALLBACK_SECRET: SECRET };

  async function send(name: string, via = call, amountCents = 50_000) {
    const key = '3157654321';
    const entry = (await via('GET', `/breb/directory/keys/${key}`)).body;
    const body = {
      transactionId: txId(name),
      amountCents,
      anchorHandle: entry.anchorHandle,
      keyType: 'PHONE',
      keyValue: key,
      targetName: 'ANA GOMEZ',
      targetDocument: '1020304050',
      callbackUrl: receiver.urlFor(name),
    };
    const r = await via('POST', '/breb/rail/transfers', body);
    expect(r.status).toBe(202);
    return body;
  }

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_cb');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env });
  });
  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    receiver.respond = () => 200;
    await call('POST', '/sandbox/faults', { callbacks: 'up' });
  });

  it('retries a callback that did not get a 2xx with exponential backoff, same eventId', async () => {
    receiver.respond = ({ path, nth }) => (path.endsWith('/retry') && nth <= 2 ? 500 : 200);
    await send('retry');
    const all = await receiver.waitFor('retry', 3, 15_000);
    expect(all.map((c) => c.status)).toEqual([500, 500, 200]);
    expect(new Set(all.map((c) => c.body.eventId)).size).toBe(1);
    expect(new Set(all.map((c) => c.raw)).size).toBe(1);
    expect(all.every((c) => signatureValid(c))).toBe(true);
    // 1 s, then 2 s (allow for the poll interval).
    const gap1 = all[1]!.at - all[0]!.at;
    const gap2 = all[2]!.at - all[1]!.at;
    expect(gap1).toBeGreaterThanOrEqual(950);
    expect(gap1).toBeLessThan(2_500);
    expect(gap2).toBeGreaterThanOrEqual(1_950);
    expect(gap2).toBeLessThan(3_500);
    await sleep(1_200);
    expect(receiver.for('retry')).toHaveLength(3); // delivered: no more attempts
  });

  it('retries when the receiver cannot be reached', async () => {
    // A port nobody listens on: the attempt fails at connect time and is retried.
    const dead = await CallbackReceiver.start();
    const deadUrl = dead.urlFor('gone');
    await dead.close();
    const key = '3157654321';
    const entry = (await call('GET', `/breb/directory/keys/${key}`)).body;
    const transactionId = txId('unreachable');
    await call('POST', '/breb/rail/transfers', {
      transactionId,
      amountCents: 1_000,
      anchorHandle: entry.anchorHandle,
      keyType: 'PHONE',
      keyValue: key,
      targetName: 'ANA GOMEZ',
      targetDocument: '1020304050',
      callbackUrl: deadUrl,
    });
    await sleep(600);
    // The outcome is recorded even though nobody heard about it; redeliver reports the failure.
    expect((await call('GET', `/breb/rail/transfers/${transactionId}`)).body.status).toBe('COMPLETED');
    const r = await call('POST', `/sandbox/callbacks/${transactionId}/redeliver`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ delivered: false, queued: true, responseStatus: null });
  });

  it('holds callbacks while `callbacks` is down and sends them when it is up again', async () => {
    await call('POST', '/sandbox/faults', { callbacks: 'down' });
    const body = await send('held');
    await sleep(700);
    expect(receiver.for('held')).toHaveLength(0);
    // The provider has the outcome; only the notification is late (what a sweeper would find).
    expect((await call('GET', `/breb/rail/transfers/${body.transactionId}`)).body.status).toBe('COMPLETED');
    // A redelivery request while down is queued too.
    expect(await call('POST', `/sandbox/callbacks/${body.transactionId}/redeliver`)).toMatchObject({
      status: 202,
      body: { queued: true, reason: 'CALLBACKS_DOWN' },
    });
    await sleep(200);
    expect(receiver.for('held')).toHaveLength(0);

    const upAt = Date.now();
    await call('POST', '/sandbox/faults', { callbacks: 'up' });
    const [cb] = await receiver.waitFor('held');
    expect(cb!.at - upAt).toBeLessThan(1_000);
    expect(cb!.body).toMatchObject({ transactionId: body.transactionId, status: 'COMPLETED' });
    expect(signatureValid(cb!)).toBe(true);
    await sleep(300);
    expect(receiver.for('held')).toHaveLength(1);
  });

  it('loses nothing across a restart: an outcome pending at stop is sent by the next instance', async () => {
    const slowEnv = { ...env, SANDBOX_BREB_CONFIRM_MS: '1000' };
    await sandbox.stop(); // one instance at a time in this test
    sandbox = await startSandbox({ databaseUrl: tdb.url, env: slowEnv });
    const body = await send('restart');
    await sandbox.stop(); // outcome still pending
    expect(receiver.for('restart')).toHaveLength(0);

    sandbox = await startSandbox({ databaseUrl: tdb.url, env: slowEnv });
    const [cb] = await receiver.waitFor('restart');
    expect(cb!.body).toMatchObject({ transactionId: body.transactionId, status: 'COMPLETED' });
    expect(signatureValid(cb!)).toBe(true);
    await sleep(300);
    expect(receiver.for('restart')).toHaveLength(1);
    await sandbox.stop();
    sandbox = await startSandbox({ databaseUrl: tdb.url, env });
  });

  it('loses nothing while down: an outcome due while no instance runs, and held callbacks, go out after a restart', async () => {
    const body = await send('restart-held');
    await call('POST', '/sandbox/faults', { callbacks: 'down' });
    await sandbox.stop();
    await sleep(400); // the outcome falls due while no sandbox runs
    expect(receiver.for('restart-held')).toHaveLength(0);

    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env });
    expect((await call('GET', '/sandbox/faults')).body.callbacks).toBe('down'); // the switches are state too
    await sleep(400);
    expect(receiver.for('restart-held')).toHaveLength(0);
    expect((await call('GET', `/breb/rail/transfers/${body.transactionId}`)).body.status).toBe('COMPLETED');
    await call('POST', '/sandbox/faults', { callbacks: 'up' });
    const [cb] = await receiver.waitFor('restart-held');
    expect(cb!.body).toMatchObject({ transactionId: body.transactionId, status: 'COMPLETED' });
    expect(signatureValid(cb!)).toBe(true);
  });

  it('keeps retrying after a restart (the retry schedule is in the database)', async () => {
    let failing = true;
    receiver.respond = ({ path }) => (path.endsWith('/restart-retry') && failing ? 503 : 200);
    await send('restart-retry');
    await receiver.waitFor('restart-retry', 1);
    await sandbox.stop();
    failing = false;
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env });
    const all = await receiver.waitFor('restart-retry', 2);
    expect(all.map((c) => c.status)).toEqual([503, 200]);
    expect(all[0]!.body.eventId).toBe(all[1]!.body.eventId);
  });

  it('delivers each callback once with several instances on one database', async () => {
    const other = await startSandbox({ databaseUrl: tdb.url, env });
    try {
      const names = Array.from({ length: 12 }, (_, i) => `multi-${i}`);
      await Promise.all(names.map((n, i) => send(n, i % 2 === 0 ? call : api(() => other.url))));
      for (const n of names) await receiver.waitFor(n);
      await sleep(500);
      for (const n of names) expect(receiver.for(n)).toHaveLength(1);
    } finally {
      await other.stop();
    }
  });
});
