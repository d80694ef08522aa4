import { randomUUID } from 'node:crypto';
import { MovementStatus, Rail, expectLedgerConsistent, sealJournal, startHarness, type Harness } from './harness.js';

/** CheckInvariants must notice each kind of damage (here made by hand, then undone). */
describe('CheckInvariants finds violations', () => {
  let h: Harness;
  let co: string;
  let holdId: string;
  let movementId: string;

  beforeAll(async () => {
    h = await startHarness();
    co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 10_000n });
    const r = await h.api.reserve(co, { amount: 1_000n, movement: { id: randomUUID(), status: MovementStatus.PENDING } });
    holdId = r.hold!.id;
    movementId = r.movement!.id;
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  async function damaged(breakSql: string, repairSql: string, params: unknown[] = []): Promise<string[]> {
    await sealJournal(h);
    await h.ledger.db.query(breakSql, params);
    try {
      const r = await h.api.invariants();
      expect(r.ok).toBe(false);
      return r.violations;
    } finally {
      await h.ledger.db.query(repairSql, params);
    }
  }

  it('reports counts on a healthy ledger', async () => {
    const r = await h.api.invariants();
    expect(r).toMatchObject({ ok: true, violations: [], postings: 2n, entries: 4n, wallets: 2n });
  });

  it('a wallet that disagrees with its entries or its version (2)', async () => {
    const v = await damaged(
      `update ledger.wallets set available_cents = available_cents + 1, version = version + 1 where company_id = ? and rail = 'BREB'`,
      `update ledger.wallets set available_cents = available_cents - 1, version = version - 1 where company_id = ? and rail = 'BREB'`,
      [co],
    );
    expect(v).toEqual([`[2] wallet ${co}:BREB: available 9001 vs journal 9000, pending_out 1000 vs journal 1000, version 3 vs 2 postings`]);
  });

  it('an unbalanced posting (1)', async () => {
    const v = await damaged(
      `update ledger.entries set amount = amount + 5 where account = 'funding'`,
      `update ledger.entries set amount = amount - 5 where account = 'funding'`,
    );
    expect(v.filter((x) => x.startsWith('[1]'))).toHaveLength(2);
    expect(v.some((x) => x.startsWith('[5]'))).toBe(true); // the credit's movement no longer matches its entries
  });

  it('pending_out without its hold, and a closed hold under a live transfer (3)', async () => {
    const v = await damaged(`update ledger.holds set status = 'RELEASED' where id = ?::uuid`, `update ledger.holds set status = 'OPEN' where id = ?::uuid`, [
      holdId,
    ]);
    expect(v).toEqual(
      expect.arrayContaining([
        `[3] wallet ${co}:BREB: pending_out 1000 but open holds total 0`,
        `[3] hold ${holdId} is RELEASED but its transfer is PENDING`,
        `[3] transfer ${movementId} is PENDING without a matching hold`,
      ]),
    );
  });

  it('a negative available balance (4) and a movement whose amounts differ from its entries (5)', async () => {
    const v4 = await damaged(
      `update ledger.wallets set available_cents = -1 where company_id = ? and rail = 'ACH'`,
      `update ledger.wallets set available_cents = 0 where company_id = ? and rail = 'ACH'`,
      [co],
    );
    expect(v4).toContain(`[4] wallet ${co}:ACH available is -1`);
    const v5 = await damaged(`update ledger.movements set total_fee = 7 where id = ?::uuid`, `update ledger.movements set total_fee = 0 where id = ?::uuid`, [
      movementId,
    ]);
    expect(v5).toHaveLength(1);
    expect(v5[0]).toMatch(new RegExp(`^\\[5\\] movement ${movementId} \\(TRANSFER_OUT PENDING\\)`));
  });

  it('a move whose leg disagrees with its posting (5), a move missing a leg (7), a leg of no move (7)', async () => {
    const mover = h.newCompany();
    await h.api.open(mover);
    await h.api.credit(mover, { rail: Rail.ACH, amountCents: 5_000n });
    const m = await h.api.move(mover, { amountCents: 2_000n });
    try {
      const v5 = await damaged(
        `update ledger.movements set amount = 2001, net_amount = 2001 where id = ?::uuid`,
        `update ledger.movements set amount = 2000, net_amount = 2000 where id = ?::uuid`,
        [m.credit!.id],
      );
      expect(v5).toEqual([expect.stringMatching(new RegExp(`^\\[5\\] movement ${m.credit!.id} \\(TRANSFER_IN COMPLETED\\)`))]);
      const db = h.ledger.db;
      await db.query(`update ledger.movements set move_id = null where id = ?::uuid`, [m.credit!.id]);
      try {
        const r = await h.api.invariants();
        expect(r.violations).toContain(`[7] move ${m.moveId} (company ${mover}) has 1 legs of 1 types and 2 entries, 2 on its company's wallets`);
      } finally {
        await db.query(`update ledger.movements set move_id = ?::uuid where id = ?::uuid`, [m.moveId, m.credit!.id]);
      }
      const stray = randomUUID();
      await db.query(`update ledger.movements set move_id = ?::uuid where id = ?::uuid`, [stray, movementId]);
      try {
        const r = await h.api.invariants();
        expect(r.violations).toContain(`[7] movement ${movementId} is a leg of ${stray}, which is no move of its company`);
      } finally {
        await db.query(`update ledger.movements set move_id = null where id = ?::uuid`, [movementId]);
      }
    } finally {
      expect((await h.api.invariants()).violations).toEqual([]);
    }
  });
});
