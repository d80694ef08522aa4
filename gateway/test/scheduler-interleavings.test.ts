import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { createLogger, Database, runKey, type Tx } from '@wallet/platform';
import { Choreography, createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { Scheduler } from '../src/app/schedules/scheduler.js';
import { appendRunEvent } from '../src/app/schedules/schedule-events.js';
import { nextAfter } from '../src/app/schedules/schedule-rules.js';
import { gatewayMigrations } from '../src/persistence/migrations/index.js';
import { ScheduleStore, type RunRow, type StoredRule } from '../src/persistence/schedule.store.js';

/**
 * The scheduler on two replicas, under every interleaving fast-check's scheduler explores, over real
 * Postgres: each replica's claims, leases, asks downstream and run endings stop at points, and one
 * replica dies right after asking downstream for its first run (the run stays STARTING, leased).
 * Three weekly schedules each have two runs due (one missed while no replica ran). Whatever the order:
 * every run is recorded once (one row per schedule and nominal time), the run a dead replica left is
 * made again once its lease ran out, under its same key, so downstream makes one thing per key; each
 * run ends once, with one outcome event.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 20);
const LEASE_S = 30;
const store = new ScheduleStore();
const log = createLogger('scheduler-interleavings', 'silent');

class ReplicaDied extends Error {}

describe('scheduler: two replicas, a crash between asking and ending a run (fast-check scheduler)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let companyId: string;
  let choreo: Choreography | undefined;
  const schedules = fc.scheduler({
    act: Choreography.act(() => choreo),
  });

  beforeAll(async () => {
    tdb = await createTestDatabase('gw-sched');
    db = await Database.open({ url: tdb.url, schema: 'gateway', migrations: gatewayMigrations, logger: log, poolMax: 8 });
    await db.migrate();
    companyId = randomUUID();
    await db.query(`insert into gateway.companies (id, name, nit, tax_regime, multi_sig_threshold) values (?, 'Réplicas S.A.S.', '900111222-3', 'COMMON', 0)`, [
      companyId,
    ]);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it(`makes every run once, in ${RUNS} explored schedules`, async () => {
    await fc.assert(
      fc.asyncProperty(schedules, fc.constantFrom('A', 'B'), async (s, dying) => {
        choreo = new Choreography(s);
        const c = choreo;
        await db.query(`delete from gateway.outbox`);
        await db.query(`delete from gateway.schedule_runs`);
        await db.query(`delete from gateway.schedules`);
        // Weekly on Friday 09:00 from Friday 18 December 2026; now is Friday 25th 09:00:01: two runs due each.
        const rule: StoredRule = {
          recurrence: { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '09:00' },
          businessDayRule: 'NONE',
          startAt: '2026-12-18T00:00:00.000Z',
          endAt: null,
          maxRuns: null,
        };
        for (let i = 0; i < 3; i++) {
          await store.insert(db, {
            id: randomUUID(),
            companyId,
            description: `s${i}`,
            rule,
            action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 100 + i },
            authorKind: 'apikey',
            authorId: randomUUID(),
            next: nextAfter(rule, null),
          });
        }
        const clock = { t: Date.parse('2026-12-25T14:00:01Z') };
        /** Downstream, idempotent by key as the transfer service and the ledger are: what it made, per key. */
        const made = new Map<string, string>();
        const asks: string[] = [];
        const died = new Set<string>();

        /** The database as a replica sees it: every statement and transaction stops at a point first. */
        const seen = (name: string) =>
          ({
            tx: async <T>(fn: (tx: Tx) => Promise<T>) => {
              await c.point(`${name} tx`);
              return db.tx(fn);
            },
            query: async <T>(sql: string, params?: readonly unknown[]) => {
              await c.point(`${name} query`);
              return db.query<T>(sql, params);
            },
          }) as unknown as Database;

        const executor = (name: string) => ({
          async execute(run: RunRow): Promise<void> {
            await c.point(`ask ${run.runKey.slice(-16)}`);
            asks.push(run.runKey);
            if (!made.has(run.runKey)) made.set(run.runKey, randomUUID());
            if (name === dying && !died.has(name)) {
              died.add(name);
              throw new ReplicaDied(); // asked, never ended: the row stays STARTING until its lease runs out
            }
            await c.point(`end ${run.runKey.slice(-16)}`);
            const at = new Date(clock.t).toISOString();
            await db.tx(async (tx) => {
              const won = await store.finishRun(tx, run.id, {
                status: 'STARTED',
                amountCents: 100n,
                moveId: made.get(run.runKey)!,
                outcomeStatus: 'COMPLETED',
                now: at,
              });
              if (won)
                await appendRunEvent(tx, run, { kind: 'started', transferId: null, moveId: made.get(run.runKey)!, amountCents: 100n, status: 'COMPLETED', at });
            });
          },
        });
        const replica = (name: string) =>
          new Scheduler(seen(name), executor(name), { now: () => new Date(clock.t) }, { batch: 2, concurrency: 2, runLeaseSeconds: LEASE_S }, log);
        const a = replica('A');
        const b = replica('B');

        // Both replicas look at once; then, past the lease, twice more each.
        const round = () => Promise.all([c.actor('A', () => a.tick()), c.actor('B', () => b.tick())]);
        const first = round();
        await c.finish();
        await first;
        clock.t += (LEASE_S + 1) * 1000;
        for (let i = 0; i < 2; i++) {
          const next = round();
          await c.finish();
          await next;
        }

        const runs = await db.query<{ schedule_id: string; seq: number; status: string; run_key: string; move_id: string | null }>(
          `select schedule_id::text, seq, status, run_key, move_id from gateway.schedule_runs order by schedule_id, seq`,
        );
        const events = await db.query<{ n: number; runs: number }>(
          `select count(*)::int as n, count(distinct payload->'run'->>'runId')::int as runs from gateway.outbox where subject = 'schedule.run_started'`,
        );
        const report = `trace:\n${c.trace.join('\n')}`;
        expect({ runs: runs.length, keys: new Set(runs.map((r) => r.run_key)).size, report }).toEqual({ runs: 6, keys: 6, report });
        for (const r of runs) {
          expect({ status: r.status, moveId: r.move_id, report }).toEqual({ status: 'STARTED', moveId: made.get(r.run_key), report });
        }
        expect(made.size).toBe(6);
        expect(asks.length).toBe(7); // six runs, one asked twice: the one the dead replica left
        expect(events[0]).toEqual({ n: 6, runs: 6 });
        // The runs are the schedules' first two, each under its nominal time's key.
        const schedulesRows = await db.query<{ id: string; runs_started: number }>(`select id::text, runs_started from gateway.schedules`);
        for (const sch of schedulesRows) {
          expect(sch.runs_started).toBe(2);
          expect(runs.filter((r) => r.schedule_id === sch.id).map((r) => r.run_key)).toEqual([
            runKey(sch.id, { nominalLocal: '2026-12-18T09:00' }),
            runKey(sch.id, { nominalLocal: '2026-12-25T09:00' }),
          ]);
        }
      }),
      { numRuns: RUNS },
    );
  }, 300_000);
});
