import { jest } from '@jest/globals';
import type { AppError } from '@wallet/platform';
import { transferV1 } from '@wallet/proto';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import {
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectLedgerOk,
  failure,
  newCompany,
  send,
  setFaults,
  startHarness,
  waitForState,
  wallet,
  type Harness,
} from './harness.js';

/** The company's transfers the service accepted (a refusal before dispatch leaves a REJECTED row). */
const count = async (h: Harness, companyId: string) =>
  Number(
    (await h.ledger.db.query<{ n: string }>(`select count(*)::text as n from transfer.transfers where company_id = ? and state <> 'REJECTED'`, [companyId]))[0]!
      .n,
  );

describe('reference idempotency (§7.4, CONTRACT §2/§9)', () => {
  let h: Harness;
  // The default 60 s window: "inside the window" must not depend on how fast a loaded machine
  // completes a send (at 3 s a full run saw the window close before its replay). The test after the
  // window has a harness of its own with a short one.
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  it('the same request again inside the window returns the original in its current state (replayed)', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3007778899', 1_000n, { reference: 'idem-1', requestHash: 'hash-1' });
    const first = await send(h, co, req);
    const again = await send(h, co, req);
    expect(first.replayed).toBe(false);
    expect(again.replayed).toBe(true);
    const { status: _s1, completedAt: _c1, ...original } = first.transfer!;
    const { status: _s2, completedAt: _c2, ...replayed } = again.transfer!;
    expect(replayed).toEqual(original); // the same transfer (its status may have moved on meanwhile)
    await waitForState(h, first.transfer!.id, ['COMPLETED']);
    const later = await send(h, co, req);
    expect(later).toMatchObject({ replayed: true, transfer: { id: first.transfer!.id, status: 'MOVEMENT_STATUS_COMPLETED' } });
    expect(await count(h, co.id)).toBe(1);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 99_000n, pending: 0n });
  });

  it('a different body with the same reference is REFERENCE_CONFLICT; references are per company', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3007778800', 1_000n, { reference: 'idem-c', requestHash: 'hash-a' });
    const first = await send(h, co, req);
    expect((await failure(send(h, co, { ...req, amount: 1_001n, requestHash: 'hash-b' }))).code).toBe('REFERENCE_CONFLICT');
    const other = await newCompany(h, { breb: 100_000n });
    const theirs = await send(h, other, { ...req });
    expect(theirs.replayed).toBe(false);
    expect(theirs.transfer!.id).not.toBe(first.transfer!.id);
    // Without a gateway hash, the service's own hash still tells bodies apart.
    const own = await brebSend(h, co, '3007778800', 2_000n, { reference: 'idem-own', requestHash: '' });
    const o1 = await send(h, co, own);
    expect((await send(h, co, own)).transfer!.id).toBe(o1.transfer!.id);
    expect((await failure(send(h, co, { ...own, amount: 2_001n }))).code).toBe('REFERENCE_CONFLICT');
  });

  it('10 concurrent identical requests create exactly one transfer and all get its id', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3007778811', 2_000n, { reference: 'idem-2', requestHash: 'hash-2' });
    const results = await Promise.all(Array.from({ length: 10 }, () => send(h, co, req)));
    expect(new Set(results.map((r) => r.transfer!.id)).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(results.every((r) => r.transfer!.status === 'MOVEMENT_STATUS_PENDING' || r.transfer!.status === 'MOVEMENT_STATUS_COMPLETED')).toBe(true);
    expect(await count(h, co.id)).toBe(1);
    expect(await wallet(h, co.id, Rail.BREB)).toMatchObject({ available: 98_000n });
    await waitForState(h, results[0]!.transfer!.id, ['COMPLETED']);
  });

  it('concurrent different bodies under one reference (other destinations, other limit locks): one transfer, the rest REFERENCE_CONFLICT', async () => {
    // The claim is made by the statement that records the send (docs/benchmarks.md); statements of different
    // counterparties do not share the limits lock, so they meet only on the reference's unique key.
    const co = await newCompany(h, { breb: 100_000n });
    const reqs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => brebSend(h, co, `300777886${i}`, 1_000n + BigInt(i), { reference: 'idem-race', requestHash: `hash-race-${i}` })),
    );
    const outcomes = await Promise.allSettled(reqs.map((r) => send(h, co, r)));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as AppError).code).toBe('REFERENCE_CONFLICT');
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof send>>>).value;
    expect(winner.replayed).toBe(false);
    expect(await count(h, co.id)).toBe(1);
    // Held once: only the winner's amount left the available balance.
    expect(await wallet(h, co.id, Rail.BREB)).toMatchObject({ available: 100_000n - winner.transfer!.amount });
    await waitForState(h, winner.transfer!.id, ['COMPLETED']);
  });

  it('a request refused before dispatch (4xx or 5xx) does not hold its reference', async () => {
    const co = await newCompany(h, { breb: 10_000n, ach: 10_000n });
    const big = await brebSend(h, co, '3007778822', 50_000n, { reference: 'idem-3', requestHash: 'h-big' });
    expect((await failure(send(h, co, big))).code).toBe('INSUFFICIENT_BALANCE');
    const ok = await send(h, co, { ...big, amount: 5_000n, requestHash: 'h-small' });
    expect(ok.replayed).toBe(false);
    // 503 before anything was reserved: the same reference and body then go through.
    const ach = achSend(co, 1_000n, { reference: 'idem-4', requestHash: 'h-ach' });
    await setFaults(h, { achRail: 'down' });
    try {
      expect((await failure(send(h, co, ach))).code).toBe('ACH_RAIL_UNAVAILABLE');
    } finally {
      await setFaults(h, { achRail: 'up' });
    }
    const retried = await send(h, co, ach);
    expect(retried.replayed).toBe(false);
    // Schema problems never claim the reference either.
    const bad = transferV1.SendRequest.fromPartial({ ...ach, reference: 'idem-5', amount: 50n });
    expect((await failure(send(h, co, bad))).code).toBe('INVALID_REQUEST');
    expect((await send(h, co, { ...bad, amount: 500n })).replayed).toBe(false);
    await waitForState(h, ok.transfer!.id, ['COMPLETED']);
  });

  it('a first request claims its reference in the statement that records it (no statement of its own); a refused one leaves no claim', async () => {
    const claim = jest.spyOn(SqlTransferStore.prototype, 'claimReference');
    const read = jest.spyOn(SqlTransferStore.prototype, 'getReference');
    const release = jest.spyOn(SqlTransferStore.prototype, 'releaseReference');
    try {
      const co = await newCompany(h, { breb: 10_000n });
      const req = await brebSend(h, co, '3007778866', 1_000n, { reference: 'idem-f', requestHash: 'hash-f' });
      const first = await send(h, co, req);
      expect(first.replayed).toBe(false);
      expect([claim.mock.calls.length, read.mock.calls.length, release.mock.calls.length]).toEqual([0, 0, 0]);
      const [row] = await h.ledger.db.query<{ transfer_id: string; answered: boolean }>(
        "select transfer_id::text as transfer_id, answered_at is not null as answered from transfer.send_references where company_id = ? and reference = 'idem-f'",
        [co.id],
      );
      expect(row).toEqual({ transfer_id: first.transfer!.id, answered: true });
      // Refused by the balance (after it was recorded: REJECTED frees the reference) and by the
      // limits (before): neither holds the reference, and neither needed a claim of its own.
      expect((await failure(send(h, co, { ...req, reference: 'idem-g', amount: 50_000n, requestHash: 'hash-g' }))).code).toBe('INSUFFICIENT_BALANCE');
      expect(claim.mock.calls.length).toBe(0);
      const refs = await h.ledger.db.query("select 1 from transfer.send_references where company_id = ? and reference = 'idem-g'", [co.id]);
      expect(refs).toHaveLength(0);
      expect((await send(h, co, { ...req, reference: 'idem-g', amount: 2_000n, requestHash: 'hash-g2' })).replayed).toBe(false);
      await waitForState(h, first.transfer!.id, ['COMPLETED']);
    } finally {
      claim.mockRestore();
      read.mockRestore();
      release.mockRestore();
    }
  });

  it('a retry of an accepted send is replayed even where a fresh check would now refuse it (its own usage of the limit, the destination on the AML list)', async () => {
    const co = await newCompany(h, { breb: 100_000n, daily: 3_000n });
    const req = await brebSend(h, co, '3007778877', 3_000n, { reference: 'idem-l', requestHash: 'hash-l' });
    const first = await send(h, co, req);
    expect(first.replayed).toBe(false);
    // Another send to the same destination is over the daily limit now…
    expect((await failure(send(h, co, { ...req, reference: 'idem-l2', amount: 1_000n, requestHash: 'hash-l2' }))).code).toBe(
      'COUNTERPARTY_DAILY_LIMIT_EXCEEDED',
    );
    // …but the retry of the first is its replay, not a refusal; a different body is a conflict.
    expect(await send(h, co, req)).toMatchObject({ replayed: true, transfer: { id: first.transfer!.id } });
    expect((await failure(send(h, co, { ...req, amount: 2_999n, requestHash: 'hash-l3' }))).code).toBe('REFERENCE_CONFLICT');
    const entry = await h.client.addAmlEntry({ documentNumber: req.targetDocument!, reason: 'Lista restrictiva' }, ctxOf());
    try {
      expect(await send(h, co, req)).toMatchObject({ replayed: true, transfer: { id: first.transfer!.id } });
      expect((await failure(send(h, co, { ...req, reference: 'idem-l4', requestHash: 'hash-l4' }))).code).toBe('RECIPIENT_BLACKLISTED');
    } finally {
      await h.client.removeAmlEntry({ id: entry.id }, ctxOf());
    }
    expect(await count(h, co.id)).toBe(1);
    await waitForState(h, first.transfer!.id, ['COMPLETED']);
  });
});

describe('reference idempotency: after the window', () => {
  let h: Harness;
  // A short window so "after the window" runs in seconds.
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { IDEMPOTENCY_WINDOW_SECONDS: '3' } });
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  it('after the window the reference is free again: a new transfer', async () => {
    const co = await newCompany(h, { breb: 100_000n });
    const req = await brebSend(h, co, '3007778833', 1_000n, { reference: 'idem-w', requestHash: 'hash-w' });
    const first = await send(h, co, req);
    await new Promise((r) => setTimeout(r, 3_200));
    const second = await send(h, co, req);
    expect(second.replayed).toBe(false);
    expect(second.transfer!.id).not.toBe(first.transfer!.id);
    // A different body is no conflict after the window either.
    await new Promise((r) => setTimeout(r, 3_200));
    expect((await send(h, co, { ...req, amount: 1_500n, requestHash: 'hash-w2' })).replayed).toBe(false);
    expect(await count(h, co.id)).toBe(3);
  });
});
