import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { transferV1 } from '@wallet/proto';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { reserveCommandOf } from '../../src/app/transfer-saga.js';
import type { TransferRecord } from '../../src/domain/transfer.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import {
  NATS_URL,
  Rail,
  brebSend,
  ctxOf,
  eventsOf,
  expectEvents,
  expectLedgerOk,
  newCompany,
  send,
  setFaults,
  startHarness,
  stateOf,
  transferRow,
  testProtection,
  waitForState,
  wallet,
  type Harness,
} from './harness.js';
import { transferAccess } from '../../src/grpc/transfer.handlers.js';
import { devMeshTls } from '@wallet/platform';
import { freePort, policyClient } from '@wallet/platform/testing';
import { transferRecord } from './transfer-record.js';

/** Limits no test send reaches (the store's own limit rule is tested in limits tests). */
const NO_LIMITS = { daily: 10n ** 15n, monthly: 10n ** 15n };

/** A TCP server that accepts connections, reads requests and never answers: a rail that hangs. */
async function blackHole(): Promise<{ port: number; requests: () => number; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  let bytes = 0;
  const server: Server = createServer((s) => {
    sockets.push(s);
    s.on('data', (d) => {
      bytes += d.length;
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : 0,
    requests: () => bytes,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

async function until<T>(fn: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The real service (dist/main.js) in its own process, configured only through its environment. */
function forkService(h: Harness, port: number, env: Record<string, string>): ChildProcess {
  return fork(join(process.cwd(), 'dist', 'main.js'), [], {
    execArgv: [],
    stdio: 'pipe',
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'error',
      DATABASE_URL: h.tdb.url,
      NATS_URL,
      BUS_NAMESPACE: h.namespace,
      TRANSFER_GRPC_HOST: '127.0.0.1',
      TRANSFER_GRPC_PORT: String(port),
      TRANSFER_OPS_PORT: '0',
      TRANSFER_MIGRATE_ON_START: 'true',
      LEDGER_GRPC_ADDR: h.ledger.address,
      BREB_DIRECTORY_URL: h.sandbox.url,
      BREB_RAIL_URL: h.sandbox.url,
      ACH_RAIL_URL: h.sandbox.url,
      RAIL_CALLBACK_BASE_URL: h.receiver.url,
      ...env,
    },
  });
}

describe('recovery: crashes, rail outages and the sweeper', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ startTransferService: false });
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  it('killed (SIGKILL) between reserve and dispatch: a fresh instance dispatches it, it completes and money balances', async () => {
    const hole = await blackHole();
    const port = await freePort();
    // The real service (dist/main.js) in its own process, its Bre-B rail a server that never answers.
    const child = forkService(h, port, { BREB_RAIL_URL: `http://127.0.0.1:${hole.port}`, PROVIDER_HTTP_TIMEOUT_MS: '60000', SWEEPER_GRACE_SECONDS: '2' });
    let exited = false;
    const exit = new Promise<NodeJS.Signals | number | null>((r) =>
      child.on('exit', (code, signal) => {
        exited = true;
        r(signal ?? code);
      }),
    );
    const childClient = policyClient<transferV1.TransferServiceServer>(
      transferV1.TransferServiceClient,
      `127.0.0.1:${port}`,
      'transfer',
      transferAccess,
      60_000,
    );
    try {
      const co = await newCompany(h, { breb: 1_000_000n, iva: true, brebFee: [500n, 0] });
      await until(
        async () => !exited && (await childClient.resolveKey({ keyValue: '3001234567', keyType: 'AUTO' }, ctxOf(co.id))).found,
        60_000, // a fresh process: migrations and a mesh handshake; seconds alone, past 20 s beside a full run
        'the child to serve',
      );
      // A resolve through the child (for the holder), then the send that will hang at dispatch.
      const r = await childClient.resolveKey({ keyValue: '3005550001', keyType: 'AUTO' }, ctxOf(co.id));
      const req = transferV1.SendRequest.fromPartial({
        amount: 100_000n,
        brebKey: { type: r.keyType, value: r.keyValue },
        targetName: r.recipient!.fullName,
        targetDocument: r.recipient!.idValue,
        reference: 'crash-1',
        requestHash: 'crash-hash',
      });
      const pending = childClient.send(req, ctxOf(co.id)).then(
        () => 'answered',
        (e: unknown) => `failed: ${(e as Error).message}`,
      );
      const id = await until(
        async () => {
          const rows = await h.ledger.db.query<{ id: string; state: string }>('select id::text as id, state from transfer.transfers where company_id = ?', [
            co.id,
          ]);
          return rows[0]?.state === 'RESERVED' && hole.requests() > 0 ? rows[0].id : undefined;
        },
        10_000,
        'RESERVED with the dispatch in flight',
      );
      process.kill(child.pid!, 'SIGKILL');
      expect(await exit).toBe('SIGKILL');
      expect(await pending).toMatch(/^failed/); // the client never got its 201
      // Reserved, not dispatched: the funds are held.
      expect(await stateOf(h, id)).toBe('RESERVED');
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n - 100_595n, pending: 100_595n });

      // A fresh instance on the same database takes over.
      await h.startTransferInstance();
      await waitForState(h, id, ['COMPLETED'], 15_000);
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n - 100_595n, pending: 0n });
      expect((await transferRow(h, id))!.provider_transfer_id).toEqual(expect.any(String));
      // The reference was answered by the acceptance: a retry of the same request gets the original.
      expect(await send(h, co, req)).toMatchObject({ replayed: true, transfer: { id, status: 'MOVEMENT_STATUS_COMPLETED' } });
      await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
    } finally {
      childClient.close();
      if (!exited) process.kill(child.pid!, 'SIGKILL');
      await hole.close();
    }
  }, 240_000); // a real child process (see the SIGTERM test)

  it('abandoned before the reserve was recorded: REJECTED (reference freed) when nothing landed, FAILED and released (reference answered) when the hold did', async () => {
    await h.stopTransferInstances();
    const t = await h.startTransferInstance({ SWEEPER_GRACE_SECONDS: '1' });
    const store = new SqlTransferStore(t.db, testProtection);
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3005550002', 10_000n);
    const record = (reference: string): TransferRecord =>
      transferRecord({
        companyId: co.id,
        targetName: req.targetName!,
        targetDocument: req.targetDocument!,
        reference,
        destination: { kind: 'BREB', keyType: 'PHONE', keyValue: '3005550002', anchorHandle: 'anh_x', bankName: null, bankAccountType: null },
      });
    // What an owner leaves behind when it dies right after recording RECEIVED (and claiming its reference).
    const nothing = record('abandoned-1');
    const landed = record('abandoned-2');
    for (const x of [nothing, landed]) {
      expect(await store.claimReference(co.id, x.reference!, 'h', x.id, 60)).toEqual({ owner: true });
      const windows = { dayStart: new Date(0), monthStart: new Date(0) };
      expect(await store.insertWithinLimits(x, req.targetDocument!, windows, NO_LIMITS, 2_000)).toBe('OK');
    }
    // …and for the second, its reserve reached the ledger before the crash.
    const ledger = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    try {
      await ledger.reserve(reserveCommandOf(landed));
    } finally {
      ledger.close();
    }
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 90_000n, pending: 10_000n });

    await waitForState(h, nothing.id, ['REJECTED'], 10_000);
    await waitForState(h, landed.id, ['FAILED'], 10_000);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n, pending: 0n });
    const m = await h.ledgerClient.getMovement({ id: landed.id }, ctxOf(co.id));
    expect(m.status).toBe('MOVEMENT_STATUS_FAILED');
    expect(m.details!.errorMessage).toMatch(/interrumpió/);
    // The one that never held money frees its reference (a retry is a new transfer); the one whose
    // reserve landed is a failed send: its reference names it, so a retry inside the window gets that
    // FAILED transfer, never a second one beside it (never two transfers on one reference).
    const refs = await h.ledger.db.query<{ reference: string; transfer_id: string; answered: boolean }>(
      'select reference, transfer_id::text as transfer_id, answered_at is not null as answered from transfer.send_references where company_id = ?',
      [co.id],
    );
    expect(refs).toEqual([{ reference: 'abandoned-2', transfer_id: landed.id, answered: true }]);
    await expectEvents(h, landed.id, ['transfer.failed']);
    expect(await eventsOf(h, nothing.id)).toEqual([]);
  });

  it('Bre-B rail down at dispatch: 201 PENDING, retried with back-off, completes when the rail is back', async () => {
    await h.stopTransferInstances();
    await h.startTransferInstance({ RAIL_DISPATCH_TIMEOUT_SECONDS: '30' });
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3005550003', 20_000n);
    await setFaults(h, { brebRail: 'down' });
    let id: string;
    try {
      const res = await send(h, co, req);
      expect(res.transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
      id = res.transfer!.id;
      await until(async () => Number((await transferRow(h, id))!.dispatch_attempts) >= 3, 10_000, 'three dispatch attempts');
      expect(await transferRow(h, id)).toMatchObject({ state: 'RESERVED', dispatch_ambiguous: false, last_dispatch_error: 'http 503' });
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 80_000n, pending: 20_000n });
    } finally {
      await setFaults(h, { brebRail: 'up' });
    }
    await waitForState(h, id, ['COMPLETED'], 10_000);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 80_000n, pending: 0n });
    await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
  });

  it('Bre-B rail down past RAIL_DISPATCH_TIMEOUT_SECONDS: FAILED and the funds released', async () => {
    await h.stopTransferInstances();
    await h.startTransferInstance({ RAIL_DISPATCH_TIMEOUT_SECONDS: '2' });
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3005550004', 20_000n);
    await setFaults(h, { brebRail: 'down' });
    try {
      const res = await send(h, co, req);
      expect(res.transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
      await waitForState(h, res.transfer!.id, ['FAILED'], 10_000);
      expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n, pending: 0n });
      const m = await h.ledgerClient.getMovement({ id: res.transfer!.id }, ctxOf(co.id));
      expect(m.status).toBe('MOVEMENT_STATUS_FAILED');
      expect(m.details!.errorMessage).toMatch(/tiempo límite/);
      await expectEvents(h, res.transfer!.id, ['transfer.created', 'transfer.failed']);
    } finally {
      await setFaults(h, { brebRail: 'up' });
    }
  });

  it('several replicas sweep the same database: each transfer is dispatched and settled exactly once', async () => {
    await h.stopTransferInstances();
    // A grace period no reserve outlasts, even on a loaded machine: here every send must be accepted
    // (dispatch retries follow RAIL_DISPATCH_RETRY_*, not the grace). A reserve slower than the grace
    // is given up by a replica and answered 503: the next test holds that case on purpose.
    const patient = { SWEEPER_GRACE_SECONDS: '30' };
    await h.startTransferInstance(patient);
    await h.startTransferInstance(patient);
    await h.startTransferInstance(patient); // the client talks to this one; the other two only sweep
    const co = await newCompany(h, { breb: 1_000_000n });
    const reqs = await Promise.all(Array.from({ length: 8 }, (_, i) => brebSend(h, co, `30055510${i}0`, 10_000n)));
    await setFaults(h, { brebRail: 'down' });
    let ids: string[];
    try {
      ids = (await Promise.all(reqs.map((r) => send(h, co, r)))).map((r) => r.transfer!.id);
      await new Promise((r) => setTimeout(r, 800));
    } finally {
      await setFaults(h, { brebRail: 'up' });
    }
    for (const id of ids) await waitForState(h, id, ['COMPLETED'], 10_000);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 920_000n, pending: 0n });
    for (const id of ids) await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
    const history = await h.ledger.db.query<{ n: string }>(
      `select count(*)::text as n from transfer.state_history where transfer_id in (select id from transfer.transfers where company_id = ?)`,
      [co.id],
    );
    expect(Number(history[0]!.n)).toBe(8 * 5); // RECEIVED, RESERVED, DISPATCHED, COMPLETING, COMPLETED
  });
  it('a reserve slower than the grace period: a replica gives each send up, each answers 503, and the holds that land later are released', async () => {
    await h.stopTransferInstances();
    await h.startTransferInstance(); // sweeps (grace 1 s)
    await h.startTransferInstance(); // the client talks to this one
    const co = await newCompany(h, { breb: 1_000_000n });
    const reqs = await Promise.all(Array.from({ length: 4 }, (_, i) => brebSend(h, co, `30055520${i}0`, 10_000n)));
    // The ledger cannot move the company's wallets until every send has been given up: each
    // reserve (and each void the sweeper sends ahead of it) waits on these row locks.
    const { default: pg } = await import('pg');
    const locker = new pg.Client({ connectionString: h.tdb.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('select 1 from ledger.wallets where company_id = $1 for update', [co.id]);
      const answers = Promise.allSettled(reqs.map((r) => send(h, co, r)));
      await until(
        async () => {
          const rows = await h.ledger.db.query<{ state: string }>('select state from transfer.transfers where company_id = ?', [co.id]);
          return rows.length === 4 && rows.every((r) => r.state !== 'RECEIVED');
        },
        20_000,
        'a replica to give up every send',
      );
      await locker.query('commit');
      for (const a of await answers) {
        expect(a.status).toBe('rejected');
        expect((a as PromiseRejectedResult).reason).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      }
    } finally {
      await locker.end();
    }
    const rows = await h.ledger.db.query<{ id: string }>('select id::text as id from transfer.transfers where company_id = ?', [co.id]);
    // A reserve that landed after the give-up is released (FAILED, reference answered); one the
    // void fenced first never held money (REJECTED, reference freed). Neither was ever sent.
    for (const { id } of rows) {
      expect(await waitForState(h, id, ['REJECTED', 'FAILED'], 20_000)).toMatch(/^(REJECTED|FAILED)$/);
      expect(await eventsOf(h, id)).not.toContain('transfer.dispatched');
    }
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n, pending: 0n });
    await expectLedgerOk(h);
  }, 60_000);
  it('SIGTERM: the process stops taking calls, finishes what is in flight, flushes the outbox and exits 0', async () => {
    await h.stopTransferInstances();
    const port = await freePort();
    const child = forkService(h, port, {});
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const client = policyClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, `127.0.0.1:${port}`, 'transfer', transferAccess, 20_000);
    try {
      const co = await newCompany(h, { breb: 100_000n });
      await until(async () => (await client.resolveKey({ keyValue: '3001234567', keyType: 'AUTO' }, ctxOf(co.id))).found, 60_000, 'the child to serve');
      const r = await client.resolveKey({ keyValue: '3005550009', keyType: 'AUTO' }, ctxOf(co.id));
      const inFlight = client.send(
        transferV1.SendRequest.fromPartial({
          amount: 1_000n,
          brebKey: { type: r.keyType, value: r.keyValue },
          targetName: r.recipient!.fullName,
          targetDocument: r.recipient!.idValue,
          requestHash: 'graceful',
        }),
        ctxOf(co.id),
      );
      // SIGTERM once the send is surely in flight (recorded, not yet answered).
      await until(
        async () => (await h.ledger.db.query('select 1 from transfer.transfers where company_id = ?', [co.id])).length > 0,
        60_000,
        'the send to be recorded',
      );
      child.kill('SIGTERM');
      const answered = await inFlight;
      expect(await exit).toBe(0);
      expect(answered.transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
      // It finished the send and published its events before exiting.
      const rows = await h.ledger.db.query<{ n: string }>('select count(*)::text as n from transfer.outbox where published_at is null');
      expect(rows[0]!.n).toBe('0');
      // Nothing is lost: another instance finishes the saga.
      await h.startTransferInstance();
      await waitForState(h, answered.transfer!.id, ['COMPLETED'], 15_000);
    } finally {
      client.close();
    }
    // A real child process: it starts in about 2 s on a quiet machine and has taken over 40 s beside the
    // other lane of a full run (2 cores); the test checks the shutdown, not how fast it starts.
  }, 240_000);
});
