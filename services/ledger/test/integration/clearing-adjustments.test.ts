import { randomUUID } from 'node:crypto';
import { meshClient } from '@wallet/platform/testing';
import { ledgerV1 } from '@wallet/proto';
import { Rail, expectLedgerConsistent, failure, sealJournal, startHarness, walletOf, type Harness } from './harness.js';

const ctx = (companyId?: string) => ({ requestId: randomUUID(), ...(companyId ? { companyId } : {}) });

/**
 * PostClearingAdjustment (docs/reconciliation.md): a reconciliation break accepted on the provider's side, through
 * the real gRPC server over mutual TLS as the `reconciliation` identity (the harness's policy client
 * calls each method as the first identity its access policy allows).
 */
describe('PostClearingAdjustment', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  const request = (r: Partial<ledgerV1.PostClearingAdjustmentRequest> = {}) =>
    ledgerV1.PostClearingAdjustmentRequest.fromPartial({
      idempotencyKey: `recon:breb:2026-11-20:amount_mismatch:${randomUUID()}:accept_provider`,
      clearing: 'breb',
      deltaCents: 1_500n,
      reason: 'exc_1 breb:2026-11-20:amount_mismatch:x: the provider settled 15.00 more',
      movement: `breb:brb_${randomUUID()}`,
      caseId: 'exc_1',
      ...r,
    });
  const post = (r: Partial<ledgerV1.PostClearingAdjustmentRequest> = {}, companyId?: string) => h.client.postClearingAdjustment(request(r), ctx(companyId));
  const balanceOf = async (account: string) =>
    BigInt((await h.ledger.db.query<{ s: string }>('select coalesce(sum(amount), 0)::text as s from ledger.entries where account = ?', [account]))[0]!.s);
  const postingOf = async (id: string) =>
    (
      await h.ledger.db.query<{ kind: string; company_id: string; rail: string; movement_id: string | null; hold_id: string | null; reason: string | null }>(
        'select kind, company_id, rail, movement_id, hold_id, reason from ledger.postings where id = ?::uuid',
        [id],
      )
    )[0];
  const entriesOf = async (id: string) =>
    (
      await h.ledger.db.query<{ account: string; amount: string }>(
        'select account, amount::text as amount from ledger.entries where posting_id = ?::uuid order by seq',
        [id],
      )
    ).map((e) => [e.account, BigInt(e.amount)]);

  it.each([
    ['breb', 'rail_clearing:BREB', 'BREB', 1_500n],
    ['ach', 'rail_clearing:ACH', 'ACH', -250_000n],
    ['pse', 'pse_settlement', 'ACH', 99n],
    ['breb-inbound', 'breb_settlement', 'BREB', -1n],
  ] as const)(
    '%s: %s moves by delta against its reconciliation_differences (filed under %s, delta %s); no wallet, no movement',
    async (clearing, account, rail, delta) => {
      const co = h.newCompany();
      await h.api.open(co);
      await h.api.credit(co, { rail: Rail.BREB, amountCents: 5_000n });
      const before = { clearing: await balanceOf(account), diff: await balanceOf(`reconciliation_differences:${account}`) };
      const r = await post({ clearing, deltaCents: delta, reason: `break of ${clearing}: accepted` });
      expect(r.replayed).toBe(false);
      expect(r.movement).toBeUndefined();
      expect(await balanceOf(account)).toBe(before.clearing + delta);
      expect(await balanceOf(`reconciliation_differences:${account}`)).toBe(before.diff - delta);
      expect(await entriesOf(r.postingId)).toEqual([
        [account, delta],
        [`reconciliation_differences:${account}`, -delta],
      ]);
      expect(await postingOf(r.postingId)).toEqual({
        kind: 'recon_adjustment',
        company_id: '',
        rail,
        movement_id: null,
        hold_id: null,
        reason: `break of ${clearing}: accepted`,
      });
      // No company wallet moved.
      expect(walletOf((await h.api.balances(co)).wallets, Rail.BREB)).toMatchObject({ availableCents: 5_000n, pendingOutCents: 0n, version: 1n });
    },
  );

  it('a replay answers the first posting and books nothing more; another body under the key is REFERENCE_CONFLICT', async () => {
    const key = `recon:ach:2026-11-21:duplicate:${randomUUID()}:accept_provider`;
    const before = await balanceOf('rail_clearing:ACH');
    const first = await post({ idempotencyKey: key, clearing: 'ach', deltaCents: 7_000n });
    const again = await post({ idempotencyKey: key, clearing: 'ach', deltaCents: 7_000n });
    expect(again).toEqual({ ...first, replayed: true });
    // Concurrent replays: still one posting.
    const many = await Promise.all(Array.from({ length: 5 }, () => post({ idempotencyKey: key, clearing: 'ach', deltaCents: 7_000n })));
    expect(new Set(many.map((m) => m.postingId))).toEqual(new Set([first.postingId]));
    expect(await balanceOf('rail_clearing:ACH')).toBe(before + 7_000n);
    for (const other of [{ deltaCents: -7_000n }, { deltaCents: 7_001n }, { clearing: 'breb' }, { reason: 'another note' }]) {
      expect((await failure(post({ idempotencyKey: key, clearing: 'ach', deltaCents: 7_000n, ...other }))).code).toBe('REFERENCE_CONFLICT');
    }
    expect(await balanceOf('rail_clearing:ACH')).toBe(before + 7_000n);
    expect(Number((await h.ledger.db.query<{ n: string }>('select count(*)::text as n from ledger.postings where idempotency_key = ?', [key]))[0]!.n)).toBe(1);
  });

  it('concurrent first calls under one key book once', async () => {
    const key = `recon:pse:2026-11-22:missing_in_our_books:${randomUUID()}:accept_provider`;
    const before = await balanceOf('pse_settlement');
    const rs = await Promise.all(Array.from({ length: 6 }, () => post({ idempotencyKey: key, clearing: 'pse', deltaCents: -42_000n })));
    expect(new Set(rs.map((r) => r.postingId)).size).toBe(1);
    expect(rs.filter((r) => !r.replayed)).toHaveLength(1);
    expect(await balanceOf('pse_settlement')).toBe(before - 42_000n);
  });

  it('the key of another kind of posting is REFERENCE_CONFLICT', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const key = `credit-${randomUUID()}`;
    await h.api.credit(co, { idempotencyKey: key, rail: Rail.BREB, amountCents: 100n });
    expect((await failure(post({ idempotencyKey: key }))).code).toBe('REFERENCE_CONFLICT');
  });

  it('refuses bad input, booking nothing', async () => {
    const before = await h.ledger.db.query<{ n: string }>('select count(*)::text as n from ledger.postings');
    const bad = async (r: Partial<ledgerV1.PostClearingAdjustmentRequest>, path: string) => {
      const e = await failure(post(r));
      expect(e.code).toBe('INVALID_REQUEST');
      expect(JSON.stringify(e.details)).toContain(path);
    };
    await bad({ deltaCents: 0n }, 'deltaCents');
    await bad({ deltaCents: 1_000_000_000_001n }, 'deltaCents');
    await bad({ deltaCents: -1_000_000_000_001n }, 'deltaCents');
    await bad({ clearing: '' }, 'clearing');
    await bad({ clearing: 'BREB' }, 'clearing');
    await bad({ clearing: 'rail_clearing:BREB' }, 'clearing');
    await bad({ reason: '' }, 'reason');
    await bad({ reason: '   ' }, 'reason');
    await bad({ reason: 'x'.repeat(1001) }, 'reason');
    await bad({ idempotencyKey: '' }, 'idempotencyKey');
    await bad({ idempotencyKey: 'k'.repeat(201) }, 'idempotencyKey');
    // The bounds themselves are accepted.
    expect((await post({ deltaCents: 1_000_000_000_000n, reason: 'y'.repeat(1000) })).replayed).toBe(false);
    expect((await post({ deltaCents: -1_000_000_000_000n })).replayed).toBe(false);
    const after = await h.ledger.db.query<{ n: string }>('select count(*)::text as n from ledger.postings');
    expect(Number(after[0]!.n)).toBe(Number(before[0]!.n) + 2);
  });

  it("a company on the call is not used: the posting is the platform's", async () => {
    const co = h.newCompany();
    const r = await post({ clearing: 'breb-inbound', deltaCents: 3n }, co);
    expect((await postingOf(r.postingId))?.company_id).toBe('');
  });

  it.each(['gateway', 'transfer', 'pse-deposit', 'ops'] as const)('refuses the %s identity (only reconciliation may call it)', async (as) => {
    const c = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, h.ledger.address, as, 'ledger', 10_000);
    try {
      const before = await balanceOf('rail_clearing:BREB');
      const e = await failure(c.postClearingAdjustment(request(), ctx(h.newCompany())));
      expect(e.code).toBe('CALLER_NOT_ALLOWED');
      expect(await balanceOf('rail_clearing:BREB')).toBe(before);
    } finally {
      c.close();
    }
  });

  it('publishes ledger.correction_posted with kind recon_adjustment and no company', async () => {
    const r = await post({ clearing: 'ach', deltaCents: -77n });
    const rows = await h.ledger.db.query<{ subject: string; payload: Record<string, unknown> }>(
      `select subject, payload from ledger.outbox where payload->>'postingId' = ?`,
      [r.postingId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.subject).toBe('ledger.correction_posted');
    expect(rows[0]!.payload).toMatchObject({ kind: 'recon_adjustment', postingId: r.postingId, rail: 'RAIL_ACH' });
    expect(rows[0]!.payload.companyId ?? '').toBe('');
    expect(rows[0]!.payload.entries).toEqual([
      { account: 'rail_clearing:ACH', amount: '-77' },
      { account: 'reconciliation_differences:rail_clearing:ACH', amount: '77' },
    ]);
  });

  it('CheckInvariants: an adjustment is a clearing account against its own reconciliation_differences, of no company (1)', async () => {
    const r = await post({ clearing: 'breb', deltaCents: 500n });
    const damaged = async (breakSql: string, repairSql: string) => {
      await sealJournal(h);
      await h.ledger.db.query(breakSql, [r.postingId]);
      try {
        const report = await h.api.invariants();
        expect(report.ok).toBe(false);
        return report.violations;
      } finally {
        await h.ledger.db.query(repairSql, [r.postingId]);
      }
    };
    const line = (company: string) =>
      `[1] posting ${r.postingId} (recon_adjustment, company '${company}', 2 entries) is not a clearing account against its reconciliation_differences`;
    // The other side booked against another clearing's differences.
    expect(
      await damaged(
        `update ledger.entries set account = 'reconciliation_differences:rail_clearing:ACH' where posting_id = ?::uuid and account = 'reconciliation_differences:rail_clearing:BREB'`,
        `update ledger.entries set account = 'reconciliation_differences:rail_clearing:BREB' where posting_id = ?::uuid and account = 'reconciliation_differences:rail_clearing:ACH'`,
      ),
    ).toEqual([line('')]);
    // Filed under a company.
    expect(
      await damaged(`update ledger.postings set company_id = 'co-1' where id = ?::uuid`, `update ledger.postings set company_id = '' where id = ?::uuid`),
    ).toEqual([line('co-1')]);
    // Another kind of posting touching reconciliation_differences.
    const v = await damaged(
      `update ledger.postings set kind = 'correction' where id = ?::uuid`,
      `update ledger.postings set kind = 'recon_adjustment' where id = ?::uuid`,
    );
    expect(v).toEqual([`[1] posting ${r.postingId} (correction, company '', 2 entries) is not a clearing account against its reconciliation_differences`]);
  });
});
