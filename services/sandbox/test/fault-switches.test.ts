import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { api, sleep, txId } from './support.js';

/**
 * Two sandbox instances on one database, as two replicas behind a load balancer. The switches are
 * read from memory and kept current by a change feed (LISTEN/NOTIFY): a switch set through either
 * applies to the very next provider call on that instance, and on the other as soon as the feed
 * delivers it; a read racing a change never brings the old value back; with the feed lost, each
 * call reads the database until it is back.
 */
describe('fault switches across instances', () => {
  let tdb: TestDatabase;
  let a: Awaited<ReturnType<typeof startSandbox>>;
  let b: Awaited<ReturnType<typeof startSandbox>>;
  const onA = api(() => a.url);
  const onB = api(() => b.url);
  const lookup = (call: typeof onA) => call('GET', '/breb/directory/keys/3001234567');
  const pseLink = (call: typeof onA) =>
    call('POST', '/pse/links', {
      depositId: txId('dep_switch'),
      amountCents: 1_000_00,
      companyName: 'Ferretería El Tornillo S.A.S.',
      payerName: 'María José Pérez',
      payerEmail: 'maria@example.com',
      description: 'Recarga',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      callbackUrl: 'http://127.0.0.1:9/webhooks/none',
    });

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_switch');
    // The schedulers poll (and read the callbacks switch) every 20 ms on both instances.
    a = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_POLL_MS: '20' } });
    b = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { SANDBOX_POLL_MS: '20' } });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await tdb?.drop();
  });

  /** Calls until `ok` holds (the change feed's delivery to the other instance), for at most 2 s. */
  async function eventually<T>(call: () => Promise<T>, ok: (r: T) => boolean): Promise<T> {
    const deadline = Date.now() + 2_000;
    for (;;) {
      const r = await call();
      if (ok(r) || Date.now() > deadline) return r;
      await sleep(5);
    }
  }

  it('a switch set on one instance applies to its very next call, and on the other once the feed delivers it', async () => {
    for (let i = 0; i < 10; i++) {
      const [setter, other] = i % 2 === 0 ? [onA, onB] : [onB, onA];
      expect((await setter('POST', '/sandbox/faults', { directory: 'down' })).status).toBe(200);
      expect((await lookup(setter)).status).toBe(503);
      expect(
        (
          await eventually(
            () => lookup(other),
            (r) => r.status === 503,
          )
        ).status,
      ).toBe(503);
      expect((await setter('POST', '/sandbox/faults', { directory: 'up' })).status).toBe(200);
      expect((await lookup(setter)).status).toBe(200);
      expect(
        (
          await eventually(
            () => lookup(other),
            (r) => r.status === 200,
          )
        ).status,
      ).toBe(200);
    }
  });

  it('a change stays applied while other calls read the switches concurrently (no stale value comes back)', async () => {
    let stop = false;
    const readers = [onA, onB].map(async (call) => {
      while (!stop) await lookup(call);
    });
    try {
      for (let i = 0; i < 20; i++) {
        const [setter, other] = i % 2 === 0 ? [onA, onB] : [onB, onA];
        await setter('POST', '/sandbox/faults', { pse: 'down' });
        expect((await pseLink(setter)).status).toBe(502);
        await eventually(
          () => pseLink(other),
          (r) => r.status === 502,
        );
        for (const call of [setter, other, setter, other]) {
          const down = await pseLink(call);
          expect(down.status).toBe(502);
          expect(down.body.error).toBe('PSE_PROVIDER_ERROR');
        }
        await setter('POST', '/sandbox/faults', { pse: 'up' });
        expect((await pseLink(setter)).status).toBe(201);
        await eventually(
          () => pseLink(other),
          (r) => r.status === 201,
        );
        for (const call of [other, setter]) expect((await pseLink(call)).status).toBe(201);
      }
    } finally {
      stop = true;
      await Promise.all(readers);
    }
  });

  it('with the feed lost, a change made meanwhile still reaches the other instance (database reads, then a reload); the feed comes back', async () => {
    const admin = new pg.Client({ connectionString: tdb.url });
    await admin.connect();
    const listening = `from pg_stat_activity where datname = current_database() and query ilike 'listen sandbox_faults%'`;
    const listeners = async () => (await admin.query<{ pid: number }>(`select pid ${listening}`)).rows.map((r) => r.pid);
    try {
      expect((await listeners()).length).toBe(2);
      await admin.query(`select pg_terminate_backend(pid) ${listening}`);
      // A change made while they do not listen is never notified to them: once each has seen its
      // connection end (milliseconds), it reads the database on every call until it listens again
      // (about a second later) and reloads. Without that, the other instance would keep the old value.
      expect((await onA('POST', '/sandbox/faults', { directory: 'down' })).status).toBe(200);
      expect(
        (
          await eventually(
            () => lookup(onB),
            (r) => r.status === 503,
          )
        ).status,
      ).toBe(503);
      expect((await onB('POST', '/sandbox/faults', { directory: 'up' })).status).toBe(200);
      expect(
        (
          await eventually(
            () => lookup(onA),
            (r) => r.status === 200,
          )
        ).status,
      ).toBe(200);
      const deadline = Date.now() + 10_000;
      while ((await listeners()).length < 2 && Date.now() < deadline) await sleep(50);
      expect((await listeners()).length).toBe(2);
      expect((await onA('POST', '/sandbox/faults', { directory: 'down' })).status).toBe(200);
      expect(
        (
          await eventually(
            () => lookup(onB),
            (r) => r.status === 503,
          )
        ).status,
      ).toBe(503);
      await onA('POST', '/sandbox/faults', { directory: 'up' });
      expect(
        (
          await eventually(
            () => lookup(onB),
            (r) => r.status === 200,
          )
        ).status,
      ).toBe(200);
    } finally {
      await admin.end();
    }
  });
});
