import { createHmac, randomUUID } from 'node:crypto';
import { instantToDate } from '@wallet/platform';
import {
  MovementStatus,
  Rail,
  brebSend,
  ctxOf,
  expectEvents,
  expectLedgerOk,
  failure,
  newCompany,
  send,
  setFaults,
  startHarness,
  stateOf,
  testProtection,
  transferRow,
  wallet,
  type Harness,
} from './harness.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';

const SECRET = 'dev-rail-callback-secret';

/**
 * A page of the rail's outcomes in one callback (`type: "rail.outcomes"`, docs/sandbox.md "Bulk
 * outcomes"): the COMPLETED ones of DISPATCHED transfers move together (one statement to COMPLETING,
 * one ledger CommitBatch per company, one statement to COMPLETED), the rest as single callbacks.
 */
describe('bulk outcome callbacks', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    // The sandbox keeps its own callbacks: the test is the rail.
    await setFaults(h, { callbacks: 'down' });
  });
  afterAll(async () => {
    await setFaults(h, { callbacks: 'up' }).catch(() => undefined);
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  const signed = (body: unknown, rail = Rail.BREB) => {
    const raw = Buffer.from(JSON.stringify(body));
    const now = Math.floor(Date.now() / 1000);
    const mac = createHmac('sha256', SECRET).update(`${now}.`).update(raw).digest('hex');
    return h.client.handleRailCallback({ rail, rawBody: raw, signature: `t=${now},v1=${mac}` }, ctxOf());
  };
  const outcome = (transactionId: string, status: 'COMPLETED' | 'FAILED', eventId = `ev-${randomUUID()}`, rail = 'BREB') => ({
    eventId,
    transactionId,
    providerTransferId: `prov-${transactionId.slice(0, 8)}`,
    rail,
    status,
    ...(status === 'FAILED' ? { errorMessage: 'Cuenta destino bloqueada' } : {}),
    occurredAt: new Date().toISOString(),
  });
  const page = (outcomes: unknown[]) => ({ type: 'rail.outcomes', outcomes });
  const dispatched = async (co: Awaited<ReturnType<typeof newCompany>>, n: number, keyBase: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await send(h, co, await brebSend(h, co, `300${keyBase + i}`, BigInt(10_000 + i * 100)));
      ids.push(r.transfer!.id);
    }
    for (const id of ids) expect(await stateOf(h, id)).toBe('DISPATCHED');
    return ids;
  };

  it('completes a page of two companies in bulk, fails its FAILED one, ignores an unknown one; the page again is a duplicate', async () => {
    const a = await newCompany(h, { breb: 1_000_000n });
    const b = await newCompany(h, { breb: 1_000_000n });
    const [a1, a2, a3, aFail] = await dispatched(a, 4, 1110000);
    const [b1, b2] = await dispatched(b, 2, 2220000);
    const before = { a: await wallet(h, a.id, Rail.BREB), b: await wallet(h, b.id, Rail.BREB) };
    expect(before.a.pending).toBeGreaterThan(0n);
    const outcomes = [
      outcome(a1!, 'COMPLETED'),
      outcome(b1!, 'COMPLETED'),
      outcome(a2!, 'COMPLETED'),
      outcome(aFail!, 'FAILED'),
      outcome(randomUUID(), 'COMPLETED'),
      outcome(b2!, 'COMPLETED'),
      outcome(a3!, 'COMPLETED'),
    ];
    expect(await signed(page(outcomes))).toEqual({ accepted: true, duplicate: false });

    for (const id of [a1!, a2!, a3!, b1!, b2!]) {
      expect(await transferRow(h, id)).toMatchObject({ state: 'COMPLETED', provider_transfer_id: `prov-${id.slice(0, 8)}`, next_attempt_at: null });
      const history = await h.ledger.db.query<{ state: string }>('select state from transfer.state_history where transfer_id = ? order by seq', [id]);
      expect(history.map((r) => r.state)).toEqual(['RECEIVED', 'RESERVED', 'DISPATCHED', 'COMPLETING', 'COMPLETED']);
      const co = [a1, a2, a3].includes(id) ? a : b;
      const m = await h.ledgerClient.getMovement({ id }, ctxOf(co.id));
      expect(m.status).toBe(MovementStatus.COMPLETED);
      // The transfer keeps the ledger's completion instant (to the millisecond).
      expect(new Date((await transferRow(h, id))!.completed_at as string).getTime()).toBe(instantToDate(m.completedAt!).getTime());
      await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
    }
    // In bulk: each company's commits in one ledger transaction, and its moves to COMPLETED in one statement.
    const txOf = async (sql: string, ids: string[]) => new Set((await h.ledger.db.query<{ x: string }>(sql, [ids])).map((r) => r.x));
    const commitTx = (ids: string[]) =>
      txOf(
        'select xmin::text as x from ledger.postings where idempotency_key = any(array[?]::text[])',
        ids.map((id) => `transfer:${id}:commit`),
      );
    expect((await commitTx([a1!, a2!, a3!])).size).toBe(1);
    expect((await commitTx([b1!, b2!])).size).toBe(1);
    expect(await commitTx([a1!, b1!])).toHaveProperty('size', 2);
    const completedTx = (ids: string[]) =>
      txOf("select xmin::text as x from transfer.state_history where state = 'COMPLETED' and transfer_id = any(array[?]::uuid[])", ids);
    expect((await completedTx([a1!, a2!, a3!])).size).toBe(1);
    expect((await completedTx([b1!, b2!])).size).toBe(1);
    expect(await transferRow(h, aFail!)).toMatchObject({ state: 'FAILED', error_message: 'Cuenta destino bloqueada' });
    await expectEvents(h, aFail!, ['transfer.created', 'transfer.dispatched', 'transfer.failed']);
    // Every outcome recorded as handled; nothing held any more.
    const seen = await h.ledger.db.query<{ event_id: string }>('select event_id from transfer.rail_callbacks where event_id = any(array[?]::text[])', [
      outcomes.map((o) => o.eventId),
    ]);
    expect(seen).toHaveLength(6);
    expect((await wallet(h, a.id, Rail.BREB)).pending).toBe(0n);
    expect((await wallet(h, b.id, Rail.BREB)).pending).toBe(0n);
    const after = { a: await wallet(h, a.id, Rail.BREB), b: await wallet(h, b.id, Rail.BREB) };

    // The provider sends the page again: every outcome a repeat, nothing moves.
    expect(await signed(page(outcomes))).toEqual({ accepted: true, duplicate: true });
    expect({ a: await wallet(h, a.id, Rail.BREB), b: await wallet(h, b.id, Rail.BREB) }).toEqual(after);
    await expectEvents(h, a1!, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
  });

  it('takes what the bulk move cannot through the single path: a callback seen before, a transfer twice, a later FAILED that contradicts', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const [seenBefore, twice, done] = await dispatched(co, 3, 3330000);
    const store = new SqlTransferStore(h.ledger.db, testProtection);
    const seenEvent = `seen-${seenBefore}`;
    await store.recordCallback(seenEvent, seenBefore!, 'BREB', 'COMPLETED');
    expect(await signed(page([outcome(done!, 'COMPLETED')]))).toEqual({ accepted: true, duplicate: false });
    expect(await stateOf(h, done!)).toBe('COMPLETED');

    const res = await signed(
      page([
        outcome(seenBefore!, 'COMPLETED', seenEvent),
        outcome(twice!, 'COMPLETED'),
        outcome(twice!, 'COMPLETED'),
        // The rail now says it failed a transfer it had paid: a money exception, not a silent repeat.
        outcome(done!, 'FAILED'),
      ]),
    );
    expect(res).toEqual({ accepted: true, duplicate: false });
    expect(await stateOf(h, seenBefore!)).toBe('DISPATCHED'); // a handled callback is never applied later
    expect(await stateOf(h, twice!)).toBe('COMPLETED');
    expect(await stateOf(h, done!)).toBe('COMPLETED');
    const exceptions = await h.ledger.db.query<{ kind: string }>("select kind from transfer.money_exceptions where resource_id = ? and status = 'OPEN'", [
      done!,
    ]);
    expect(exceptions.map((e) => e.kind)).toEqual(['RAIL_FAILED_AFTER_COMPLETION']);
    // The transfer seen twice in the page was committed once.
    const commits = await h.ledger.db.query<{ n: string }>('select count(*)::text as n from ledger.postings where idempotency_key = ?', [
      `transfer:${twice}:commit`,
    ]);
    expect(commits[0]!.n).toBe('1');
    // The one left DISPATCHED completes with a new outcome, alone.
    expect(await signed(outcome(seenBefore!, 'COMPLETED'))).toEqual({ accepted: true, duplicate: false });
    expect(await stateOf(h, seenBefore!)).toBe('COMPLETED');
  });

  it('refuses a malformed page as a whole: nothing applied', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const [id] = await dispatched(co, 1, 4440000);
    for (const [body, path] of [
      [page([]), 'outcomes'],
      [{ type: 'rail.outcomes' }, 'outcomes'],
      [page(Array.from({ length: 1001 }, () => outcome(id!, 'COMPLETED'))), 'outcomes'],
      [page([outcome(id!, 'COMPLETED'), { eventId: 'x', transactionId: id, rail: 'BREB' }]), 'outcomes.1.status'],
      [page([outcome(id!, 'COMPLETED'), 'nope']), 'outcomes.1'],
      [page([outcome(id!, 'COMPLETED'), outcome(id!, 'COMPLETED', undefined, 'ACH')]), 'outcomes.1.rail'],
    ] as const) {
      const err = await failure(signed(body));
      expect(err.code).toBe('INVALID_REQUEST');
      expect((err.details!.fields as Array<{ path: string }>).map((f) => f.path)).toContain(path);
    }
    // Signed for another rail than the one it came on.
    expect((await failure(signed(page([outcome(id!, 'COMPLETED')]), Rail.ACH))).code).toBe('INVALID_REQUEST');
    // A bad signature is refused before anything is read.
    const raw = Buffer.from(JSON.stringify(page([outcome(id!, 'COMPLETED')])));
    expect((await failure(h.client.handleRailCallback({ rail: Rail.BREB, rawBody: raw, signature: `t=1,v1=${'0'.repeat(64)}` }, ctxOf()))).code).toBe(
      'INVALID_SIGNATURE',
    );
    expect(await stateOf(h, id!)).toBe('DISPATCHED');
    expect(await signed(page([outcome(id!, 'COMPLETED')]))).toEqual({ accepted: true, duplicate: false });
  });
});
