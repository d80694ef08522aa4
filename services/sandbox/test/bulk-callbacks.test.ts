import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Database, createLogger } from '@wallet/platform';
import { createTestDatabase, eventually, type TestDatabase } from '@wallet/platform/testing';
import { RailTransfers } from '../src/app/rail-transfers.js';
import { CallbackDispatcher } from '../src/delivery/callback-dispatcher.js';
import { verifyCallbackSignature } from '../src/domain/callbacks.js';
import { sandboxMigrations } from '../src/persistence/migrations/index.js';
import { SandboxStore } from '../src/persistence/sandbox.store.js';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, achTransfer, api, signatureValid, txId, type ReceivedCallback } from './support.js';

/**
 * Bulk outcome callbacks (docs/sandbox.md "Bulk outcomes", SANDBOX_BULK_CALLBACKS): the rail transfer
 * outcomes due together for one callback URL go as one signed `rail.outcomes` request. Through
 * HTTP on real Postgres, with a loopback receiver. The callbacks are held (`callbacks: down`) until
 * every outcome of a test is recorded, so they are all due together when the switch goes up.
 */

interface StoredCallback {
  event_id: string;
  transaction_id: string;
  body: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}

const isBulk = (cb: ReceivedCallback) => cb.body.type === 'rail.outcomes';
const outcomesOf = (cb: ReceivedCallback) => cb.body.outcomes as Array<Record<string, unknown> & { eventId: string; transactionId: string }>;

describe('bulk outcome callbacks', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  let sql: pg.Client;
  const call = api(() => sandbox.url);
  const env = {
    SANDBOX_BREB_CONFIRM_MS: '100',
    SANDBOX_ACH_CONFIRM_MS: '100',
    SANDBOX_ACH_PRENOTE_MS: '100',
    SANDBOX_CALLBACK_RETRY_BASE_MS: '300',
    SANDBOX_CALLBACK_SECRET: SECRET,
    SANDBOX_BULK_CALLBACKS: 'true',
  };
  let anchor = '';

  const breb = (name: string, amountCents = 150_000) => ({
    transactionId: txId(name),
    amountCents,
    anchorHandle: anchor,
    keyType: 'PHONE',
    keyValue: '3001234567',
    targetName: 'CAMILO MARIN',
    targetDocument: '40828038',
    callbackUrl: receiver.urlFor(name),
  });
  const ach = (name: string) => achTransfer(txId(name), receiver.urlFor(name));

  /** Submits through the bulk submission endpoint, 200 a call; every transfer must be taken. */
  async function submit(path: '/breb/rail/transfers/bulk' | '/ach/transfers/bulk', transfers: Array<{ transactionId: string }>) {
    for (let i = 0; i < transfers.length; i += 200) {
      const r = await call('POST', path, { transfers: transfers.slice(i, i + 200) });
      expect(r.status).toBe(200);
      expect(r.body.results.every((x: { status: number }) => x.status === 202)).toBe(true);
    }
    return transfers;
  }

  async function rowsFor(name: string): Promise<StoredCallback[]> {
    const r = await sql.query<StoredCallback>(
      `select event_id::text as event_id, transaction_id, body, state, attempts, last_status, last_error
         from sandbox.callbacks where callback_url = $1 order by event_id`,
      [receiver.urlFor(name)],
    );
    return r.rows;
  }

  /** Holds the callbacks while `submit` runs and until `expected` callbacks are recorded for these names, then lets them go. */
  async function held<T>(names: Record<string, number>, submitAll: () => Promise<T>): Promise<T> {
    await call('POST', '/sandbox/faults', { callbacks: 'down' });
    const out = await submitAll();
    for (const [name, n] of Object.entries(names)) await eventually(async () => (await rowsFor(name)).length === n, 15_000);
    await call('POST', '/sandbox/faults', { callbacks: 'up' });
    return out;
  }

  /** Waits until the n callbacks for this name are delivered; returns them. */
  const allDelivered = (name: string, n: number) =>
    eventually(async () => {
      const rows = await rowsFor(name);
      return rows.length === n && rows.every((r) => r.state === 'delivered') ? rows : undefined;
    }, 20_000);

  /** The receiver's check of a bulk request: signed over its raw bytes, and exactly the stored bodies wrapped. */
  function expectExactBulk(cb: ReceivedCallback, stored: StoredCallback[]) {
    const byEvent = new Map(stored.map((r) => [r.event_id, r.body]));
    const header = cb.headers['x-provider-signature'];
    expect(typeof header).toBe('string');
    expect(verifyCallbackSignature(SECRET, cb.raw, header as string, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifyCallbackSignature('another-secret-0000', cb.raw, header as string, Math.floor(Date.now() / 1000))).toBe(false);
    expect(signatureValid(cb)).toBe(true);
    expect(cb.headers['content-type']).toBe('application/json');
    expect(Object.keys(cb.body)).toEqual(['type', 'outcomes']);
    const bodies = outcomesOf(cb).map((o) => byEvent.get(o.eventId));
    expect(bodies.every((b) => b !== undefined)).toBe(true);
    expect(cb.raw).toBe(`{"type":"rail.outcomes","outcomes":[${bodies.join(',')}]}`);
  }

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_bulkcb');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env });
    sql = new pg.Client({ connectionString: tdb.url });
    await sql.connect();
    anchor = (await call('GET', '/breb/directory/keys/3001234567')).body.anchorHandle;
  });
  afterAll(async () => {
    await sandbox?.stop();
    await sql?.end();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    receiver.respond = () => 200;
    await call('POST', '/sandbox/faults', { callbacks: 'up' });
    // The lease holds nothing for good: whatever a test claimed is delivered, pending or abandoned by now.
    await eventually(async () => (await sql.query(`select 1 from sandbox.callbacks where state = 'sending'`)).rowCount === 0, 10_000);
  });

  it('sends the outcomes due together for one URL as ONE signed request whose outcomes are the stored bodies', async () => {
    const items = await held({ together: 5 }, () =>
      submit('/breb/rail/transfers/bulk', [breb('together'), breb('together', 2_013), breb('together'), breb('together'), breb('together')]),
    );
    const rows = await allDelivered('together', 5);
    const got = receiver.for('together');
    expect(got).toHaveLength(1);
    const [cb] = got;
    expect(isBulk(cb!)).toBe(true);
    expect(cb!.status).toBe(200);
    expectExactBulk(cb!, rows);
    expect(new Set(outcomesOf(cb!).map((o) => o.transactionId))).toEqual(new Set(items.map((t) => t.transactionId)));
    expect(new Set(outcomesOf(cb!).map((o) => o.eventId))).toEqual(new Set(rows.map((r) => r.event_id)));
    // Each outcome reads as its single callback would, the failed one with its message.
    const failed = outcomesOf(cb!).find((o) => o.transactionId === items[1]!.transactionId);
    expect(failed).toMatchObject({ rail: 'BREB', status: 'FAILED', errorMessage: expect.any(String) });
    expect(outcomesOf(cb!).filter((o) => o.status === 'COMPLETED')).toHaveLength(4);
    // Each is delivered as a single one is: one attempt, the receiver's status.
    expect(rows.every((r) => r.attempts === 1 && r.last_status === 200)).toBe(true);

    // A redelivery stays single: the stored body alone, same eventId.
    const one = rows.find((r) => r.transaction_id === items[2]!.transactionId)!;
    const re = await call('POST', `/sandbox/callbacks/${items[2]!.transactionId}/redeliver`);
    expect(re).toMatchObject({ status: 200, body: { eventId: one.event_id, delivered: true, responseStatus: 200 } });
    const after = receiver.for('together');
    expect(after).toHaveLength(2);
    expect(after[1]!.raw).toBe(one.body);
    expect(signatureValid(after[1]!)).toBe(true);
  });

  it('groups only the rails’ transfer outcomes: prenotes, inbound payments and PSE callbacks to the same URL go alone', async () => {
    const alias = `@bulkmix-${process.pid.toString(36)}`;
    const depositId = txId('dep_mixed');
    const { transfers, prenoteIds } = await held({ mixed: 7, 'mixed-ach': 3 }, async () => {
      const transfers = await submit('/breb/rail/transfers/bulk', [breb('mixed'), breb('mixed'), breb('mixed')]);
      await submit('/ach/transfers/bulk', [ach('mixed-ach'), ach('mixed-ach'), ach('mixed-ach')]);
      const prenoteIds = [txId('pn'), txId('pn')];
      for (const prenoteId of prenoteIds) {
        const r = await call('POST', '/ach/prenotes', {
          prenoteId,
          bankCode: '1007',
          accountTypeId: 20,
          accountNumber: '12345678901',
          documentTypeId: 1,
          documentNumber: '1020304050',
          callbackUrl: receiver.urlFor('mixed'),
        });
        expect(r.status).toBe(202);
      }
      const reg = await call('POST', '/breb/directory/registrations', {
        keyValue: alias,
        keyType: 'ALPHANUM',
        holderName: 'Ferretería El Tornillo',
        participantCallbackUrl: receiver.urlFor('mixed'),
      });
      expect(reg.status).toBe(201);
      const paid = await call('POST', '/sandbox/breb/incoming', {
        keyValue: alias,
        amountCents: 5_000,
        payerName: 'Ana',
        payerDocument: 'CC 1',
        payerBank: 'Nequi',
      });
      expect(paid.status).toBe(202);
      const link = await call('POST', '/pse/links', {
        depositId,
        amountCents: 10_000,
        companyName: 'Ferretería El Tornillo S.A.S.',
        payerName: 'María José Pérez',
        payerEmail: 'maria@example.com',
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        callbackUrl: receiver.urlFor('mixed'),
      });
      expect(link.status).toBe(201);
      expect((await call('POST', `/sandbox/pse/${depositId}/pay`, { outcome: 'APPROVED' })).status).toBe(200);
      return { transfers, prenoteIds };
    });
    const rows = await allDelivered('mixed', 7);
    const achRows = await allDelivered('mixed-ach', 3);

    const got = receiver.for('mixed');
    expect(got).toHaveLength(5); // one bulk request of the 3 transfer outcomes, 4 singles
    const bulk = got.filter(isBulk);
    expect(bulk).toHaveLength(1);
    expect(new Set(outcomesOf(bulk[0]!).map((o) => o.transactionId))).toEqual(new Set(transfers.map((t) => t.transactionId)));
    expectExactBulk(bulk[0]!, rows);
    const singles = got.filter((c) => !isBulk(c));
    expect(new Set(singles.map((c) => c.body.prenoteId).filter(Boolean))).toEqual(new Set(prenoteIds));
    expect(singles.filter((c) => c.body.type === 'ach.prenote')).toHaveLength(2);
    expect(singles.filter((c) => c.body.keyValue === alias)).toHaveLength(1);
    expect(singles.filter((c) => c.body.depositId === depositId)).toHaveLength(1);
    // Every single is its stored body as it is.
    const stored = new Set(rows.map((r) => r.body));
    expect(singles.every((c) => stored.has(c.raw) && signatureValid(c))).toBe(true);

    // The other URL (the ACH rail's) got its own request.
    const achGot = receiver.for('mixed-ach');
    expect(achGot).toHaveLength(1);
    expectExactBulk(achGot[0]!, achRows);
    expect(outcomesOf(achGot[0]!).every((o) => o.rail === 'ACH')).toBe(true);
  });

  it('sends more than 200 due outcomes in several requests of at most 200, each outcome once', async () => {
    const items = await held({ many: 250 }, () =>
      submit(
        '/breb/rail/transfers/bulk',
        Array.from({ length: 250 }, () => breb('many')),
      ),
    );
    const rows = await allDelivered('many', 250);
    const got = receiver.for('many');
    expect(got.every(isBulk)).toBe(true);
    // A claim takes 50 (the scheduler's batch); the request is filled up with the URL's other due outcomes.
    expect(got.map((c) => outcomesOf(c).length).sort((a, b) => b - a)).toEqual([200, 50]);
    for (const cb of got) expectExactBulk(cb, rows);
    const eventIds = got.flatMap((c) => outcomesOf(c).map((o) => o.eventId));
    expect(eventIds).toHaveLength(250);
    expect(new Set(eventIds)).toEqual(new Set(rows.map((r) => r.event_id)));
    expect(new Set(got.flatMap((c) => outcomesOf(c).map((o) => o.transactionId)))).toEqual(new Set(items.map((t) => t.transactionId)));
    expect(rows.every((r) => r.attempts === 1 && r.last_status === 200)).toBe(true);
  });

  it('falls back to singles when the receiver does not take the bulk form (400, 404, 405, 413, 415)', async () => {
    const statuses = [400, 404, 405, 413, 415];
    const refusing = new Map(statuses.map((s) => [`/webhooks/refuse-${s}`, s]));
    receiver.respond = ({ path, body }) => (body.type === 'rail.outcomes' ? (refusing.get(path) ?? 200) : 200);
    const names = statuses.map((s) => `refuse-${s}`);
    await held(Object.fromEntries(names.map((n) => [n, 3])), async () => {
      for (const n of names) await submit('/breb/rail/transfers/bulk', [breb(n), breb(n), breb(n)]);
    });
    for (const [k, n] of names.entries()) {
      const rows = await allDelivered(n, 3);
      const got = receiver.for(n);
      expect(got).toHaveLength(4);
      const [bulk, ...singles] = got;
      expect(isBulk(bulk!)).toBe(true);
      expect(bulk!.status).toBe(statuses[k]);
      expectExactBulk(bulk!, rows);
      // The same outcomes, one by one, each its stored body, signed, delivered on its own.
      expect(singles.every((c) => !isBulk(c) && c.status === 200 && signatureValid(c))).toBe(true);
      expect(singles.map((c) => c.raw).sort()).toEqual(rows.map((r) => r.body).sort());
      expect(new Set(singles.map((c) => c.body.eventId))).toEqual(new Set(outcomesOf(bulk!).map((o) => o.eventId)));
      expect(rows.every((r) => r.last_status === 200)).toBe(true);
    }

    // The receiver is remembered: its next outcomes go one by one without asking again.
    await held({ 'refuse-404': 6 }, () => submit('/breb/rail/transfers/bulk', [breb('refuse-404'), breb('refuse-404'), breb('refuse-404')]));
    await allDelivered('refuse-404', 6);
    const again = receiver.for('refuse-404').slice(4);
    expect(again).toHaveLength(3);
    expect(again.some(isBulk)).toBe(false);
  });

  it.each([500, 429])('retries every outcome of a bulk request answered %i on the normal schedule: none lost, none left sending', async (status) => {
    const name = `retry-${status}`;
    receiver.respond = ({ path, nth }) => (path === `/webhooks/${name}` && nth === 1 ? status : 200);
    await held({ [name]: 4 }, () => submit('/breb/rail/transfers/bulk', [breb(name), breb(name), breb(name), breb(name)]));
    const rows = await allDelivered(name, 4);
    const got = receiver.for(name);
    expect(got.map((c) => c.status)).toEqual([status, 200]);
    expect(got.every(isBulk)).toBe(true);
    for (const cb of got) expectExactBulk(cb, rows);
    const ids = (cb: ReceivedCallback) => new Set(outcomesOf(cb).map((o) => o.eventId));
    expect(ids(got[0]!)).toEqual(new Set(rows.map((r) => r.event_id)));
    expect(ids(got[1]!)).toEqual(ids(got[0]!));
    // The first retry after SANDBOX_CALLBACK_RETRY_BASE_MS (300 ms), as for a single callback.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(250);
    expect(rows.every((r) => r.attempts === 2 && r.last_status === 200)).toBe(true);
  });

  it('records a failed attempt for each outcome when the receiver cannot be reached', async () => {
    const dead = await CallbackReceiver.start();
    const deadUrl = dead.urlFor('gone');
    await dead.close();
    const transfers = [breb('gone'), breb('gone'), breb('gone')].map((t) => ({ ...t, callbackUrl: deadUrl }));
    await call('POST', '/sandbox/faults', { callbacks: 'down' });
    await submit('/breb/rail/transfers/bulk', transfers);
    const rowsForDead = async () =>
      (
        await sql.query<StoredCallback>(
          `select event_id::text as event_id, transaction_id, body, state, attempts, last_status, last_error
             from sandbox.callbacks where callback_url = $1`,
          [deadUrl],
        )
      ).rows;
    await eventually(async () => (await rowsForDead()).length === 3, 15_000);
    await call('POST', '/sandbox/faults', { callbacks: 'up' });
    const rows = await eventually(async () => {
      const r = await rowsForDead();
      return r.every((x) => x.state === 'pending' && x.attempts >= 1 && x.last_error !== null) ? r : undefined;
    }, 10_000);
    expect(rows.every((r) => r.last_status === null && /ECONNREFUSED/.test(r.last_error!))).toBe(true);
    // Retried on their own schedule (every 300 ms, 600 ms …): stop them for the tests that follow.
    await sql.query('delete from sandbox.callbacks where callback_url = $1', [deadUrl]);
  });

  it('sends singles as before with SANDBOX_BULK_CALLBACKS off', async () => {
    await sandbox.stop();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env: { ...env, SANDBOX_BULK_CALLBACKS: 'false' } });
    await held({ off: 4 }, () => submit('/breb/rail/transfers/bulk', [breb('off'), breb('off'), breb('off'), breb('off')]));
    const rows = await allDelivered('off', 4);
    const got = receiver.for('off');
    expect(got).toHaveLength(4);
    expect(got.some(isBulk)).toBe(false);
    expect(got.map((c) => c.raw).sort()).toEqual(rows.map((r) => r.body).sort());
    expect(got.every((c) => signatureValid(c))).toBe(true);
  });
});

/** `maxInFlight` counts requests: a bulk request is one, and a claim never starts more than the room left. */
describe('bulk outcome callbacks: requests in flight', () => {
  const log = createLogger('sandbox-test', 'silent');
  let tdb: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_bulkinflight');
    db = await Database.open({ url: tdb.url, schema: 'sandbox', migrations: sandboxMigrations, logger: log, poolMax: 4 });
    await db.migrate();
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it('keeps at most maxInFlight requests open, each carrying all of its URL’s due outcomes', async () => {
    let open = 0;
    let maxOpen = 0;
    const seen: Array<{ path: string; outcomes: number }> = [];
    const server: Server = createServer((req, res) => {
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { outcomes?: unknown[] };
        seen.push({ path: req.url ?? '', outcomes: body.outcomes?.length ?? 1 });
        // Slow enough that the scheduler would start more if it could.
        setTimeout(() => {
          open -= 1;
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        }, 150);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = new SandboxStore(db);
    const rails = new RailTransfers(db, store, { brebConfirmMs: 0, achConfirmMs: 0 }, () => undefined, log);
    const dispatcher = new CallbackDispatcher(
      store,
      [rails],
      { secret: SECRET, pollMs: 30, retry: { baseMs: 1_000, maxMs: 60_000 }, timeoutMs: 5_000, maxInFlight: 2, bulkOutcomes: true },
      log,
    );
    try {
      const urls = ['a', 'b', 'c', 'd'].map((u) => `${base}/webhooks/${u}`);
      const ids: string[] = [];
      for (const url of urls) {
        for (let i = 0; i < 3; i++) {
          const id = txId('inflight');
          ids.push(id);
          await rails.submit('ACH', { transactionId: id, amountCents: 10_000n, callbackUrl: url, request: {} });
        }
      }
      dispatcher.start();
      const rows = await eventually(async () => {
        const all = await Promise.all(ids.map((id) => store.findCallback(id)));
        return all.every((c) => c?.state === 'delivered') ? all : undefined;
      }, 15_000);
      expect(rows).toHaveLength(12);
      expect(maxOpen).toBeLessThanOrEqual(2);
      // Each URL's three outcomes in one request, whichever of them a claim took first.
      expect(seen.map((s) => s.outcomes)).toEqual([3, 3, 3, 3]);
      expect(new Set(seen.map((s) => s.path))).toEqual(new Set(['a', 'b', 'c', 'd'].map((u) => `/webhooks/${u}`)));
    } finally {
      await dispatcher.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
