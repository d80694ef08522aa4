import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { createLogger, devMeshTls } from '@wallet/platform';
import { eventually, meshClient, policyClient } from '@wallet/platform/testing';
import { reconciliationV1 } from '@wallet/proto';
import { GrpcClearingLedger } from '../src/adapters/ledger.client.js';
import type { ClearingLedger } from '../src/app/deps.js';
import { composeReconciliation, type ReconciliationRuntime } from '../src/compose.js';
import { loadConfig } from '../src/config.js';
import { reconciliationAccess } from '../src/grpc/reconciliation.handlers.js';
import { D, startBrebDay, type BrebDay } from './support/breb-day.js';

/**
 * The reconciliation service as a process composes it (composeReconciliation), on the real sandbox,
 * ledger and transfer of test/support/breb-day.ts, called through its real gRPC server with mutual
 * TLS as `gateway:admin`: runs started, read and listed, the breaks' life cycle (auto-resolved by a
 * corrected report, superseded by a later value date, explained, accepted on the provider's side
 * with the ledger's clearing adjustment, re-run), events read from NATS, the stale-run sweeper, the
 * scheduler (its trigger fired by hand, its waits recorded) and the metrics on the ops port.
 */

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const NEXT = '2025-03-15';
/** The service's clock: 06:00 in Bogotá on D+1 (the scheduler's previous day is D). */
const NOW = new Date(`${NEXT}T11:00:00.000Z`);
const ctx = () => ({ requestId: randomUUID() });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: { code?: string }) => e,
  );

describe('reconciliation service (gRPC, life cycle, events, scheduler, metrics)', () => {
  let day: BrebDay;
  let rt: ReconciliationRuntime;
  let api: ReturnType<typeof policyClient<reconciliationV1.ReconciliationServiceServer>>;
  let address: string;
  let nc: NatsConnection;
  let stopConsuming: () => Promise<void>;
  const events: Array<{ subject: string; payload: any }> = [];
  const ledgerCalls: Array<Parameters<ClearingLedger['postClearingAdjustment']>[0]> = [];
  const sleeps: number[] = [];
  const fired = new Map<string, { cron: string; timezone: string; fire: () => void }>();

  beforeAll(async () => {
    day = await startBrebDay('recon_svc', { connectTimeoutMs: 2_000 });
    const config = loadConfig({
      DATABASE_URL: day.tdb.url,
      NATS_URL,
      BUS_NAMESPACE: day.namespace,
      LOG_LEVEL: 'silent',
      RECONCILIATION_GRPC_HOST: '127.0.0.1',
      RECONCILIATION_GRPC_PORT: '0',
      RECONCILIATION_DB_POOL_MAX: '4',
      LEDGER_GRPC_ADDR: day.ledgerAddress,
      TRANSFER_GRPC_ADDR: day.transferAddress,
      RECON_REPORTS_URL: `${day.sandbox.url}/sandbox/reports`,
      RECON_REPORTS_TOKEN: 'a-token-the-sandbox-ignores',
      RECON_RAILS: 'breb',
      RECON_SCHEDULE: '0 6 * * *',
      RECON_RETRY_ATTEMPTS: '3',
      RECON_RETRY_BASE_MS: '1000',
      RECON_STALE_RUN_MS: '2000',
      RECON_SWEEPER_INTERVAL_MS: '100',
    });
    const real = new GrpcClearingLedger(day.ledgerAddress, devMeshTls('reconciliation'));
    rt = await composeReconciliation({
      mesh: devMeshTls('reconciliation'),
      config,
      opsPort: 0,
      opsHost: '127.0.0.1',
      logger: createLogger('recon-svc-test', 'silent'),
      now: () => NOW,
      heartbeatMs: 200,
      // The real ledger over the mesh; the calls are recorded to check what was asked.
      ledger: {
        async postClearingAdjustment(a) {
          ledgerCalls.push(a);
          await real.postClearingAdjustment(a);
        },
        reverseCorrection: (a) => real.reverseCorrection(a),
      },
      triggers: (rail, cron, timezone, fire) => {
        fired.set(rail, { cron, timezone, fire });
        return {
          stop() {
            fired.delete(rail);
          },
        };
      },
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    address = `127.0.0.1:${rt.grpcPort}`;
    api = policyClient<reconciliationV1.ReconciliationServiceServer>(
      reconciliationV1.ReconciliationServiceClient,
      address,
      'reconciliation',
      reconciliationAccess,
      30_000,
    );

    nc = await connect({ servers: NATS_URL });
    const stream = rt.bus.streamName('RECONCILIATION');
    await (await jetstreamManager(nc)).consumers.add(stream, { durable_name: 'test', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All });
    const messages = await jetstream(nc)
      .consumers.get(stream, 'test')
      .then((c) => c.consume());
    const loop = (async () => {
      for await (const m of messages) {
        events.push({ subject: rt.bus.localSubject(m.subject), payload: m.json() });
        m.ack();
      }
    })();
    stopConsuming = async () => {
      await messages.close();
      await loop;
    };
    (globalThis as { __realLedger?: GrpcClearingLedger }).__realLedger = real;
  }, 120_000);

  afterAll(async () => {
    api?.close();
    await stopConsuming?.();
    await nc?.close();
    await rt?.stop();
    (globalThis as { __realLedger?: GrpcClearingLedger }).__realLedger?.close();
    await day?.stop();
  });

  const sql = <R>(q: string, p: unknown[] = []) => rt.db.query<R>(q, p);
  const waitRun = (id: string) =>
    eventually(async () => {
      const r = await api.getRun({ id }, ctx());
      return r.status !== 'RUNNING' ? r : undefined;
    }, 20_000);
  const run = async (date = D) => {
    const r = await api.startRun({ rail: 'breb', date, requestedBy: 'operator:ana@example.com' }, ctx());
    expect(r.alreadyRunning).toBe(false);
    expect(r.run).toMatchObject({ status: 'RUNNING', rail: 'breb', date, trigger: 'ON_DEMAND', requestedBy: 'operator:ana@example.com' });
    return waitRun(r.run!.id);
  };
  const breakOf = async (key: string) => (await api.listBreaks({ limit: 100 }, ctx())).items.find((b) => b.key === key);
  const exceptionOf = async (key: string) => (await api.listExceptions({ limit: 100 }, ctx())).items.find((e) => e.resourceId === key)!;
  const k = (kind: string, ref: string, date = D) => `breb:${date}:${kind}:${ref}`;

  it('every RPC is for gateway:admin only: ops, transfer and the gateway for an API client are refused', async () => {
    for (const id of ['ops', 'transfer', 'ledger'] as const) {
      const c = meshClient<reconciliationV1.ReconciliationServiceServer>(reconciliationV1.ReconciliationServiceClient, address, id, 'reconciliation');
      expect((await failure(c.listRuns({ limit: 1 }, ctx()))).code).toBe('CALLER_NOT_ALLOWED');
      expect((await failure(c.startRun({ rail: 'breb', date: D, requestedBy: 'x' }, ctx()))).code).toBe('CALLER_NOT_ALLOWED');
      c.close();
    }
    const gw = meshClient<reconciliationV1.ReconciliationServiceServer>(reconciliationV1.ReconciliationServiceClient, address, 'gateway', 'reconciliation');
    const apiKey = { ...ctx(), companyId: randomUUID() }; // an API client's call (principal apikey), not an operator's
    for (const call of [
      gw.startRun({ rail: 'breb', date: D, requestedBy: 'x' }, apiKey),
      gw.getRun({ id: 'run_x' }, apiKey),
      gw.listRuns({ limit: 1 }, apiKey),
      gw.listBreaks({ limit: 1 }, apiKey),
      gw.listExceptions({ limit: 1 }, apiKey),
      gw.resolveException({ id: 'exc_x', action: 'explain', note: 'n', resolvedBy: 'x' }, apiKey),
    ]) {
      expect((await failure(call)).code).toBe('CALLER_NOT_ALLOWED');
    }
    gw.close();
    expect(await sql<{ n: number }>('select count(*)::int as n from reconciliation.runs')).toEqual([{ n: 0 }]);
  });

  it('refuses a date after today in Bogotá, an unknown rail and a bad date; an unknown or malformed run is RECONCILIATION_NOT_FOUND', async () => {
    const bad = (await failure(api.startRun({ rail: 'breb', date: '2025-03-16', requestedBy: '' }, ctx()))) as { code: string; details?: unknown };
    expect(bad.code).toBe('INVALID_REQUEST');
    expect(JSON.stringify(bad)).toMatch(/not after today/);
    expect((await failure(api.startRun({ rail: 'swift', date: D, requestedBy: '' }, ctx()))).code).toBe('INVALID_REQUEST');
    expect((await failure(api.startRun({ rail: 'breb', date: '2025-02-30', requestedBy: '' }, ctx()))).code).toBe('INVALID_REQUEST');
    expect((await failure(api.getRun({ id: `run_${'a'.repeat(32)}` }, ctx()))).code).toBe('RECONCILIATION_NOT_FOUND');
    expect((await failure(api.getRun({ id: 'nope' }, ctx()))).code).toBe('RECONCILIATION_NOT_FOUND');
    expect((await failure(api.listRuns({ limit: 101 }, ctx()))).code).toBe('INVALID_REQUEST');
    expect((await failure(api.listBreaks({ limit: 10, kind: 'bogus' }, ctx()))).code).toBe('INVALID_REQUEST');
  });

  it('StartRun answers RUNNING at once and the run ends RECONCILED in the background: counts, both nets, no break', async () => {
    const done = await run();
    expect(done).toMatchObject({
      status: 'RECONCILED',
      reportLines: 2n,
      reportAmountCents: 400_013n,
      oursCount: 2n,
      matchedCount: 2n,
      breaksTotal: 0n,
      breaksOpened: 0n,
      // Only the COMPLETED send moved money: +150,000 on rail_clearing(BREB), on both sides.
      reportNetCents: 150_000n,
      oursNetCents: 150_000n,
    });
    expect(done.finishedAt).toBeInstanceOf(Date);
    expect((await api.listBreaks({ runId: done.id, limit: 10 }, ctx())).items).toEqual([]);
  });

  it("a run of a day already under way (another replica's) is answered with already_running, and the sweeper fails it as interrupted when it stops beating", async () => {
    const id = `run_${'b'.repeat(32)}`;
    await sql(
      `insert into reconciliation.runs (id, rail, date, status, trigger, requested_by, heartbeat_at) values (?, 'breb', '2025-03-01', 'RUNNING', 'SCHEDULE', 'scheduler', now())`,
      [id],
    );
    const r = await api.startRun({ rail: 'breb', date: '2025-03-01', requestedBy: '' }, ctx());
    expect(r).toMatchObject({ alreadyRunning: true, run: { id, status: 'RUNNING' } });
    // No heartbeat for RECON_STALE_RUN_MS (2 s): FAILED, "interrupted", with its completed event.
    const failed = await eventually(async () => {
      const x = await api.getRun({ id }, ctx());
      return x.status === 'FAILED' ? x : undefined;
    }, 10_000);
    expect(failed).toMatchObject({ detail: 'interrupted' });
    await eventually(async () => events.some((e) => e.subject === 'reconciliation.completed' && e.payload.run.id === id), 10_000);
    // Its own run beats: a run under way is not swept (this one takes well under the stale time anyway).
    expect((await run('2025-03-01')).status).toBe('RECONCILED');
  });

  it('a corrected report resolves its break automatically: amount discrepancy opens one break (difference +100), removing it and re-running resolves the break and its exception', async () => {
    const id = await day.inject({ kind: 'duplicate', ref: day.ids.ok.provider });
    const first = await run();
    expect(first).toMatchObject({ status: 'RECONCILED', breaksOpened: 1n, breaksByKind: { duplicate: 1n }, reportNetCents: 300_000n, oursNetCents: 150_000n });
    const key = k('duplicate', day.ids.ok.provider);
    expect(await breakOf(key)).toMatchObject({ status: 'OPEN', runId: first.id, differenceCents: 150_000n, kind: 'duplicate' });
    expect(await exceptionOf(key)).toMatchObject({ kind: 'DUPLICATE', rail: 'BREB', status: 'OPEN', actions: ['accept_provider', 'explain', 'rerun'] });
    await day.removeDiscrepancy(id);
    const second = await run();
    expect(second).toMatchObject({ status: 'RECONCILED', breaksTotal: 0n });
    expect(await breakOf(key)).toMatchObject({ status: 'RESOLVED', resolution: 'rerun' });
    expect((await breakOf(key))!.resolvedAt).toBeInstanceOf(Date);
    expect(await exceptionOf(key)).toMatchObject({ status: 'RESOLVED', resolvedBy: 'reconciliation', action: 'rerun' });
  });

  it('explain: the note is required; the exception and its break are RESOLVED (explain)', async () => {
    await day.inject({ kind: 'missing', ref: day.ids.failed.our });
    await run();
    const key = k('missing_at_provider', day.ids.failed.our);
    expect(await breakOf(key)).toMatchObject({ status: 'OPEN', differenceCents: 0n }); // a FAILED send moved nothing
    const exc = await exceptionOf(key);
    expect((await failure(api.resolveException({ id: exc.id, action: 'explain', note: ' ', resolvedBy: 'operator:ana' }, ctx()))).code).toBe('INVALID_REQUEST');
    const done = await api.resolveException(
      { id: exc.id, action: 'explain', note: 'the provider omits failed sends on that day', resolvedBy: 'operator:ana' },
      ctx(),
    );
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'explain', resolvedBy: 'operator:ana', note: 'the provider omits failed sends on that day' });
    expect(await breakOf(key)).toMatchObject({ status: 'RESOLVED', resolution: 'explain' });
    expect((await failure(api.resolveException({ id: exc.id, action: 'explain', note: 'again', resolvedBy: 'operator:ana' }, ctx()))).code).toBe(
      'EXCEPTION_NOT_OPEN',
    );
  });

  it('rerun: the break still in the report answers BREAK_STILL_PRESENT (exception OPEN again); once the provider corrects it, rerun resolves it', async () => {
    const id = await day.inject({ kind: 'status', ref: day.ids.failed.provider, status: 'COMPLETED' });
    await day.removeDiscrepancy(
      ((await (await fetch(`${day.sandbox.url}/sandbox/reports/breb/${D}/discrepancies`)).json()) as { items: Array<{ id: string; kind: string }> }).items.find(
        (x) => x.kind === 'missing',
      )!.id,
    );
    await run();
    const key = k('status_mismatch', day.ids.failed.provider);
    expect(await breakOf(key)).toMatchObject({ status: 'OPEN', differenceCents: 250_013n });
    const exc = await exceptionOf(key);
    const still = await failure(api.resolveException({ id: exc.id, action: 'rerun', note: 'provider says fixed', resolvedBy: 'operator:ana' }, ctx()));
    expect(still.code).toBe('BREAK_STILL_PRESENT');
    expect(await exceptionOf(key)).toMatchObject({ status: 'OPEN' });
    expect((await exceptionOf(key)).action).toBeUndefined();
    const rerunRuns = (await api.listRuns({ rail: 'breb', date: D, limit: 100 }, ctx())).items.filter((r) => r.trigger === 'RERUN');
    expect(rerunRuns).toHaveLength(1);
    expect(rerunRuns[0]).toMatchObject({ status: 'RECONCILED', requestedBy: 'operator:ana' });
    await day.removeDiscrepancy(id);
    const done = await api.resolveException({ id: exc.id, action: 'rerun', note: 'provider corrected its report', resolvedBy: 'operator:ana' }, ctx());
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'rerun', resolvedBy: 'operator:ana' });
    expect(await breakOf(key)).toMatchObject({ status: 'RESOLVED', resolution: 'rerun' });
  });

  it('accept_provider on an amount mismatch posts the clearing adjustment (delta = the difference) on the real ledger, then RESOLVED; again it is EXCEPTION_NOT_OPEN', async () => {
    const id = await day.inject({ kind: 'amount', ref: day.ids.ok.provider, amountCents: 150_100 });
    await run();
    const key = k('amount_mismatch', day.ids.ok.provider);
    expect(await breakOf(key)).toMatchObject({ status: 'OPEN', differenceCents: 100n });
    const exc = await exceptionOf(key);
    const balance = async (account: string) =>
      BigInt((await sql<{ s: string }>('select coalesce(sum(amount), 0)::text as s from ledger.entries where account = ?', [account]))[0]!.s);
    const before = { clearing: await balance('rail_clearing:BREB'), diff: await balance('reconciliation_differences:rail_clearing:BREB') };
    const done = await api.resolveException({ id: exc.id, action: 'accept_provider', note: 'the bank charged 1 peso more', resolvedBy: 'operator:ana' }, ctx());
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'accept_provider' });
    expect(ledgerCalls).toEqual([
      {
        idempotencyKey: `recon:${key}:accept_provider`,
        clearing: 'breb',
        deltaCents: 100n,
        reason: expect.stringContaining(key),
        movement: expect.stringMatching(/^breb:our:[0-9a-f-]{36}$/),
        caseId: exc.id,
      },
    ]);
    expect(await balance('rail_clearing:BREB')).toBe(before.clearing + 100n);
    expect(await balance('reconciliation_differences:rail_clearing:BREB')).toBe(before.diff - 100n);
    expect(await breakOf(key)).toMatchObject({ status: 'RESOLVED', resolution: 'accept_provider' });
    expect((await failure(api.resolveException({ id: exc.id, action: 'accept_provider', note: 'again', resolvedBy: 'operator:ana' }, ctx()))).code).toBe(
      'EXCEPTION_NOT_OPEN',
    );
    await day.removeDiscrepancy(id);
  });

  it('accept_provider interrupted after the won exception (RESOLVING) is finished by calling it again; the ledger posts once', async () => {
    const id = await day.inject({ kind: 'extra', amountCents: 7_000 });
    await run();
    const b = (await api.listBreaks({ kind: 'missing_in_our_books', status: 'OPEN', limit: 10 }, ctx())).items[0]!;
    expect(b.differenceCents).toBe(7_000n);
    const exc = await exceptionOf(b.key);
    // A crash after the exception was won: RESOLVING for accept_provider, nothing posted yet.
    await sql(
      `update reconciliation.money_exceptions set status = 'RESOLVING', action = 'accept_provider', note = 'n', resolved_by = 'operator:ana' where id = ?`,
      [exc.id],
    );
    expect((await failure(api.resolveException({ id: exc.id, action: 'explain', note: 'other', resolvedBy: 'operator:bob' }, ctx()))).code).toBe(
      'EXCEPTION_NOT_OPEN',
    );
    const calls = ledgerCalls.length;
    const done = await api.resolveException({ id: exc.id, action: 'accept_provider', note: 'n', resolvedBy: 'operator:ana' }, ctx());
    expect(done.status).toBe('RESOLVED');
    expect(ledgerCalls.slice(calls)).toEqual([expect.objectContaining({ deltaCents: 7_000n, idempotencyKey: `recon:${b.key}:accept_provider` })]);
    expect(
      Number((await sql<{ n: string }>('select count(*)::text as n from ledger.postings where idempotency_key = ?', [`recon:${b.key}:accept_provider`]))[0]!.n),
    ).toBe(1);
    // A crash after the posting, before RESOLVED; another operator resumes with another note: the
    // first note (the posting's reason) is kept, so the ledger answers the replay, not a conflict.
    await sql(`update reconciliation.money_exceptions set status = 'RESOLVING', resolved_at = null where id = ?`, [exc.id]);
    const resumed = await api.resolveException({ id: exc.id, action: 'accept_provider', note: 'otra nota', resolvedBy: 'operator:bob' }, ctx());
    expect(resumed).toMatchObject({ status: 'RESOLVED', note: 'n', resolvedBy: 'operator:ana' });
    expect(
      Number((await sql<{ n: string }>('select count(*)::text as n from ledger.postings where idempotency_key = ?', [`recon:${b.key}:accept_provider`]))[0]!.n),
    ).toBe(1);
    await day.removeDiscrepancy(id);
  });

  it("superseded: a line moved to the next day closes day D's missing_at_provider when D+1 finds the value-date break for the same transfer", async () => {
    const id = await day.inject({ kind: 'late_value_date', ref: day.ids.ok.our });
    await run();
    const missing = k('missing_at_provider', day.ids.ok.our);
    expect(await breakOf(missing)).toMatchObject({ status: 'OPEN', differenceCents: -150_000n });
    const next = await run(NEXT);
    expect(next).toMatchObject({ status: 'RECONCILED', breaksByKind: { value_date_mismatch: 1n } });
    expect(await breakOf(k('value_date_mismatch', day.ids.ok.provider, NEXT))).toMatchObject({ status: 'OPEN', differenceCents: 0n, ourId: day.ids.ok.our });
    expect(await breakOf(missing)).toMatchObject({ status: 'RESOLVED', resolution: 'superseded' });
    expect(await exceptionOf(missing)).toMatchObject({ status: 'RESOLVED', resolvedBy: 'reconciliation' });
    await day.removeDiscrepancy(id);
  });

  it('events: one reconciliation.break per new break and one reconciliation.completed per finished run, from the outbox, once', async () => {
    const breaks = (await sql<{ n: number }>('select count(*)::int as n from reconciliation.breaks'))[0]!.n;
    const finished = await sql<{ id: string }>(`select id from reconciliation.runs where status <> 'RUNNING'`);
    await eventually(
      async () =>
        events.filter((e) => e.subject === 'reconciliation.break').length >= breaks &&
        events.filter((e) => e.subject === 'reconciliation.completed').length >= finished.length,
      10_000,
    );
    await rt.relay.flush();
    const breakEvents = events.filter((e) => e.subject === 'reconciliation.break');
    expect(breakEvents).toHaveLength(breaks);
    expect(new Set(breakEvents.map((e) => e.payload.break.key)).size).toBe(breaks);
    const amount = breakEvents.find((e) => e.payload.break.kind === 'amount_mismatch')!.payload.break;
    expect(amount).toMatchObject({ rail: 'breb', date: D, status: 'OPEN', differenceCents: '100' });
    expect(amount.exceptionId).toMatch(/^exc_/);
    const completed = events.filter((e) => e.subject === 'reconciliation.completed');
    expect(completed.map((e) => e.payload.run.id).sort()).toEqual(finished.map((r) => r.id).sort());
    expect(completed.find((e) => e.payload.run.status === 'RECONCILED')!.payload.run).toMatchObject({ rail: 'breb', reportNetCents: expect.any(String) });
  });

  it('ListRuns and ListBreaks are keyset-paginated, newest first, with filters', async () => {
    const all = (await api.listRuns({ rail: 'breb', limit: 100 }, ctx())).items;
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.listRuns({ rail: 'breb', limit: 2, ...(cursor ? { cursor } : {}) }, ctx());
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((r) => r.id));
    expect(all.map((r) => r.startedAt!.getTime())).toEqual([...all.map((r) => r.startedAt!.getTime())].sort((a, b) => b - a));
    expect((await api.listRuns({ status: 'FAILED', limit: 100 }, ctx())).items.every((r) => r.status === 'FAILED')).toBe(true);
    const breaks = (await api.listBreaks({ limit: 100 }, ctx())).items.map((b) => b.key);
    const paged: string[] = [];
    cursor = undefined;
    do {
      const page = await api.listBreaks({ limit: 1, ...(cursor ? { cursor } : {}) }, ctx());
      paged.push(...page.items.map((b) => b.key));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(breaks);
    expect((await api.listBreaks({ status: 'OPEN', limit: 100 }, ctx())).items.every((b) => b.status === 'OPEN')).toBe(true);
    expect((await failure(api.listRuns({ limit: 5, cursor: 'garbage' }, ctx()))).code).toBe('INVALID_REQUEST');
  });

  it('the scheduler: the cron of each rail in Bogotá; a fire reconciles the previous Bogotá day (SCHEDULE, "scheduler") once across replicas', async () => {
    expect([...fired.entries()].map(([rail, t]) => [rail, t.cron, t.timezone])).toEqual([['breb', '0 6 * * *', 'America/Bogota']]);
    const ended = await rt.scheduler.fire('breb');
    expect(ended!.run).toMatchObject({ rail: 'breb', date: D, trigger: 'SCHEDULE', requestedBy: 'scheduler', status: 'RECONCILED' });
    // The same day fired again (a second replica, or the cron again): claimed already, nothing run.
    expect(await rt.scheduler.fire('breb')).toBeUndefined();
    expect((await api.listRuns({ date: D, limit: 100 }, ctx())).items.filter((r) => r.trigger === 'SCHEDULE')).toHaveLength(1);
  });

  it('the scheduler retries an unpublished report with exponential backoff up to RECON_RETRY_ATTEMPTS, then gives up', async () => {
    sleeps.length = 0;
    const ended = await rt.scheduler.fire('breb', new Date('2999-01-02T12:00:00.000Z'));
    expect(ended!.run).toMatchObject({ date: '2999-01-01', status: 'FAILED', trigger: 'SCHEDULE' });
    expect(ended!.run.detail).toMatch(/^ReportNotAvailableError/);
    expect(sleeps).toEqual([1000, 2000]);
    expect((await api.listRuns({ date: '2999-01-01', limit: 10 }, ctx())).items).toHaveLength(3);
  });

  it('metrics on the ops port: runs by rail and outcome, lines reconciled, open exceptions by lower-case kind', async () => {
    const text = await (await fetch(`http://127.0.0.1:${rt.opsPort}/metrics`)).text();
    expect(text).toMatch(/wallet_reconciliation_runs_total\{rail="breb",outcome="RECONCILED"\} [1-9]/);
    expect(text).toMatch(/wallet_reconciliation_runs_total\{rail="breb",outcome="FAILED"\} [1-9]/);
    expect(text).toMatch(/wallet_reconciliation_lines_total\{rail="breb"\} [1-9]/);
    expect(text).toMatch(/wallet_exceptions_open\{service="reconciliation",kind="value_date_mismatch"\} 1/);
    expect((await fetch(`http://127.0.0.1:${rt.opsPort}/readyz`)).status).toBe(200);
  });
});
