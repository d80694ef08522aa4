import {
  Rail,
  achSend,
  brebSend,
  expectEvents,
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

describe('concurrency', () => {
  let h: Harness;
  beforeAll(async () => {
    // The race under test is the ledger's conditional debit. The 30 sends' account validations at the
    // rail are concurrent too: on a loaded 2-core machine (the e2e workspace runs beside) one can take
    // longer than the default 2 s provider timeout and answer ACH_RAIL_UNAVAILABLE before any reserve,
    // so this file gives the rail the time a slow machine needs. The same for the 30 Reserves on the
    // test's one-process ledger (a pool of 6): in a full run, with the e2e lane beside, 4 of them once
    // passed the 5 s default and answered SERVICE_UNAVAILABLE (outcome unknown) instead of the refusal.
    // And the sweeper's grace: the harness's 1 s gives up a transfer still RECEIVED after it (by design: its reserve
    // voided, the send told SERVICE_UNAVAILABLE, no money moved). In a full run 3 of the 30 reserves once took longer,
    // so 8 were accepted and 3 given up; holding the wallet's row lock for 1.5 s in the race reproduced exactly that
    // (2 SERVICE_UNAVAILABLE, their amounts back in available). This file's race is the conditional debit, not the
    // sweeper (that race has its own interleaving tests), so the grace is out of its way.
    h = await startHarness({ transferEnv: { PROVIDER_HTTP_TIMEOUT_MS: '15000', LEDGER_DEADLINE_MS: '20000', SWEEPER_GRACE_SECONDS: '60' } });
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  it('30 parallel sends (distinct references) against a balance covering exactly 11: exactly 11 accepted', async () => {
    // 10,000 + fee 100 + IVA 19 = 10,119 each.
    const co = await newCompany(h, { ach: 11n * 10_119n, iva: true, achFee: [100n, 0] });
    // Outcome callbacks held back, so the held funds can be checked however long the race takes.
    await setFaults(h, { callbacks: 'down' });
    let results: Array<PromiseSettledResult<Awaited<ReturnType<typeof send>>>>;
    try {
      results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => send(h, co, achSend(co, 10_000n, { reference: `race-${i}` }))));
      // The answers and the wallet side by side: a mismatch shows what each send was told.
      const answers = results
        .map((r) =>
          r.status === 'fulfilled' ? `accepted${r.value.transfer?.status === 'MOVEMENT_STATUS_FAILED' ? ' FAILED' : ''}` : (r.reason as { code: string }).code,
        )
        .sort();
      expect({ wallet: await wallet(h, co.id, Rail.ACH), answers }).toEqual({
        wallet: { available: 0n, pending: 11n * 10_119n },
        answers: [...Array(11).fill('accepted'), ...Array(19).fill('INSUFFICIENT_BALANCE')].sort(),
      });
    } finally {
      await setFaults(h, { callbacks: 'up' });
    }
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(11);
    expect(refused.map((r) => (r.reason as { code: string }).code)).toEqual(Array(19).fill('INSUFFICIENT_BALANCE'));
    const ids = ok.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof send>>>).value.transfer!.id);
    expect(new Set(ids).size).toBe(11);
    for (const id of ids) await waitForState(h, id, ['COMPLETED']);
    expect(await wallet(h, co.id, Rail.ACH)).toEqual({ available: 0n, pending: 0n });
    // The 19 refused never became transfers users see, and emitted nothing.
    const states = await h.ledger.db.query<{ state: string; n: string }>(
      'select state, count(*)::text as n from transfer.transfers where company_id = ? group by state order by state',
      [co.id],
    );
    expect(states).toEqual([
      { state: 'COMPLETED', n: '11' },
      { state: 'REJECTED', n: '19' },
    ]);
    for (const id of ids) await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
  });

  it('parallel sends on both rails of one company and to one counterparty keep balances and limits exact', async () => {
    const co = await newCompany(h, { breb: 50_000n, ach: 50_000n });
    co.profile.counterpartyDailyLimitCents = 25_000n;
    const breb = await brebSend(h, co, '3004440000', 5_000n);
    const results = await Promise.allSettled([
      ...Array.from({ length: 8 }, () => send(h, co, { ...breb, requestHash: `${Math.random()}` })),
      ...Array.from({ length: 8 }, () => send(h, co, achSend(co, 5_000n))),
    ]);
    const codes = results.map((r) => (r.status === 'fulfilled' ? 'OK' : (r.reason as { code: string }).code));
    // Each rail: 5 × 5,000 reach the counterparty's 25,000 exactly; the others exceed it.
    expect(codes.slice(0, 8).filter((c) => c === 'OK')).toHaveLength(5);
    expect(
      codes
        .slice(0, 8)
        .filter((c) => c !== 'OK')
        .every((c) => c === 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED'),
    ).toBe(true);
    expect(codes.slice(8).filter((c) => c === 'OK')).toHaveLength(5);
    expect(await wallet(h, co.id, Rail.BREB)).toMatchObject({ available: 25_000n });
    expect(await wallet(h, co.id, Rail.ACH)).toMatchObject({ available: 25_000n });
    expect((await failure(send(h, co, achSend(co, 100n)))).code).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    const ids = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof send>>>).value.transfer!.id);
    for (const id of ids) await waitForState(h, id, ['COMPLETED']);
  });
});
