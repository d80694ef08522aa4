import { randomUUID } from 'node:crypto';
import { createLogger } from '@wallet/platform';
import { CheckInvariants } from '../../src/app/check-invariants.js';
import { LedgerSelfCheck } from '../../src/app/self-check.js';
import { checkInvariants, readCut } from '../../src/persistence/invariants.js';
import { SqlLedgerStore } from '../../src/persistence/ledger.store.js';
import { MovementStatus, Rail, expectLedgerConsistent, sealJournal, startHarness, type Harness } from './harness.js';

/**
 * The verified cut and the incremental check (docs/ledger-check.md): a check that held records where
 * the journal was whole; the incremental check reads only what was sealed or queued since, against the
 * cut's sums, and finds every kind of damage done to what it reads; a check that found something never
 * moves the cut; two recorders at once never count a stretch twice.
 */
describe('the verified cut and the incremental check', () => {
  let h: Harness;
  const incremental = (record = false) => checkInvariants(h.ledger.db, { mode: 'incremental', record });
  const full = () => checkInvariants(h.ledger.db);

  beforeAll(async () => {
    // Postings are sealed when the test says so: some sealed since the cut, some still queued.
    h = await startHarness({ journalSealIntervalMs: 3_600_000, balanceCheckpoints: 'off' });
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** A company with both wallets, credited, one transfer committed, one released and one still live. */
  async function activity(): Promise<{ co: string; liveHold: string; liveMovement: string }> {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 50_000n });
    await h.api.credit(co, { rail: Rail.ACH, amountCents: 20_000n });
    const done = await h.api.reserve(co, { amount: 1_000n, movement: { id: randomUUID(), status: MovementStatus.PENDING } });
    await h.api.commit(co, done.hold!.id);
    const failed = await h.api.reserve(co, { amount: 2_000n, movement: { id: randomUUID(), status: MovementStatus.PENDING } });
    await h.api.release(co, failed.hold!.id);
    const live = await h.api.reserve(co, { amount: 3_000n, movement: { id: randomUUID(), status: MovementStatus.PENDING } });
    await h.api.move(co, { amountCents: 5_000n });
    return { co, liveHold: live.hold!.id, liveMovement: live.movement!.id };
  }

  /** The cut's wallet sums, recomputed from the journal's sealed postings up to the cut. */
  async function expectCutExact(): Promise<void> {
    const db = h.ledger.db;
    const [cut] = await db.query<{ seq: string; entries: string }>('select seq::text as seq, entries::text as entries from ledger.journal_cut');
    const mismatches = await db.query(
      `with s as (
         select split_part(e.account, ':', 2) as company_id, split_part(e.account, ':', 3) as rail,
                coalesce(sum(e.amount) filter (where starts_with(e.account, 'wallet_available:')), 0) as available,
                coalesce(sum(e.amount) filter (where starts_with(e.account, 'wallet_pending_out:')), 0) as pending,
                count(distinct e.posting_id) as postings
           from ledger.journal j join ledger.entries e on e.posting_id = j.posting_id
          where j.seq <= ?::bigint and (starts_with(e.account, 'wallet_available:') or starts_with(e.account, 'wallet_pending_out:'))
          group by 1, 2)
       select * from s full join ledger.journal_cut_wallets c using (company_id, rail)
        where c.company_id is null or s.company_id is null or c.available_cents <> s.available
           or c.pending_out_cents <> s.pending or c.postings <> s.postings`,
      [cut!.seq],
    );
    expect(mismatches).toEqual([]);
    const [sealed] = await db.query<{ n: string }>(
      'select count(*)::text as n from ledger.journal j join ledger.entries e on e.posting_id = j.posting_id where j.seq <= ?::bigint',
      [cut!.seq],
    );
    expect(cut!.entries).toBe(sealed!.n);
  }

  it('with no cut, an incremental check is the full one; a held check records the cut at the sealed head', async () => {
    await activity();
    expect(await readCut((sql) => h.ledger.db.query(sql))).toBeNull();
    const first = await incremental(true);
    expect(first).toMatchObject({ violations: [], mode: 'full', since: null });
    // nothing was sealed yet: the cut is at the journal's start, every posting still to check
    expect(first.cut).toMatchObject({ seq: 0n, mode: 'full' });
    await sealJournal(h);
    const second = await incremental(true);
    expect(second).toMatchObject({ violations: [], mode: 'incremental', since: { seq: 0n } });
    const [head] = await h.ledger.db.query<{ seq: string; hash: Buffer }>('select seq::text as seq, hash from ledger.journal order by seq desc limit 1');
    expect(second.cut!.seq).toBe(BigInt(head!.seq));
    const [cut] = await h.ledger.db.query<{ hash: Buffer }>('select hash from ledger.journal_cut');
    expect(cut!.hash.equals(head!.hash)).toBe(true);
    await expectCutExact();
  });

  it('counts and verdicts agree with the full check, with postings both sealed and queued since the cut', async () => {
    for (let round = 0; round < 3; round++) {
      await activity();
      await sealJournal(h);
      await activity(); // queued, not sealed
      const [inc, whole] = [await incremental(), await full()];
      expect(inc.violations).toEqual([]);
      expect(whole.violations).toEqual([]);
      expect({ postings: inc.postings, entries: inc.entries, wallets: inc.wallets }).toEqual({
        postings: whole.postings,
        entries: whole.entries,
        wallets: whole.wallets,
      });
      const recorded = await incremental(true);
      expect(recorded.cut!.seq).toBeGreaterThan(recorded.since!.seq);
      await expectCutExact();
    }
    // nothing sealed since: the cut stays
    const again = await incremental(true);
    expect(again.cut).toBeUndefined();
    await expectCutExact();
  });

  describe('finds damage to what it reads, and moves no cut while it does', () => {
    let co: string;
    let liveHold: string;
    let liveMovement: string;
    let cutBefore: bigint;

    beforeAll(async () => {
      await sealJournal(h);
      await incremental(true);
      ({ co, liveHold, liveMovement } = await activity());
      await sealJournal(h);
      cutBefore = (await readCut((sql) => h.ledger.db.query(sql)))!.seq;
    });
    afterEach(async () => {
      expect((await incremental()).violations).toEqual([]);
    });

    async function damaged(breakSql: string, repairSql: string, params: unknown[] = []): Promise<string[]> {
      await h.ledger.db.query(breakSql, params);
      try {
        const r = await incremental(true);
        expect(r).toMatchObject({ mode: 'incremental' });
        expect(r.cut).toBeUndefined();
        expect((await readCut((sql) => h.ledger.db.query(sql)))!.seq).toBe(cutBefore);
        // the full check agrees on each line the incremental one reports
        const whole = await full();
        for (const v of r.violations) expect(whole.violations).toContain(v);
        // and a full check that would record (its own pass over the wallets) finds the same, and records nothing
        const wholeRecording = await checkInvariants(h.ledger.db, { mode: 'full', record: true });
        expect(wholeRecording.violations).toEqual(whole.violations);
        expect(wholeRecording.cut).toBeUndefined();
        expect((await readCut((sql) => h.ledger.db.query(sql)))!.seq).toBe(cutBefore);
        return r.violations;
      } finally {
        await h.ledger.db.query(repairSql, params);
      }
    }

    it('a wallet that disagrees with the cut plus the new postings (2)', async () => {
      const v = await damaged(
        `update ledger.wallets set available_cents = available_cents + 1 where company_id = ? and rail = 'ACH'`,
        `update ledger.wallets set available_cents = available_cents - 1 where company_id = ? and rail = 'ACH'`,
        [co],
      );
      expect(v).toEqual([expect.stringMatching(new RegExp(`^\\[2\\] wallet ${co}:ACH: available \\d+ vs journal \\d+`))]);
    });

    it('a new posting that does not balance (1), and its movement (5)', async () => {
      const v = await damaged(
        `update ledger.entries set amount = amount + 5 where account = 'funding' and posting_id in
           (select id from ledger.postings where company_id = ? and kind = 'credit' and rail = 'ACH')`,
        `update ledger.entries set amount = amount - 5 where account = 'funding' and posting_id in
           (select id from ledger.postings where company_id = ? and kind = 'credit' and rail = 'ACH')`,
        [co],
      );
      expect(v.filter((x) => x.startsWith('[1] posting'))).toHaveLength(1);
      expect(v.some((x) => x.startsWith('[5] movement'))).toBe(true);
    });

    it("a live transfer's hold closed by hand (3), a negative wallet (4), a movement's amount (5)", async () => {
      const v3 = await damaged(`update ledger.holds set status = 'RELEASED' where id = ?::uuid`, `update ledger.holds set status = 'OPEN' where id = ?::uuid`, [
        liveHold,
      ]);
      expect(v3).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^\[3\] wallet .* pending_out 3000 but open holds total 0$/),
          `[3] hold ${liveHold} is RELEASED but its transfer is PENDING`,
          `[3] transfer ${liveMovement} is PENDING without a matching hold`,
        ]),
      );
      const v4 = await damaged(
        `update ledger.wallets set available_cents = -available_cents where company_id = ? and rail = 'BREB'`,
        `update ledger.wallets set available_cents = -available_cents where company_id = ? and rail = 'BREB'`,
        [co],
      );
      expect(v4).toContain(`[4] wallet ${co}:BREB available is ${-(50_000 - 1_000 - 3_000 + 5_000)}`);
      const v5 = await damaged(`update ledger.movements set total_fee = 7 where id = ?::uuid`, `update ledger.movements set total_fee = 0 where id = ?::uuid`, [
        liveMovement,
      ]);
      expect(v5).toEqual([expect.stringMatching(new RegExp(`^\\[5\\] movement ${liveMovement} \\(TRANSFER_OUT PENDING\\)`))]);
    });

    it('a move that lost a leg (7)', async () => {
      const [leg] = await h.ledger.db.query<{ id: string; move_id: string }>(
        `select id::text as id, move_id::text as move_id from ledger.movements where company_id = ? and move_id is not null and type = 'TRANSFER_IN'`,
        [co],
      );
      const v = await damaged(
        `update ledger.movements set move_id = null where id = '${leg!.id}'::uuid`,
        `update ledger.movements set move_id = '${leg!.move_id}'::uuid where id = '${leg!.id}'::uuid`,
      );
      expect(v).toContain(`[7] move ${leg!.move_id} (company ${co}) has 1 legs of 1 types and 2 entries, 2 on its company's wallets`);
    }, 30_000);

    it('a checkpoint written since the cut that disagrees with the journal (8); a right one passes', async () => {
      const db = h.ledger.db;
      const [w] = await db.query<{ available: string; pending: string; version: string }>(
        `select available_cents::text as available, pending_out_cents::text as pending, version::text as version
           from ledger.wallets where company_id = ? and rail = 'BREB'`,
        [co],
      );
      // at the end of the hour of the company's last posting, a checkpoint is the wallet as it is now
      const insert = `insert into ledger.balance_checkpoints (company_id, rail, through, available_cents, pending_out_cents, postings)
                      select ?, 'BREB', (date_trunc('hour', max(created_at) at time zone 'UTC') + interval '1 hour') at time zone 'UTC', ?::bigint, ?::bigint, ?::bigint
                        from ledger.postings where company_id = ?`;
      await db.query(insert, [co, w!.available, w!.pending, w!.version, co]);
      try {
        expect((await incremental()).violations).toEqual([]);
        const v = await damaged(
          `update ledger.balance_checkpoints set available_cents = available_cents + 1 where company_id = ?`,
          `update ledger.balance_checkpoints set available_cents = available_cents - 1 where company_id = ?`,
          [co],
        );
        expect(v).toEqual([
          expect.stringMatching(new RegExp(`^\\[8\\] balance checkpoint ${co}:BREB at .*: available ${Number(w!.available) + 1} vs journal ${w!.available},`)),
        ]);
      } finally {
        await db.query('delete from ledger.balance_checkpoints where company_id = ?', [co]);
      }
    });

    it('what it does not reread (an entry sealed before the cut) is the full check’s to find', async () => {
      const db = h.ledger.db;
      const [old] = await db.query<{ posting_id: string }>(
        `select e.posting_id::text as posting_id from ledger.entries e join ledger.journal j on j.posting_id = e.posting_id
          where j.seq <= ?::bigint and e.account = 'funding' limit 1`,
        [cutBefore.toString()],
      );
      await db.query(`update ledger.entries set amount = amount - 1 where posting_id = ?::uuid and account = 'funding'`, [old!.posting_id]);
      try {
        expect((await incremental()).violations).toEqual([]);
        expect((await full()).violations).toContain(`[1] posting ${old!.posting_id} sums to -1, not 0`);
      } finally {
        await db.query(`update ledger.entries set amount = amount + 1 where posting_id = ?::uuid and account = 'funding'`, [old!.posting_id]);
      }
    });
  });

  it('a full check records over an existing cut in place, from its own pass over the wallets; the incremental goes on from it', async () => {
    await activity();
    await sealJournal(h);
    await activity(); // queued: in the check, not in the cut
    const before = await readCut((sql) => h.ledger.db.query(sql));
    expect(before).not.toBeNull();
    const recorded = await checkInvariants(h.ledger.db, { mode: 'full', record: true });
    expect(recorded).toMatchObject({ violations: [], mode: 'full', since: null, cut: { mode: 'full' } });
    expect(recorded.cut!.seq).toBeGreaterThanOrEqual(before!.seq);
    const [rows] = await h.ledger.db.query<{ n: string; mode: string }>('select count(*)::text as n, min(mode) as mode from ledger.journal_cut');
    expect(rows).toEqual({ n: '1', mode: 'full' });
    await expectCutExact();
    await sealJournal(h);
    const next = await incremental(true);
    expect(next).toMatchObject({ violations: [], mode: 'incremental', since: { seq: recorded.cut!.seq } });
    await expectCutExact();
    // a full check that records while another full one does: one of them wins the cut, never both
    await activity();
    await sealJournal(h);
    const both = await Promise.allSettled([checkInvariants(h.ledger.db, { record: true }), checkInvariants(h.ledger.db, { record: true })]);
    expect(both.some((r) => r.status === 'fulfilled' && r.value.cut)).toBe(true);
    for (const r of both) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/serializ|duplicate key|moved during the check/);
    await expectCutExact();
  });

  it('two recorders at once never count a stretch twice', async () => {
    for (let round = 0; round < 4; round++) {
      await activity();
      await sealJournal(h);
      const results = await Promise.allSettled([incremental(true), incremental(true), incremental(true)]);
      const recorded = results.filter((r) => r.status === 'fulfilled' && r.value.cut);
      expect(recorded.length).toBeGreaterThanOrEqual(1);
      for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/serializ|duplicate key|moved during the check/);
      await expectCutExact();
    }
    expect((await incremental()).violations).toEqual([]);
  });

  it("the ledger's self-check: records while the journal holds, keeps the cut where it held when it does not", async () => {
    const log = createLogger('test', 'silent');
    const selfCheck = new LedgerSelfCheck(new CheckInvariants({ store: new SqlLedgerStore(h.ledger.db) }), { intervalMs: 3_600_000 }, log);
    const { co } = await activity();
    await sealJournal(h);
    expect(await selfCheck.run()).toEqual({ ok: true, violations: 0 });
    const held = (await readCut((sql) => h.ledger.db.query(sql)))!.seq;
    await activity();
    await sealJournal(h);
    const db = h.ledger.db;
    await db.query(`update ledger.wallets set version = version + 1 where company_id = ? and rail = 'BREB'`, [co]);
    try {
      expect(await selfCheck.run()).toEqual({ ok: false, violations: 1 });
      expect((await readCut((sql) => db.query(sql)))!.seq).toBe(held);
    } finally {
      await db.query(`update ledger.wallets set version = version - 1 where company_id = ? and rail = 'BREB'`, [co]);
    }
    expect(await selfCheck.run()).toEqual({ ok: true, violations: 0 });
    expect((await readCut((sql) => db.query(sql)))!.seq).toBeGreaterThan(held);
    await expectCutExact();
    await expectLedgerConsistent(h);
  });
});
