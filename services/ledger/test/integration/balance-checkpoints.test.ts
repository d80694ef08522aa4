import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createLogger } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import { BalanceCheckpointer } from '../../src/app/balance-checkpoints.js';
import { CheckpointStore } from '../../src/persistence/checkpoint.store.js';
import { Rail, expectLedgerConsistent, fee, startHarness, zeroFee, type Harness } from './harness.js';

/**
 * Balance checkpoints (docs/balance-checkpoints.md) on a real ledger: postings made through the real
 * gRPC API, then dated back over three weeks (a history the checkpointer finds, as after the
 * migration), checkpointed; GetBalanceAt must then answer exactly what the sum of every posting
 * up to the instant answers, at every posting's instant, a microsecond either side, and every day
 * boundary. The fence, resuming, one pass at a time, and the invariant that checks checkpoints.
 */
const HOUR = 3_600_000;
const log = createLogger('ledger', 'silent');

/** An RFC 3339 UTC instant with microseconds: `ms` since the epoch plus `us` microseconds (0..999). */
function instant(ms: number, us = 0): string {
  const iso = new Date(ms).toISOString(); // …ss.mmmZ
  return `${iso.slice(0, -1)}${String(us).padStart(3, '0')}Z`;
}
/** The start of the Bogotá day (UTC−5, no summer time) `daysAgo` days before today's. */
function bogotaDayStart(daysAgo: number): number {
  const now = Date.now();
  const local = now - 5 * HOUR;
  const start = local - (local % (24 * HOUR)) + 5 * HOUR;
  return start - daysAgo * 24 * HOUR;
}
const minusMicro = (ms: number) => instant(ms - 1, 999);
/** The start of the Bogotá day `ms` falls on. */
const dayStartOf = (ms: number) => ms - ((((ms - 5 * HOUR) % (24 * HOUR)) + 24 * HOUR) % (24 * HOUR));
/** The start of the hour `ms` falls in. */
const hourStartOf = (ms: number) => ms - (ms % HOUR);

describe('balance checkpoints: a balance at an instant from the last checkpoint plus the postings since', () => {
  let h: Harness;
  let store: CheckpointStore;
  const companies = [randomUUID(), randomUUID()];
  /** Every posting's (backdated) instant, in order. */
  let postedAt: string[] = [];

  beforeAll(async () => {
    // The sealer does not run during the test (postings are dated back before they are sealed,
    // as a posting's content, its date included, is what the journal seals).
    // The service's own checkpointer is off: the test runs every pass itself.
    h = await startHarness({ journalSealIntervalMs: 3_600_000, balanceCheckpoints: 'off' });
    store = new CheckpointStore(h.ledger.db, 1); // a checkpoint at the end of every hour a wallet moved
    const ops = companies.map((co) => [
      () => h.api.open(co),
      () => h.api.credit(co, { rail: Rail.BREB, amountCents: 1_000_000n }),
      () => h.api.credit(co, { rail: Rail.ACH, amountCents: 500_000n }),
      async () => {
        const a = await h.api.reserve(co, { amount: 100_000n, fee: fee(500n, 50n, 105n) });
        await h.api.commit(co, a.hold!.id);
      },
      async () => {
        const b = await h.api.reserve(co, { rail: Rail.ACH, amount: 20_000n, fee: zeroFee() });
        await h.api.release(co, b.hold!.id, { errorMessage: 'rechazada' });
      },
      () => h.api.chargeFee(co, { feeCents: 1_000n, ivaCents: 190n }),
      async () => {
        const key = `inflow-${randomUUID()}`;
        await h.api.pseInflow(co, key);
        await h.api.reverseInflow(co, { originalIdempotencyKey: key });
      },
      () => h.api.move(co, { amountCents: 10_000n }),
      () => h.api.reserve(co, { amount: 30_000n, fee: zeroFee() }), // a hold still open at the end
      () => h.api.credit(co, { rail: Rail.BREB, amountCents: 7n }),
    ]);
    // the two companies' operations interleaved
    for (let i = 0; i < ops[0]!.length; i++) for (const list of ops) await list[i]!();

    // Dated back over three weeks, in the order they were made: some on a day's first microsecond,
    // some on its last, several on one day, days with none; the last two stay today (not checkpointed).
    const ids = (await h.ledger.db.query<{ id: string }>('select id::text as id from ledger.postings order by created_at, id')).map((r) => r.id);
    const start = bogotaDayStart(21);
    postedAt = ids.map((_, k) => {
      const ms = start + k * 18 * HOUR + 1_234;
      if (k % 5 === 0) return instant(dayStartOf(ms)); // a day's first microsecond
      if (k % 7 === 0) return minusMicro(dayStartOf(ms)); // the day before's last
      return instant(ms, k % 1000);
    });
    // strictly increasing, all before today
    postedAt = postedAt.map((t, k) => (k > 0 && t <= postedAt[k - 1]! ? instant(Date.parse(postedAt[k - 1]!) + 1000, k) : t));
    for (let k = 0; k < ids.length - 2; k++) {
      await h.ledger.db.query('update ledger.postings set created_at = ?::timestamptz where id = ?::uuid', [postedAt[k], ids[k]]);
    }
    postedAt = postedAt.slice(0, ids.length - 2);
    // A third company's wallet, at the edges: postings on consecutive days, one on the first
    // microsecond of a day that ends a checkpointed day (a checkpoint's own instant), one on the
    // microsecond after it and one on the last microsecond of a day.
    const edge = randomUUID();
    await h.api.open(edge);
    const edgeAt = [
      instant(bogotaDayStart(6) + 10 * HOUR),
      instant(bogotaDayStart(5)),
      instant(bogotaDayStart(5), 1),
      minusMicro(bogotaDayStart(4)),
      instant(bogotaDayStart(4)),
    ];
    for (const [k, at] of edgeAt.entries()) {
      const r = await h.api.credit(edge, { rail: Rail.BREB, amountCents: BigInt(10 ** k) });
      await h.ledger.db.query('update ledger.postings set created_at = ?::timestamptz where id = ?::uuid', [at, r.postingId]);
    }
    companies.push(edge);
    postedAt = [...postedAt, ...edgeAt].sort();
    expect(postedAt.at(-1)! < instant(bogotaDayStart(0))).toBe(true);
    // A history that predates the checkpoints (as right after migration 0014): no pass has run over it.
    await h.ledger.db.query('delete from ledger.balance_checkpoints');
    await h.ledger.db.query('update ledger.balance_checkpoint_progress set through = null, target = null, after_company = null, after_rail = null');
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** The balance by the definition: every posting of the company up to `at`, summed (no checkpoint). */
  async function bySum(co: string, rail: 'BREB' | 'ACH', at: string) {
    const [r] = await h.ledger.db.query<{ available: string; pending: string; postings: string }>(
      `select coalesce(sum(e.amount) filter (where e.account = ?), 0)::text as available,
              coalesce(sum(e.amount) filter (where e.account = ?), 0)::text as pending, count(distinct p.id)::text as postings
         from ledger.postings p join ledger.entries e on e.posting_id = p.id
        where p.company_id = ? and p.created_at <= ?::timestamptz and e.account in (?, ?)`,
      [`wallet_available:${co}:${rail}`, `wallet_pending_out:${co}:${rail}`, co, at, `wallet_available:${co}:${rail}`, `wallet_pending_out:${co}:${rail}`],
    );
    return { availableCents: BigInt(r!.available), pendingOutCents: BigInt(r!.pending), postings: BigInt(r!.postings) };
  }
  const viaApi = async (co: string, rail: 'BREB' | 'ACH', at: string) => {
    const r = await h.client.getBalanceAt(ledgerV1.GetBalanceAtRequest.fromPartial({ rail: Rail[rail], at }), h.ctx(co));
    return { availableCents: r.availableCents, pendingOutCents: r.pendingOutCents, postings: r.postings };
  };
  /** Every instant worth asking about: each posting's, a µs either side, each day boundary and a µs before it. */
  const instants = () => {
    const out = new Set<string>();
    for (const t of postedAt) {
      const ms = Date.parse(t);
      const us = Number(t.slice(23, 26));
      out.add(t);
      out.add(us === 999 ? instant(ms + 1, 0) : instant(ms, us + 1));
      out.add(us === 0 ? instant(ms - 1, 999) : instant(ms, us - 1));
    }
    for (let d = 22; d >= 0; d--) {
      out.add(instant(bogotaDayStart(d)));
      out.add(minusMicro(bogotaDayStart(d)));
    }
    // the end of each posting's hour (a checkpoint's instant) and the microsecond before it
    for (const t of postedAt) {
      const end = hourStartOf(Date.parse(t)) + HOUR;
      if (end < Date.now()) {
        out.add(instant(end));
        out.add(minusMicro(end));
      }
    }
    out.add(instant(Date.now() - 1000));
    return [...out].sort();
  };
  async function expectEveryInstantBySum() {
    let checked = 0;
    for (const at of instants()) {
      for (const co of companies) {
        for (const rail of ['BREB', 'ACH'] as const) {
          expect({ co, rail, at, ...(await viaApi(co, rail, at)) }).toEqual({ co, rail, at, ...(await bySum(co, rail, at)) });
          checked++;
        }
      }
    }
    return checked;
  }
  const checkpointRows = () =>
    h.ledger.db.query<{ company_id: string; rail: string; through: string; available: string; postings: string }>(
      `select company_id, rail, to_char(through at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as through,
              available_cents::text as available, postings::text as postings
         from ledger.balance_checkpoints order by company_id, rail, through`,
    );

  it('before any checkpoint: the sum from the beginning, at every instant', async () => {
    expect(await checkpointRows()).toEqual([]);
    expect(await expectEveryInstantBySum()).toBeGreaterThan(300);
  });

  it('a pass to a fence in the past writes a checkpoint per wallet and hour with postings, one wallet per transaction', async () => {
    // The first week only (a fence named by the test: the pass checkpoints days before it).
    const fence = instant(bogotaDayStart(14));
    let batches = 0;
    for (;;) {
      const b = await store.batch(fence, 1);
      expect(b).toMatchObject({ locked: true, target: fence });
      batches++;
      if (b.finished) break;
    }
    expect(batches).toBe(companies.length * 2 + 1); // a wallet per batch, then the one that finds no more
    const rows = await checkpointRows();
    // one row per wallet and hour with postings of its company, before the fence (every = 1): a wallet
    // that did not move in that hour carries its sums forward
    const days = await h.ledger.db.query<{ n: string }>(
      `select count(*)::text as n from (
         select distinct w.company_id, w.rail, date_trunc('hour', p.created_at at time zone 'UTC')
           from ledger.postings p join ledger.wallets w on w.company_id = p.company_id
          where p.created_at < ?::timestamptz) d`,
      [fence],
    );
    expect(rows.length).toBe(Number(days[0]!.n));
    expect(rows.length).toBeGreaterThan(4);
    expect(rows.every((r) => r.through <= fence)).toBe(true);
    expect(
      (
        await h.ledger.db.query<{ through: string }>(
          `select to_char(through at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as through from ledger.balance_checkpoint_progress`,
        )
      )[0]!.through,
    ).toBe(fence);
    await expectEveryInstantBySum();
    await expectLedgerConsistent(h);
  });

  it('the next pass goes on from each wallet’s last checkpoint to the real fence (the checkpointer itself)', async () => {
    const before = (await checkpointRows()).length;
    const cp = new BalanceCheckpointer(store, { intervalMs: 3_600_000, marginSeconds: 0, batch: 3 }, log);
    const hour = hourStartOf(Date.now());
    const pass = await cp.run();
    expect(pass).toMatchObject({ ran: true, wallets: companies.length * 2 });
    // the fence with no margin and no transaction open: the start of this hour (the database's clock)
    expect([instant(hour), instant(hourStartOf(Date.now()))]).toContain(pass.through);
    expect(pass.written).toBeGreaterThan(0);
    expect((await checkpointRows()).length).toBe(before + pass.written);
    // nothing more to write until an hour closes with postings in it
    expect(await cp.run()).toMatchObject({ ran: true, written: 0 });
    expect(await expectEveryInstantBySum()).toBeGreaterThan(300);
    await expectLedgerConsistent(h);
  });

  it('a new posting today does not touch the checkpoints and counts at once', async () => {
    const co = companies[0]!;
    const rows = await checkpointRows();
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 123n });
    const now = instant(Date.now());
    expect(await viaApi(co, 'BREB', now)).toEqual(await bySum(co, 'BREB', now));
    expect(await checkpointRows()).toEqual(rows);
  });

  it('two passes at once take turns by the lock: every checkpoint is written once', async () => {
    await h.ledger.db.query('delete from ledger.balance_checkpoints');
    await h.ledger.db.query('update ledger.balance_checkpoint_progress set through = null');
    const a = new BalanceCheckpointer(store, { intervalMs: 3_600_000, marginSeconds: 0, batch: 1 }, log);
    const b = new BalanceCheckpointer(new CheckpointStore(h.ledger.db), { intervalMs: 3_600_000, marginSeconds: 0, batch: 1 }, log);
    const [ra, rb] = await Promise.all([a.run(), b.run()]);
    // Each batch is its own transaction: the two may take turns, never write the same checkpoint
    // (the primary key would refuse it); together they wrote every checkpoint once.
    expect(ra.written + rb.written).toBe((await checkpointRows()).length);
    expect(ra.ran || rb.ran).toBe(true);
    await expectEveryInstantBySum();
    await expectLedgerConsistent(h);
  });

  it('a pass cut short resumes where it stopped, towards the target it chose', async () => {
    await h.ledger.db.query('delete from ledger.balance_checkpoints');
    await h.ledger.db.query('update ledger.balance_checkpoint_progress set through = null');
    const target = instant(bogotaDayStart(7) + 3 * HOUR);
    expect(await store.batch(target, 1)).toMatchObject({ target, finished: false, wallets: 1 });
    // a later fence does not move the pass in progress
    const later = instant(bogotaDayStart(1));
    expect(await store.batch(later, 1)).toMatchObject({ target, finished: false, wallets: 1 });
    const cp = new BalanceCheckpointer(store, { intervalMs: 3_600_000, marginSeconds: 0, batch: 1 }, log);
    const hour = hourStartOf(Date.now());
    const pass = await cp.run();
    // it finished the old pass, then went on to the fence of now
    expect([instant(hour), instant(hourStartOf(Date.now()))]).toContain(pass.through);
    await expectEveryInstantBySum();
    await expectLedgerConsistent(h);
  });

  it("with every = 3, a wallet gets a checkpoint each time its company's postings since its last one cross a multiple of 3: few rows, a short tail", async () => {
    await h.ledger.db.query('delete from ledger.balance_checkpoints');
    await h.ledger.db.query('update ledger.balance_checkpoint_progress set through = null');
    const three = new BalanceCheckpointer(new CheckpointStore(h.ledger.db, 3), { intervalMs: 3_600_000, marginSeconds: 0 }, log);
    const pass = await three.run();
    expect(pass.ran).toBe(true);
    const rows = await checkpointRows();
    for (const co of companies) {
      for (const rail of ['BREB', 'ACH']) {
        const mine = rows.filter((r) => r.company_id === co && r.rail === rail);
        const companyBetween = async (from: string | undefined, to: string) =>
          Number(
            (
              await h.ledger.db.query<{ n: string }>(
                `select count(*)::text as n from ledger.postings
                  where company_id = ? and created_at >= coalesce(?::timestamptz, '-infinity') and created_at < ?::timestamptz`,
                [co, from ?? null, to],
              )
            )[0]!.n,
          );
        // at most a row per multiple of 3 of the company's postings
        expect(mine.length).toBeLessThanOrEqual(Math.floor((await companyBetween(undefined, pass.through!)) / 3));
        // one pass from nothing: each row where the company's count from the beginning crossed a further multiple of 3
        let multiple = 0;
        for (const r of mine) {
          const next = Math.floor((await companyBetween(undefined, r.through)) / 3);
          expect(next).toBeGreaterThan(multiple);
          multiple = next;
        }
        // what a balance read scans after the wallet's last checkpoint, up to where the checkpoints are complete: fewer than 3
        expect(await companyBetween(mine.at(-1)?.through, pass.through!)).toBeLessThan(3);
      }
    }
    expect(rows.length).toBeLessThan((await h.ledger.db.query('select 1 from ledger.postings')).length);
    await expectEveryInstantBySum();
    await expectLedgerConsistent(h);
  });

  it('the fence: an hour closes after the margin, and never past the start of a transaction still open', async () => {
    const inTwoDays = instant(bogotaDayStart(-2) + 6 * HOUR + 1_500_000);
    const free = await store.fence(0, inTwoDays);
    expect(free).toMatchObject({ through: instant(bogotaDayStart(-2) + 6 * HOUR), heldBackBy: null });
    // the margin: 7 hours before that instant
    expect((await store.fence(7 * 3600, inTwoDays)).through).toBe(instant(bogotaDayStart(-2) - HOUR));
    const c = new pg.Client({ connectionString: h.tdb.url });
    await c.connect();
    try {
      await c.query('begin');
      await c.query('select 1');
      const held = await store.fence(0, inTwoDays);
      // the open transaction began this hour: the fence stops at this hour's start
      expect([instant(hourStartOf(Date.now())), instant(hourStartOf(Date.now()) - HOUR)]).toContain(held.through);
      expect(held.heldBackBy).not.toBeNull();
      await c.query('commit');
      expect((await store.fence(0, inTwoDays)).heldBackBy).toBeNull();
    } finally {
      await c.end();
    }
  });

  it('the invariants catch a checkpoint that disagrees with the journal, and a posting dated inside a checkpointed day', async () => {
    const co = companies[1]!;
    const [cp] = await h.ledger.db.query<{ through: string }>(
      `select through::text as through from ledger.balance_checkpoints where company_id = ? and rail = 'BREB' order by through limit 1`,
      [co],
    );
    await h.ledger.db.query(
      `update ledger.balance_checkpoints set available_cents = available_cents + 1 where company_id = ? and rail = 'BREB' and through = ?::timestamptz`,
      [co, cp!.through],
    );
    let report = await h.api.invariants();
    expect(report.violations).toEqual([expect.stringMatching(new RegExp(`^\\[8\\] balance checkpoint ${co}:BREB at .*: available`))]);
    await h.ledger.db.query(
      `update ledger.balance_checkpoints set available_cents = available_cents - 1 where company_id = ? and rail = 'BREB' and through = ?::timestamptz`,
      [co, cp!.through],
    );
    // a posting of today dated back before the first checkpoint (a late commit inside checkpointed history)
    const late = instant(bogotaDayStart(22) + 3 * HOUR);
    const [p] = await h.ledger.db.query<{ id: string }>(
      `select p.id::text as id from ledger.postings p join ledger.entries e on e.posting_id = p.id
        where p.company_id = ? and e.account = ? order by p.created_at desc limit 1`,
      [co, `wallet_available:${co}:BREB`],
    );
    const [{ was } = { was: '' }] = await h.ledger.db.query<{ was: string }>('select created_at::text as was from ledger.postings where id = ?::uuid', [p!.id]);
    await h.ledger.db.query('update ledger.postings set created_at = ?::timestamptz where id = ?::uuid', [late, p!.id]);
    report = await h.api.invariants();
    // every later checkpoint of the wallet is short of it
    expect(report.violations.length).toBeGreaterThan(1);
    expect(report.violations.every((v) => v.startsWith(`[8] balance checkpoint ${co}:BREB at `))).toBe(true);
    await h.ledger.db.query('update ledger.postings set created_at = ?::timestamptz where id = ?::uuid', [was, p!.id]);
    await expectLedgerConsistent(h);
  });
});
