import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { api, txId } from './support.js';

/**
 * Two sandbox instances on one database, as two replicas behind a load balancer: a fault switch
 * set through either applies to the very next provider call on both, with no wait, also while
 * other calls are reading the switches at the same time.
 */
describe('fault switches across instances', () => {
  let tdb: TestDatabase;
  let a: Awaited<ReturnType<typeof startSandbox>>;
  let b: Awaited<ReturnType<typeof startSandbox>>;
  const onA = api(() => a.url);
  const onB = api(() => b.url);
  const lookup = (call: typeof onA) => call('GET', '/breb/directory/keys/3001234567');
  const pseLink = (call: typeof onA) => call('POST', '/pse/links', {
    depositId: txId('dep_switch'), amountCents: 1_000_00, companyName: 'Ferretería El Tornillo S.A.S.',
    payerName: 'María José Pérez', payerEmail: 'maria@example.com', description: 'Recarga',
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(), callbackUrl: 'http://127.0.0.1:9/webhooks/none',
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

  it('a switch set on one instance applies to the very next call on the other', async () => {
    for (let i = 0; i < 10; i++) {
      const [setter, other] = i % 2 === 0 ? [onA, onB] : [onB, onA];
      expect((await setter('POST', '/sandbox/faults', { directory: 'down' })).status).toBe(200);
      const down = await lookup(other);
      expect(down.status).toBe(503);
      expect((await setter('POST', '/sandbox/faults', { directory: 'up' })).status).toBe(200);
      expect((await lookup(other)).status).toBe(200);
    }
  });

  it('applies at once while other calls read the switches concurrently', async () => {
    let stop = false;
    // Background readers on both instances: a read that started before a change must not
    // leave the old value behind for the next call.
    const readers = [onA, onB].map(async (call) => {
      while (!stop) await lookup(call);
    });
    try {
      for (let i = 0; i < 20; i++) {
        const [setter, other] = i % 2 === 0 ? [onA, onB] : [onB, onA];
        await setter('POST', '/sandbox/faults', { pse: 'down' });
        const down = await pseLink(i % 4 < 2 ? setter : other);
        expect(down.status).toBe(502);
        expect(down.body.error).toBe('PSE_PROVIDER_ERROR');
        await setter('POST', '/sandbox/faults', { pse: 'up' });
        expect((await pseLink(i % 4 < 2 ? other : setter)).status).toBe(201);
      }
    } finally {
      stop = true;
      await Promise.all(readers);
    }
  });
});
