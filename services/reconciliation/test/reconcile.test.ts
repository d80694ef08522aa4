import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inSpan } from '@wallet/platform';
import { recordSpans, type RecordedSpans } from '@wallet/platform/testing';
import { SpillSorter } from '../src/adapters/spill-sorter.js';
import { OurRecordError, type Break, type OurRecord } from '../src/domain/matching.js';
import { REPORT_COLUMNS, type ReportRail } from '../src/domain/report.js';
import { ArrayOurRecords, InMemoryBreakSink } from '../src/testing.js';
import type { BreakSink, OurRecords } from '../src/app/ports.js';
import { reconcile, type ReconcileResult } from '../src/app/reconcile.js';

const D = '2025-03-14';
const NEXT = '2025-03-15';
const PREV = '2025-03-13';
/** A Bogotá wall-clock time as an ISO instant. */
const bog = (date: string, time: string) => new Date(`${date}T${time}-05:00`).toISOString();

type Fields = [providerId: string, ourId: string, direction: string, amount: string | number, status: string, valueDate?: string, fee?: string | number];
const row = ([providerId, ourId, direction, amount, status, valueDate = D, fee = 0]: Fields, at = bog(D, '10:00:00')): string[] => [
  providerId,
  ourId,
  direction,
  String(amount),
  String(fee),
  status,
  valueDate,
  at,
  at,
  'ALGUIEN',
];

/** A report as the provider writes it: header, lines, trailer (computed unless given). */
function report(lines: Fields[], trailer?: Partial<{ lines: number; amount: bigint; fee: bigint }>): string[][] {
  const rows = lines.map((l) => row(l));
  const sum = (i: number) => rows.reduce((s, r) => s + BigInt(r[i]!), 0n);
  const t = ['TRAILER', String(trailer?.lines ?? rows.length), String(trailer?.amount ?? sum(3)), String(trailer?.fee ?? sum(4))];
  return [[...REPORT_COLUMNS], ...rows, t];
}

async function* batches(records: string[][], size = 3): AsyncGenerator<string[][]> {
  for (let i = 0; i < records.length; i += size) yield records.slice(i, i + size);
}

const transfer = (
  ourId: string,
  providerId: string,
  amountCents: bigint,
  status: OurRecord['status'] = 'COMPLETED',
  settledAt = bog(D, '10:00:00'),
): OurRecord => ({ ourId, providerId, status, amountCents, settledAt });

describe('reconcile (one provider report against our books)', () => {
  let dir: string;
  let sink: InMemoryBreakSink;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'recon-spec-'));
    sink = new InMemoryBreakSink();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (
    rail: ReportRail,
    records: string[][],
    ours: OurRecords,
    opts: { date?: string; lookupBatch?: number; sinkBatch?: number; sink?: BreakSink } = {},
  ) =>
    reconcile(rail, opts.date ?? D, batches(records), {
      ours,
      sink: opts.sink ?? sink,
      sorter: () => new SpillSorter({ dir, runLines: 2, batchLines: 2 }),
      ...(opts.lookupBatch ? { lookupBatch: opts.lookupBatch } : {}),
      ...(opts.sinkBatch ? { sinkBatch: opts.sinkBatch } : {}),
    });
  const reconciled = (r: ReconcileResult) => {
    if (r.outcome !== 'RECONCILED') throw new Error(`rejected: ${r.detail}`);
    return r;
  };

  const books = new ArrayOurRecords({
    breb: [
      transfer('tx-1', 'brb_1', 150_000n),
      transfer('tx-2', 'brb_2', 250_013n, 'FAILED'),
      transfer('tx-3', 'brb_3', 10_000n),
      transfer('tx-4', 'brb_4', 20_000n),
      transfer('tx-5', 'brb_5', 30_000n),
      transfer('tx-6', 'brb_6', 40_000n),
      transfer('tx-7', 'brb_7', 50_000n, 'COMPLETED', bog(D, '23:59:59.999')),
      transfer('tx-0', 'brb_0', 90_000n, 'COMPLETED', bog(PREV, '23:59:59.999')), // yesterday's
    ],
  });
  const cleanBreb: Fields[] = [
    ['brb_3', 'tx-3', 'OUT', 10_000, 'COMPLETED'],
    ['brb_1', 'tx-1', 'OUT', 150_000, 'COMPLETED'],
    ['brb_2', 'tx-2', 'OUT', 250_013, 'FAILED'],
    ['brb_6', 'tx-6', 'OUT', 40_000, 'COMPLETED'],
    ['brb_4', 'tx-4', 'OUT', 20_000, 'COMPLETED'],
    ['brb_5', 'tx-5', 'OUT', 30_000, 'COMPLETED'],
    ['brb_7', 'tx-7', 'OUT', 50_000, 'COMPLETED'],
  ];

  it('a clean report: every line matched, nothing opened, totals of both sides', async () => {
    const r = reconciled(await run('breb', report(cleanBreb), books));
    expect(r).toEqual({
      outcome: 'RECONCILED',
      rail: 'breb',
      date: D,
      // The FAILED lines move nothing: both sides' effect on the clearing account is the COMPLETED ones'.
      report: { lines: 7, amountCents: 550_013n, feeCents: 0n, netCents: 300_000n },
      ours: { count: 7, amountCents: 550_013n, netCents: 300_000n },
      matched: { count: 7, amountCents: 550_013n },
      breaks: {
        total: 0,
        opened: 0,
        byKind: { missing_at_provider: 0, missing_in_our_books: 0, amount_mismatch: 0, status_mismatch: 0, duplicate: 0, value_date_mismatch: 0 },
      },
    });
    expect(sink.calls).toBe(0);
  });

  it('every kind of break in one report, each found exactly once, nothing else', async () => {
    const lines: Fields[] = [
      ['brb_0', 'tx-0', 'OUT', 90_000, 'COMPLETED'], // yesterday's transfer, settled today by the provider: value date
      ['brb_3', 'tx-3', 'OUT', 10_000, 'COMPLETED'],
      ['brb_1', 'tx-1', 'OUT', 150_100, 'COMPLETED', D, 250], // amount (and fee)
      ['brb_2', 'tx-2', 'OUT', 250_013, 'COMPLETED'], // status
      ['brb_6', 'tx-6', 'OUT', 40_000, 'COMPLETED'],
      ['brb_6', 'tx-6', 'OUT', 40_000, 'COMPLETED'], // duplicate
      ['brb_x', '', 'OUT', 77_700, 'COMPLETED'], // never ours, no id of ours
      ['brb_y', 'tx-99', 'OUT', 1_000, 'COMPLETED'], // an id of ours we never used
      ['brb_5', 'tx-5', 'OUT', 30_000, 'COMPLETED', NEXT], // value date
      ['brb_7', 'tx-7', 'OUT', 50_000, 'COMPLETED'],
      // tx-4 is missing
    ];
    const r = reconciled(await run('breb', report(lines), books));
    const k = (kind: string, ref: string) => `breb:${D}:${kind}:${ref}`;
    expect(sink.keys()).toEqual(
      [
        k('amount_mismatch', 'brb_1'),
        k('duplicate', 'brb_6'),
        k('missing_at_provider', 'tx-4'),
        k('missing_in_our_books', 'brb_x'),
        k('missing_in_our_books', 'brb_y'),
        k('status_mismatch', 'brb_2'),
        k('value_date_mismatch', 'brb_0'),
        k('value_date_mismatch', 'brb_5'),
      ].sort(),
    );
    expect(r.breaks).toEqual({
      total: 8,
      opened: 8,
      byKind: { missing_at_provider: 1, missing_in_our_books: 2, amount_mismatch: 1, status_mismatch: 1, duplicate: 1, value_date_mismatch: 2 },
    });
    expect(r.matched).toEqual({ count: 3, amountCents: 10_000n + 40_000n + 50_000n });
    expect(r.ours).toEqual({ count: 7, amountCents: 550_013n, netCents: 300_000n });
    const late = sink.byKey.get(k('value_date_mismatch', 'brb_0'))!;
    expect(late).toMatchObject({ ourId: 'tx-0', ours: { settledDate: PREV }, theirs: { valueDate: D, lineNo: 1 } });
    expect(sink.byKey.get(k('missing_at_provider', 'tx-4'))).toMatchObject({ ours: { amountCents: 20_000n } });
    expect(sink.byKey.get(k('missing_at_provider', 'tx-4'))!.theirs).toBeUndefined();
  });

  it('a re-run of the same report finds the same keys and opens nothing new', async () => {
    const lines: Fields[] = [...cleanBreb.slice(1), ['brb_x', '', 'OUT', 5, 'COMPLETED']];
    const first = reconciled(await run('breb', report(lines), books));
    const keys = sink.keys();
    const second = reconciled(await run('breb', report(lines), books));
    expect(sink.keys()).toEqual(keys);
    expect([first.breaks.opened, second.breaks.opened, second.breaks.total]).toEqual([2, 0, 2]);
  });

  it('PSE: a deposit paid and reversed the same day is two lines, matched leg by leg; a leg missing is named', async () => {
    const pse = new ArrayOurRecords({
      pse: [
        { ourId: 'dep_1', providerId: 'pse_1', status: 'ASSIGNED', amountCents: 210_000n, settledAt: bog(D, '13:00:00') },
        { ourId: 'dep_1', providerId: 'pse_1', status: 'REVERSED', amountCents: 210_000n, settledAt: bog(D, '15:00:00') },
        { ourId: 'dep_2', providerId: 'pse_2', status: 'FAILED', amountCents: 99_000n, settledAt: bog(D, '16:00:00') },
        { ourId: 'dep_3', providerId: 'pse_3', status: 'ASSIGNED', amountCents: 320_000n, settledAt: bog(D, '14:00:00') },
        { ourId: 'dep_3', providerId: 'pse_3', status: 'REVERSED', amountCents: 320_000n, settledAt: bog(NEXT, '09:00:00') },
      ],
    });
    const lines: Fields[] = [
      ['pse_1', 'dep_1', 'IN', 210_000, 'PAID'],
      ['pse_3', 'dep_3', 'IN', 320_000, 'PAID'],
      ['pse_1', 'dep_1', 'OUT', 210_000, 'REVERSED'],
      ['pse_2', 'dep_2', 'IN', 99_000, 'FAILED'],
    ];
    const clean = reconciled(await run('pse', report(lines), pse));
    expect([clean.matched.count, clean.breaks.total, clean.ours.count]).toEqual([4, 0, 4]);
    const noReversal = reconciled(await run('pse', report(lines.filter((l) => l[4] !== 'REVERSED')), pse));
    expect(sink.keys()).toEqual([`pse:${D}:missing_at_provider:dep_1:reversal`]);
    expect(noReversal.matched.count).toBe(3);
    // The next day: dep_3's reversal, and a status break on it.
    const next = reconciled(await run('pse', report([['pse_3', 'dep_3', 'OUT', 320_000, 'PAID', NEXT]]), pse, { date: NEXT }));
    expect(next.breaks.byKind.status_mismatch).toBe(1);
    expect(sink.byKey.get(`pse:${NEXT}:status_mismatch:pse_3:reversal`)).toMatchObject({ ours: { status: 'REVERSED' }, theirs: { status: 'PAID' } });
  });

  it("Bre-B inbound: keyed by the network's id (no id of ours in the report)", async () => {
    const inbound = new ArrayOurRecords({
      'breb-inbound': [
        { ourId: 'dep_a', providerId: 'brb_in_1', status: 'ASSIGNED', amountCents: 80_000n, settledAt: bog(D, '17:00:00') },
        { ourId: 'dep_b', providerId: 'brb_in_2', status: 'UNASSIGNED', amountCents: 65_000n, settledAt: bog(D, '23:59:59.999') },
      ],
    });
    const r = reconciled(
      await run(
        'breb-inbound',
        report([
          ['brb_in_2', '', 'IN', 65_000, 'RECEIVED'],
          ['brb_in_1', '', 'IN', 80_000, 'RECEIVED'],
          ['brb_in_1', '', 'IN', 80_000, 'RECEIVED'],
        ]),
        inbound,
      ),
    );
    expect(r.matched.count).toBe(2);
    expect(sink.keys()).toEqual([`breb-inbound:${D}:duplicate:brb_in_1`]);
    expect(sink.byKey.get(`breb-inbound:${D}:duplicate:brb_in_1`)).toMatchObject({ ourId: 'dep_a', copies: 1 });
  });

  it('a line for a transfer still PENDING in our books (its callback never came): a status break, found by the look-up', async () => {
    const waiting = new ArrayOurRecords({ ach: [{ ourId: 'tx-8', providerId: 'ach_8', status: 'PENDING', amountCents: 8_000n, settledAt: null }] });
    const r = reconciled(await run('ach', report([['ach_8', 'tx-8', 'OUT', 8_000, 'COMPLETED']]), waiting));
    expect(sink.keys()).toEqual([`ach:${D}:status_mismatch:ach_8`]);
    expect(sink.byKey.get(`ach:${D}:status_mismatch:ach_8`)).toMatchObject({ ours: { status: 'PENDING', settledDate: null }, theirs: { status: 'COMPLETED' } });
    expect(r.ours.count).toBe(0);
    const inStream: OurRecords = {
      async *settled() {
        yield [transfer('tx-8', 'ach_8', 8_000n, 'PENDING')];
      },
      async find() {
        return [];
      },
    };
    await expect(run('ach', report([]), inStream)).rejects.toThrow(/not settled \(PENDING\)/);
  });

  it('looks up the lines without a record of the day in batches, and hands breaks out in batches', async () => {
    const many = Array.from({ length: 9 }, (_, i): Fields => [`brb_u${i}`, `tx-u${i}`, 'OUT', 1_000 + i, 'COMPLETED']);
    const books2 = new ArrayOurRecords({ breb: [] });
    const batchedSink = {
      calls: [] as number[],
      open: async (b: readonly Break[]) => {
        batchedSink.calls.push(b.length);
        return { opened: b.length };
      },
    };
    const r = reconciled(await run('breb', report(many), books2, { lookupBatch: 4, sinkBatch: 2, sink: batchedSink }));
    expect(r.breaks.byKind.missing_in_our_books).toBe(9);
    expect(books2.findCalls.map((c) => c.length)).toEqual([4, 4, 1]);
    expect(batchedSink.calls).toEqual([2, 2, 2, 2, 1]);
  });

  it.each([
    ['a trailer with another line count', report(cleanBreb, { lines: 8 }), 'TRAILER_MISMATCH'],
    ['a trailer with another amount', report(cleanBreb, { amount: 1n }), 'TRAILER_MISMATCH'],
    ['a trailer with another fee', report(cleanBreb, { fee: 9n }), 'TRAILER_MISMATCH'],
    ['no trailer (cut at a record boundary)', report(cleanBreb).slice(0, -1), 'MISSING_TRAILER'],
    ['a record after the trailer', [...report(cleanBreb), row(cleanBreb[0]!)], 'CONTENT_AFTER_TRAILER'],
    ['another header', [['id', ...REPORT_COLUMNS.slice(1)], ...report(cleanBreb).slice(1)], 'BAD_HEADER'],
    ['nothing at all', [], 'EMPTY'],
    [
      'a malformed line',
      [
        ...report(cleanBreb).slice(0, 3),
        ['brb_z', 'tx-z', 'OUT', '12.50', '0', 'COMPLETED', D, bog(D, '10:00:00'), bog(D, '10:00:00'), ''],
        ...report(cleanBreb).slice(3),
      ],
      'MALFORMED_LINE',
    ],
  ])("rejects the report with %s: nothing matched, nothing opened, the sort's files deleted", async (_what, records, reason) => {
    const r = await run('breb', records, books);
    expect(r).toMatchObject({ outcome: 'REJECTED', rail: 'breb', date: D, reason });
    expect(sink.calls).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a trailer mismatch says which figures differ', async () => {
    const r = await run('breb', report(cleanBreb, { lines: 3 }), books);
    expect(r).toMatchObject({ outcome: 'REJECTED', reason: 'TRAILER_MISMATCH', detail: expect.stringContaining('lines 3 stated, 7 read') });
  });

  it("our records out of key order break the port's contract: an error, not false breaks", async () => {
    const unordered: OurRecords = {
      async *settled() {
        yield [transfer('tx-2', 'brb_2', 1n), transfer('tx-1', 'brb_1', 1n)];
      },
      async find() {
        return [];
      },
    };
    await expect(run('breb', report([['brb_1', 'tx-1', 'OUT', 1, 'COMPLETED']]), unordered)).rejects.toBeInstanceOf(OurRecordError);
    const twice: OurRecords = {
      async *settled() {
        yield [transfer('tx-1', 'brb_1', 1n)];
        yield [transfer('tx-1', 'brb_1', 1n)];
      },
      async find() {
        return [];
      },
    };
    await expect(run('breb', report([]), twice)).rejects.toThrow(/strictly ascending/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a failure of the report stream is thrown (to retry), not a rejection', async () => {
    async function* broken(): AsyncGenerator<string[][]> {
      yield report(cleanBreb).slice(0, 3);
      throw new Error('socket hang up');
    }
    await expect(reconcile('breb', D, broken(), { ours: books, sink, sorter: () => new SpillSorter({ dir, runLines: 2 }) })).rejects.toThrow('socket hang up');
    expect(sink.calls).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('breb-inbound: a payment and its return to the payer (two lines, two records, one provider id) match, among other payments', async () => {
    const inbound = (id: string, amount: bigint, status: OurRecord['status'], settledAt = bog(D, '10:00:00')): OurRecord => ({
      ourId: `dep_${id}`,
      providerId: `brb_in_${id}`,
      status,
      amountCents: amount,
      settledAt,
    });
    const ours = new ArrayOurRecords({
      'breb-inbound': [
        inbound('a', 10_000n, 'ASSIGNED'),
        inbound('b', 30_000n, 'UNASSIGNED'),
        inbound('b', 30_000n, 'RETURNED', bog(D, '11:00:00')),
        inbound('c', 5_000n, 'UNASSIGNED'),
      ],
    });
    const r = reconciled(
      await run(
        'breb-inbound',
        report([
          ['brb_in_c', '', 'IN', 5_000, 'RECEIVED'],
          ['brb_in_b', 'dep_b', 'OUT', 30_000, 'RETURNED'],
          ['brb_in_a', '', 'IN', 10_000, 'RECEIVED'],
          ['brb_in_b', '', 'IN', 30_000, 'RECEIVED'],
        ]),
        ours,
      ),
    );
    expect([...sink.byKey.keys()]).toEqual([]);
    expect(r.matched.count).toBe(4);
    expect(r.report.netCents).toBe(r.ours.netCents);
  });

  it('PSE: a payment and two partial refunds the same day (one REFUNDED line each, our_id the return id) match their records; a refund missing at the provider, or one it reports that we do not have, is a break about that refund only', async () => {
    const [R1, R2, R3, RX] = ['ret_b1', 'ret_a2', 'ret_c3', 'ret_x9'].map((r) => r.padEnd(28, '0'));
    const leg = (ourId: string, providerId: string, amount: bigint, status: OurRecord['status'], at: string): OurRecord => ({
      ourId,
      providerId,
      status,
      amountCents: amount,
      settledAt: at,
      direction: status === 'ASSIGNED' ? 'IN' : 'OUT',
    });
    const ours = new ArrayOurRecords(
      {
        pse: [
          leg('dep_p', 'pse_p', 100_000n, 'ASSIGNED', bog(D, '09:00:00')),
          leg(R1!, 'pse_p', 30_000n, 'REFUNDED', bog(D, '11:00:00')),
          leg(R2!, 'pse_p', 25_000n, 'REFUNDED', bog(D, '12:00:00')),
          leg('dep_q', 'pse_q', 7_000n, 'ASSIGNED', bog(D, '09:30:00')),
          leg(R3!, 'pse_q', 7_000n, 'REFUNDED', bog(D, '13:00:00')),
          // Refunded on an earlier day: the provider's line for it today is a value-date break, not one missing in our books.
          leg('dep_r', 'pse_r', 4_000n, 'ASSIGNED', bog(PREV, '09:00:00')),
          leg(RX!, 'pse_r', 1_000n, 'REFUNDED', bog(PREV, '10:00:00')),
        ],
      },
      2,
    );
    const clean: Fields[] = [
      ['pse_p', 'dep_p', 'IN', 100_000, 'PAID'],
      ['pse_p', R1!, 'OUT', 30_000, 'REFUNDED'],
      ['pse_p', R2!, 'OUT', 25_000, 'REFUNDED'],
      ['pse_q', 'dep_q', 'IN', 7_000, 'PAID'],
      ['pse_q', R3!, 'OUT', 7_000, 'REFUNDED'],
    ];
    const ok = reconciled(await run('pse', report(clean), ours, { lookupBatch: 1 }));
    expect([ok.matched.count, ok.breaks.total, ok.ours.count]).toEqual([5, 0, 5]);

    const r = reconciled(
      await run(
        'pse',
        report([
          ['pse_p', R2!, 'OUT', 25_000, 'REFUNDED'],
          ['pse_q', 'dep_q', 'IN', 7_000, 'PAID'],
          ['pse_p', 'dep_p', 'IN', 100_000, 'PAID'],
          ['pse_p', R1!, 'OUT', 30_000, 'REFUNDED'],
          // R3 (pse_q's refund) is not in the report; a refund of pse_p we never made is.
          ['pse_p', 'ret_unknown', 'OUT', 500, 'REFUNDED'],
          ['pse_r', RX!, 'OUT', 1_000, 'REFUNDED'],
        ]),
        ours,
        { lookupBatch: 1 },
      ),
    );
    expect(r.matched.count).toBe(4); // two payments, two refunds of pse_p
    expect(r.ours.count).toBe(5);
    expect(sink.keys()).toEqual(
      [
        `pse:${D}:missing_at_provider:pse_q:refund:${R3}`,
        `pse:${D}:missing_in_our_books:pse_p:refund:ret_unknown`,
        `pse:${D}:value_date_mismatch:pse_r:refund:${RX}`,
      ].sort(),
    );
    // A refund moves pse_settlement like a reversal: the provider's missing line is -amount, an unknown one +amount.
    expect(sink.byKey.get(`pse:${D}:missing_at_provider:pse_q:refund:${R3}`)).toMatchObject({
      ourId: R3,
      providerId: 'pse_q',
      ours: { status: 'REFUNDED', amountCents: 7_000n },
      differenceCents: -7_000n,
    });
    expect(sink.byKey.get(`pse:${D}:missing_in_our_books:pse_p:refund:ret_unknown`)).toMatchObject({
      ourId: 'ret_unknown',
      providerId: 'pse_p',
      differenceCents: 500n,
    });
    expect(sink.byKey.get(`pse:${D}:value_date_mismatch:pse_r:refund:${RX}`)).toMatchObject({ ourId: RX, differenceCents: 0n });
  });

  it('breb-inbound: two partial returns of one payment (one line each, our_id the return id) match their records; a return missing at the network, or one the network reports that we do not have, is a break about that return only', async () => {
    const [R1, R2, R3, RX] = ['ret_b1', 'ret_a2', 'ret_c3', 'ret_x9'].map((r) => r.padEnd(28, '0'));
    const leg = (ourId: string, providerId: string, amount: bigint, status: OurRecord['status'], at: string): OurRecord => ({
      ourId,
      providerId,
      status,
      amountCents: amount,
      settledAt: at,
      direction: status === 'RETURNED' ? 'OUT' : 'IN',
    });
    const ours = new ArrayOurRecords(
      {
        'breb-inbound': [
          leg('dep_p', 'brb_in_p', 10_000n, 'ASSIGNED', bog(D, '09:00:00')),
          leg(R1!, 'brb_in_p', 3_000n, 'RETURNED', bog(D, '11:00:00')),
          leg(R2!, 'brb_in_p', 2_500n, 'RETURNED', bog(D, '12:00:00')),
          leg('dep_q', 'brb_in_q', 7_000n, 'ASSIGNED', bog(D, '09:30:00')),
          leg(R3!, 'brb_in_q', 7_000n, 'RETURNED', bog(D, '13:00:00')),
          // Returned on an earlier day: the network's line for it today is a value-date break, not one missing in our books.
          leg('dep_r', 'brb_in_r', 4_000n, 'ASSIGNED', bog(PREV, '09:00:00')),
          leg(RX!, 'brb_in_r', 1_000n, 'RETURNED', bog(PREV, '10:00:00')),
        ],
      },
      2,
    );
    const r = reconciled(
      await run(
        'breb-inbound',
        report([
          ['brb_in_p', R2!, 'OUT', 2_500, 'RETURNED'],
          ['brb_in_q', '', 'IN', 7_000, 'RECEIVED'],
          ['brb_in_p', '', 'IN', 10_000, 'RECEIVED'],
          ['brb_in_p', R1!, 'OUT', 3_000, 'RETURNED'],
          // R3 (brb_in_q's return) is not in the report; a return of brb_in_p we never made is.
          ['brb_in_p', 'ret_unknown', 'OUT', 500, 'RETURNED'],
          ['brb_in_r', RX!, 'OUT', 1_000, 'RETURNED'],
        ]),
        ours,
        { lookupBatch: 1 },
      ),
    );
    expect(r.matched.count).toBe(4); // two payments, two returns of brb_in_p
    expect(r.ours.count).toBe(5);
    expect(sink.keys()).toEqual(
      [
        `breb-inbound:${D}:missing_at_provider:brb_in_q:return:${R3}`,
        `breb-inbound:${D}:missing_in_our_books:brb_in_p:return:ret_unknown`,
        `breb-inbound:${D}:value_date_mismatch:brb_in_r:return:${RX}`,
      ].sort(),
    );
    expect(sink.byKey.get(`breb-inbound:${D}:missing_at_provider:brb_in_q:return:${R3}`)).toMatchObject({
      ourId: R3,
      providerId: 'brb_in_q',
      ours: { status: 'RETURNED', amountCents: 7_000n },
      differenceCents: -7_000n,
    });
    expect(sink.byKey.get(`breb-inbound:${D}:missing_in_our_books:brb_in_p:return:ret_unknown`)).toMatchObject({
      ourId: 'ret_unknown',
      providerId: 'brb_in_p',
      differenceCents: 500n,
    });
    expect(sink.byKey.get(`breb-inbound:${D}:value_date_mismatch:brb_in_r:return:${RX}`)).toMatchObject({ ourId: RX, differenceCents: 0n });
  });
});

describe('a run in the traces', () => {
  let dir: string;
  let spans: RecordedSpans;
  beforeAll(() => {
    spans = recordSpans();
  });
  afterAll(() => spans.stop());
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'recon-trace-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("is one span whose links lead to the payments of its breaks (each record's stored trace), never to matched ones", async () => {
    const tp = (trace: string) => `00-${trace}-b7ad6b7169203331-01`;
    const [T1, T2] = ['0af7651916cd43dd8448eb211c80319c', '1bf7651916cd43dd8448eb211c80319d'];
    const ours = new ArrayOurRecords({
      breb: [
        { ...transfer('tx-1', 'brb_1', 150_000n), traceparent: tp(T1) }, // matched: no link
        { ...transfer('tx-2', 'brb_2', 90_000n), traceparent: tp(T2) }, // missing at the provider: a break, linked
        transfer('tx-3', 'brb_3', 10_000n), // a break, but no stored trace: no link
      ],
    });
    const r = await inSpan('reconciliation.run breb', {}, () =>
      reconcile('breb', D, batches(report([['brb_1', 'tx-1', 'OUT', 150_000, 'COMPLETED']])), {
        ours,
        sink: new InMemoryBreakSink(),
        sorter: () => new SpillSorter({ dir, runLines: 2, batchLines: 2 }),
      }),
    );
    expect(r.outcome).toBe('RECONCILED');
    const [run] = spans.finished().filter((s) => s.name === 'reconciliation.run breb');
    expect(run!.links.map((l) => [l.context.traceId, l.attributes?.['wallet.movement_id']])).toEqual([[T2, 'tx-2']]);
    expect(String(run!.links[0]!.attributes?.['wallet.reconciliation_break'])).toContain('missing_at_provider');
  });
});
