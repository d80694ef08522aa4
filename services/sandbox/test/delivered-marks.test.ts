import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Database, createLogger } from '@wallet/platform';
import { createTestDatabase, eventually, type TestDatabase } from '@wallet/platform/testing';
import { RailTransfers } from '../src/app/rail-transfers.js';
import { CallbackDispatcher } from '../src/delivery/callback-dispatcher.js';
import { sandboxMigrations } from '../src/persistence/migrations/index.js';
import { SandboxStore } from '../src/persistence/sandbox.store.js';
import { SECRET, txId } from './support.js';

/**
 * Delivered callbacks answered close together are recorded in one statement: the dispatcher and
 * its store on a real database, the statements that mark deliveries counted at the pool.
 */
describe('delivered marks: several deliveries, one statement', () => {
  const log = createLogger('sandbox-test', 'silent');
  let tdb: TestDatabase;
  let db: Database;
  let store: SandboxStore;
  let markStatements = 0;

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_marks');
    db = await Database.open({ url: tdb.url, schema: 'sandbox', migrations: sandboxMigrations, logger: log, poolMax: 4 });
    await db.migrate();
    const prepared = db.prepared.bind(db);
    db.prepared = ((sql: string, params?: readonly unknown[]) => {
      if (sql.includes("set state = 'delivered'")) markStatements += 1;
      return prepared(sql, params);
    }) as Database['prepared'];
    store = new SandboxStore(db);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  /** A receiver that answers nobody until `n` callbacks are waiting, then all of them at once (200). */
  async function barrierReceiver(n: number): Promise<{ url: string; eventIds: string[]; close(): Promise<void> }> {
    const held: ServerResponse[] = [];
    const eventIds: string[] = [];
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        eventIds.push(String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { eventId: string }).eventId));
        held.push(res);
        if (held.length >= n) for (const r of held.splice(0)) r.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/marks`,
      eventIds,
      close: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('marks many concurrent deliveries with fewer statements than deliveries, every one delivered once', async () => {
    const n = 40;
    const receiver = await barrierReceiver(n);
    let dispatcher: CallbackDispatcher | undefined;
    const rails = new RailTransfers(db, store, { brebConfirmMs: 0, achConfirmMs: 0 }, () => dispatcher?.wake(), log);
    dispatcher = new CallbackDispatcher(store, [rails], { secret: SECRET, pollMs: 50, retry: { baseMs: 1_000, maxMs: 60_000 }, timeoutMs: 10_000 }, log);
    try {
      const ids = Array.from({ length: n }, () => txId('marks'));
      for (const id of ids) {
        await rails.submit('ACH', { transactionId: id, amountCents: 10_000n, callbackUrl: receiver.url, request: {} });
      }
      const before = markStatements;
      dispatcher.start();
      const rows = await eventually(async () => {
        const all = await Promise.all(ids.map((id) => store.findCallback(id)));
        return all.every((c) => c?.state === 'delivered') ? all : undefined;
      }, 15_000);
      const statements = markStatements - before;
      expect(statements).toBeGreaterThanOrEqual(1);
      expect(statements).toBeLessThan(n);
      expect(rows.every((c) => c!.lastStatus === 200 && c!.attempts === 1 && c!.deliveredAt !== null)).toBe(true);
      expect(receiver.eventIds).toHaveLength(n);
      expect(new Set(receiver.eventIds)).toEqual(new Set(rows.map((c) => c!.eventId)));
    } finally {
      await dispatcher.stop();
      await receiver.close();
    }
  });

  it('marks only the attempt that holds the lease, and only a callback being sent', async () => {
    const rails = new RailTransfers(db, store, { brebConfirmMs: 0, achConfirmMs: 0 }, () => undefined, log);
    const [a, b] = [txId('lease'), txId('lease')];
    for (const id of [a, b]) await rails.submit('ACH', { transactionId: id, amountCents: 10_000n, callbackUrl: 'http://127.0.0.1:9/none', request: {} });
    await rails.settleDue(100);
    const claimed = await store.claimDueCallbacks(100, 60_000);
    const ca = claimed.find((c) => c.transactionId === a)!;
    const cb = claimed.find((c) => c.transactionId === b)!;
    expect(ca.attempts).toBe(1);
    // A: a late answer to an attempt whose lease another claim took over (attempts moved on); B: the current attempt.
    await store.markDelivered([
      { eventId: ca.eventId, attempts: ca.attempts - 1, status: 200 },
      { eventId: cb.eventId, attempts: cb.attempts, status: 204 },
    ]);
    expect(await store.findCallback(a)).toMatchObject({ state: 'sending', attempts: 1, deliveredAt: null, lastStatus: null });
    expect(await store.findCallback(b)).toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 204 });
    // Marked again (a second answer): a delivered callback stays as it was.
    await store.markDelivered([{ eventId: cb.eventId, attempts: cb.attempts, status: 200 }]);
    expect(await store.findCallback(b)).toMatchObject({ state: 'delivered', lastStatus: 204 });
  });
});
