import {
  effectOfLine,
  effectOfRecord,
  KeyGroup,
  OurRecordError,
  SHOWN_DUPLICATES,
  breakKey,
  isRefundBreak,
  isReturnBreak,
  lineKey,
  lookupIdOf,
  pairFaults,
  recordKey,
  refundIdOfKey,
  returnIdOfKey,
  type OurRecord,
} from './matching.js';
import type { ReportLine, ReportRail } from './report.js';

const D = '2025-03-14';
const settled = '2025-03-14T13:00:03.250Z'; // 08:00 in Bogotá

const line = (over: Partial<ReportLine> = {}): ReportLine => ({
  lineNo: 1,
  providerId: 'brb_1',
  ourId: 'tx-1',
  direction: 'OUT',
  amountCents: 150_000n,
  feeCents: 0n,
  status: 'COMPLETED',
  valueDate: D,
  acceptedAt: '2025-03-14T13:00:00.000Z',
  settledAt: settled,
  counterparty: '3001234567',
  ...over,
});
const ours = (over: Partial<OurRecord> = {}): OurRecord => ({
  ourId: 'tx-1',
  providerId: 'brb_1',
  status: 'COMPLETED',
  amountCents: 150_000n,
  settledAt: settled,
  ...over,
});
const group = (rail: ReportRail, r: OurRecord | undefined, lines: ReportLine[]) => {
  const g = new KeyGroup(rail, D, r ? recordKey(rail, r) : lineKey(rail, lines[0]!.providerId, lines[0]!.ourId, lines[0]!.direction), r);
  for (const l of lines) g.add(l);
  return g.settle();
};

describe('keys', () => {
  it('our id for breb and ach, our id and the leg for pse, the provider id for breb-inbound', () => {
    expect(lineKey('breb', 'brb_1', 'tx-1', 'OUT')).toBe(recordKey('breb', ours()));
    expect(lineKey('ach', 'ach_1', 'tx-1', 'OUT')).toBe('tx-1');
    const paid = ours({ ourId: 'dep_1', providerId: 'pse_1', status: 'ASSIGNED' });
    const reversed = ours({ ourId: 'dep_1', providerId: 'pse_1', status: 'REVERSED' });
    expect(lineKey('pse', 'pse_1', 'dep_1', 'IN')).toBe(recordKey('pse', paid));
    expect(lineKey('pse', 'pse_1', 'dep_1', 'OUT')).toBe(recordKey('pse', reversed));
    expect(recordKey('pse', paid)).not.toBe(recordKey('pse', reversed));
    expect(lineKey('breb-inbound', 'brb_in_1', null, 'IN')).toBe(
      recordKey('breb-inbound', ours({ ourId: 'dep_x', providerId: 'brb_in_1', status: 'ASSIGNED' })),
    );
  });

  it('a line without our id gets a key no record has, and is never looked up', () => {
    const k = lineKey('breb', 'brb_x', null, 'OUT');
    expect(k).not.toBe('brb_x');
    expect(lookupIdOf(k)).toBeNull();
    expect(lookupIdOf(lineKey('pse', 'pse_1', 'dep_1', 'OUT'))).toBe('dep_1');
    expect(lookupIdOf(lineKey('breb-inbound', 'brb_in_1', null, 'IN'))).toBe('brb_in_1');
  });

  it('records ordered by (id collate "C", payment before reversal) are in key order', () => {
    const ids = ['dep_1', 'dep_1-x', 'dep_10', 'dep_1_', 'DEP_2'].sort(); // code-unit order = collate "C" for ASCII
    const records = ids.flatMap((id) => [ours({ ourId: id, status: 'ASSIGNED' }), ours({ ourId: id, status: 'REVERSED' })]);
    const keys = records.map((r) => recordKey('pse', r));
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('a record the rules cannot place is a contract error of the owning service', () => {
    expect(() => recordKey('breb', ours({ status: 'ASSIGNED' }))).toThrow(OurRecordError);
    expect(() => recordKey('breb-inbound', ours({ providerId: null, status: 'ASSIGNED' }))).toThrow(OurRecordError);
    expect(() => recordKey('ach', ours({ ourId: '' }))).toThrow(OurRecordError);
  });
});

describe('a pair', () => {
  it.each([
    ['breb', ours(), line()],
    ['ach', ours({ status: 'FAILED' }), line({ status: 'FAILED' })],
    ['pse', ours({ status: 'ASSIGNED' }), line({ direction: 'IN', status: 'PAID' })],
    ['pse', ours({ status: 'FAILED' }), line({ direction: 'IN', status: 'FAILED' })],
    ['pse', ours({ status: 'REVERSED' }), line({ direction: 'OUT', status: 'REVERSED' })],
    ['breb-inbound', ours({ status: 'ASSIGNED' }), line({ direction: 'IN', status: 'RECEIVED', ourId: null })],
    ['breb-inbound', ours({ status: 'UNASSIGNED' }), line({ direction: 'IN', status: 'RECEIVED', ourId: null })],
  ] as const)("%s: our %o matches the provider's line", (rail, r, l) => {
    expect(pairFaults(rail, r, l)).toEqual([]);
  });

  it('differs in status (or direction), amount (or the provider fee) and value date, each its own break', () => {
    expect(pairFaults('breb', ours(), line({ status: 'FAILED' }))).toEqual(['status_mismatch']);
    expect(pairFaults('breb', ours(), line({ direction: 'IN' }))).toEqual(['status_mismatch']);
    expect(pairFaults('breb', ours(), line({ amountCents: 150_100n }))).toEqual(['amount_mismatch']);
    expect(pairFaults('breb', ours(), line({ feeCents: 250n }))).toEqual(['amount_mismatch']);
    expect(pairFaults('breb', ours({ providerFeeCents: 250n }), line({ feeCents: 250n }))).toEqual([]);
    expect(pairFaults('breb', ours(), line({ valueDate: '2025-03-15' }))).toEqual(['value_date_mismatch']);
    // Ours settled 23:59:59.999 Bogotá on the 13th: the line of the 14th is a value-date break.
    expect(pairFaults('breb', ours({ settledAt: '2025-03-14T04:59:59.999Z' }), line())).toEqual(['value_date_mismatch']);
    expect(pairFaults('breb', ours(), line({ status: 'FAILED', amountCents: 1n, valueDate: '2025-03-15' }))).toEqual([
      'status_mismatch',
      'amount_mismatch',
      'value_date_mismatch',
    ]);
  });
});

describe('a key group', () => {
  it('a clean pair is matched, with its amount', () => {
    expect(group('breb', ours(), [line()])).toEqual({ matched: { amountCents: 150_000n }, breaks: [] });
  });

  it('a record without a line is missing at the provider, keyed by our id (and the leg on pse)', () => {
    const r = group('breb', ours(), []);
    expect(r.matched).toBeNull();
    expect(r.breaks).toEqual([
      {
        key: `breb:${D}:missing_at_provider:tx-1`,
        kind: 'missing_at_provider',
        rail: 'breb',
        date: D,
        ourId: 'tx-1',
        providerId: 'brb_1',
        ours: { ourId: 'tx-1', providerId: 'brb_1', status: 'COMPLETED', amountCents: 150_000n, providerFeeCents: 0n, settledAt: settled, settledDate: D },
        differenceCents: -150_000n, // the provider moved nothing, we moved 150,000 out of the clearing account's view
      },
    ]);
    expect(group('pse', ours({ ourId: 'dep_1', status: 'REVERSED' }), []).breaks[0]!.key).toBe(`pse:${D}:missing_at_provider:dep_1:reversal`);
  });

  it('a line without a record is missing in our books, keyed by the provider id', () => {
    const l = line({ providerId: 'brb_x', ourId: null });
    expect(group('breb', undefined, [l]).breaks).toEqual([
      {
        key: `breb:${D}:missing_in_our_books:brb_x`,
        kind: 'missing_in_our_books',
        rail: 'breb',
        date: D,
        providerId: 'brb_x',
        theirs: l,
        differenceCents: l.status === 'COMPLETED' ? l.amountCents : 0n,
      },
    ]);
  });

  it('the same line twice: matched once, and a duplicate break counting the copy', () => {
    const r = group('breb-inbound', ours({ ourId: 'dep_9', providerId: 'brb_in_1', status: 'ASSIGNED' }), [
      line({ lineNo: 1, providerId: 'brb_in_1', ourId: null, direction: 'IN', status: 'RECEIVED' }),
      line({ lineNo: 2, providerId: 'brb_in_1', ourId: null, direction: 'IN', status: 'RECEIVED' }),
    ]);
    expect(r.matched).toEqual({ amountCents: 150_000n });
    expect(r.breaks).toHaveLength(1);
    expect(r.breaks[0]).toMatchObject({
      key: `breb-inbound:${D}:duplicate:brb_in_1`,
      kind: 'duplicate',
      copies: 1,
      theirs: { lineNo: 1 },
      others: [{ lineNo: 2 }],
    });
  });

  it('two lines for one record where one is expected: the one that fits is paired, the other is the duplicate', () => {
    const r = group('ach', ours({ ourId: 'tx-2', providerId: 'ach_2' }), [
      line({ lineNo: 5, providerId: 'ach_2b', ourId: 'tx-2', status: 'FAILED' }),
      line({ lineNo: 9, providerId: 'ach_2', ourId: 'tx-2', status: 'COMPLETED' }),
    ]);
    expect(r.matched).not.toBeNull();
    expect(r.breaks.map((b) => [b.key, b.theirs?.lineNo, b.others?.map((o) => o.lineNo)])).toEqual([[`ach:${D}:duplicate:ach_2`, 9, [5]]]);
  });

  it('a line for a record still PENDING on our side (a callback we never got) is a status break, nothing else', () => {
    const pending = ours({ status: 'PENDING', settledAt: null });
    expect(pairFaults('ach', pending, line({ valueDate: '2025-03-20' }))).toEqual(['status_mismatch']);
    const r = group('ach', pending, [line()]);
    expect(r.breaks).toHaveLength(1);
    expect(r.breaks[0]).toMatchObject({ kind: 'status_mismatch', ours: { status: 'PENDING', settledAt: null, settledDate: null } });
    expect(recordKey('pse', ours({ ourId: 'dep_1', status: 'PENDING', settledAt: null }))).toBe(lineKey('pse', 'pse_1', 'dep_1', 'IN'));
  });

  it('an inbound Bre-B payment returned to the payer: each RETURNED (OUT) line is a key of its own (the return id, its our_id), matched by our RETURNED record of that return; the RECEIVED line by the payment', () => {
    const received = ours({ ourId: 'dep_7', providerId: 'brb_in_7', status: 'UNASSIGNED' });
    // The full return of a held payment: its id is the deposit id.
    const returned = ours({ ourId: 'dep_7', providerId: 'brb_in_7', status: 'RETURNED' });
    const inLine = line({ providerId: 'brb_in_7', ourId: '', direction: 'IN', status: 'RECEIVED' });
    const outLine = line({ providerId: 'brb_in_7', ourId: 'dep_7', direction: 'OUT', status: 'RETURNED' });
    expect(recordKey('breb-inbound', received)).toBe(lineKey('breb-inbound', 'brb_in_7', '', 'IN'));
    expect(recordKey('breb-inbound', returned)).toBe(lineKey('breb-inbound', 'brb_in_7', 'dep_7', 'OUT'));
    expect(recordKey('breb-inbound', received) < recordKey('breb-inbound', returned)).toBe(true);
    expect(lookupIdOf(recordKey('breb-inbound', returned))).toBe('brb_in_7');
    expect(returnIdOfKey('breb-inbound', recordKey('breb-inbound', returned))).toBe('dep_7');
    expect(returnIdOfKey('breb-inbound', recordKey('breb-inbound', received))).toBeUndefined();
    expect(group('breb-inbound', received, [inLine]).breaks).toEqual([]);
    expect(group('breb-inbound', returned, [outLine]).breaks).toEqual([]);
    // A RETURNED line with no return on our side is a break, never the payment's match; keyed by the provider id and the return id.
    const missing = group('breb-inbound', undefined, [outLine]).breaks;
    expect(missing.map((b) => [b.kind, b.key, b.ourId])).toEqual([
      ['missing_in_our_books', `breb-inbound:${D}:missing_in_our_books:brb_in_7:return:dep_7`, 'dep_7'],
    ]);
    expect(isReturnBreak(missing[0]!)).toBe(true);
    // A RETURNED line without a return id meets no record of ours.
    const bare = line({ providerId: 'brb_in_7', ourId: null, direction: 'OUT', status: 'RETURNED' });
    expect(lineKey('breb-inbound', 'brb_in_7', null, 'OUT')).not.toBe(recordKey('breb-inbound', returned));
    expect(group('breb-inbound', undefined, [bare]).breaks.map((b) => b.key)).toEqual([`breb-inbound:${D}:missing_in_our_books:brb_in_7:return`]);
    // The payment leg keeps the plain break key it always had.
    const paymentBreak = group('breb-inbound', undefined, [inLine]).breaks;
    expect(paymentBreak.map((b) => b.key)).toEqual([`breb-inbound:${D}:missing_in_our_books:brb_in_7`]);
    expect(isReturnBreak(paymentBreak[0]!)).toBe(false);
  });

  it('several partial returns of one payment: one key each, in (provider id, IN before OUT, return id collate "C") order; a missing one is a break of its own', () => {
    const pay = ours({ ourId: 'dep_8', providerId: 'brb_in_8', status: 'ASSIGNED', amountCents: 10_000n });
    const r1 = ours({ ourId: 'ret_aaaaaaaaaaaaaaaaaaaaaaaa', providerId: 'brb_in_8', status: 'RETURNED', amountCents: 3_000n });
    const r2 = ours({ ourId: 'ret_bbbbbbbbbbbbbbbbbbbbbbbb', providerId: 'brb_in_8', status: 'RETURNED', amountCents: 2_000n });
    const next = ours({ ourId: 'dep_9', providerId: 'brb_in_8a', status: 'ASSIGNED' });
    const keys = [pay, r1, r2, next].map((r) => recordKey('breb-inbound', r));
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(4);
    const l1 = line({ providerId: 'brb_in_8', ourId: r1.ourId, direction: 'OUT', status: 'RETURNED', amountCents: 3_000n });
    const l2 = line({ providerId: 'brb_in_8', ourId: r2.ourId, direction: 'OUT', status: 'RETURNED', amountCents: 2_000n });
    expect(lineKey('breb-inbound', l1.providerId, l1.ourId, 'OUT')).toBe(keys[1]);
    expect(lineKey('breb-inbound', l2.providerId, l2.ourId, 'OUT')).toBe(keys[2]);
    expect(group('breb-inbound', r1, [l1]).breaks).toEqual([]);
    expect(group('breb-inbound', r2, [l2]).breaks).toEqual([]);
    // The second return missing at the network: a break about that return only.
    const gone = group('breb-inbound', r2, []).breaks;
    expect(gone.map((b) => [b.kind, b.key, b.ourId, b.providerId, b.differenceCents])).toEqual([
      ['missing_at_provider', `breb-inbound:${D}:missing_at_provider:brb_in_8:return:${r2.ourId}`, r2.ourId, 'brb_in_8', -2_000n],
    ]);
    // Another amount on the first: its own amount break, apart from the second's.
    expect(group('breb-inbound', r1, [{ ...l1, amountCents: 3_100n }]).breaks.map((b) => b.key)).toEqual([
      `breb-inbound:${D}:amount_mismatch:brb_in_8:return:${r1.ourId}`,
    ]);
    // A return in flight (PENDING OUT) keys as its return.
    expect(recordKey('breb-inbound', { ...r2, status: 'PENDING', direction: 'OUT', settledAt: null })).toBe(keys[2]);
    expect(() => recordKey('breb-inbound', { ...r2, ourId: '' })).toThrow(OurRecordError);
  });

  it("an inbound Bre-B payment not final on our side (collect-key reports it PENDING): the network's RECEIVED line is a status break, keyed by the network's id", () => {
    const pending = ours({ ourId: 'dep_9', providerId: 'brb_in_9', status: 'PENDING', settledAt: null });
    expect(recordKey('breb-inbound', pending)).toBe(lineKey('breb-inbound', 'brb_in_9', '', 'IN'));
    const r = group('breb-inbound', pending, [line({ providerId: 'brb_in_9', ourId: '', direction: 'IN', status: 'RECEIVED' })]);
    expect(r.matched).toBeNull();
    expect(r.breaks.map((b) => b.kind)).toEqual(['status_mismatch']);
  });

  it('a pair with differences opens one break per kind, keyed by the provider id', () => {
    const r = group('pse', ours({ ourId: 'dep_1', providerId: 'pse_1', status: 'ASSIGNED' }), [
      line({ providerId: 'pse_1', ourId: 'dep_1', direction: 'IN', status: 'FAILED', amountCents: 1n }),
    ]);
    expect(r.matched).toBeNull();
    expect(r.breaks.map((b) => b.key)).toEqual([`pse:${D}:status_mismatch:pse_1:payment`, `pse:${D}:amount_mismatch:pse_1:payment`]);
    expect(r.breaks[0]).toMatchObject({ ourId: 'dep_1', providerId: 'pse_1', ours: { status: 'ASSIGNED' }, theirs: { status: 'FAILED' } });
  });

  it("difference_cents: the provider's effect on the clearing account (every copy) minus ours; 0 on a value date", () => {
    // breb amount: the provider took 150,100 out, we recorded 150,000: +100 to accept.
    const amount = group('breb', ours(), [line({ amountCents: 150_100n })]);
    expect(amount.breaks).toEqual([expect.objectContaining({ kind: 'amount_mismatch', differenceCents: 100n })]);
    // pse: the provider says FAILED, we assigned 1,000 in (-1,000 on pse_settlement): +1,000.
    const pse = group('pse', ours({ ourId: 'dep_1', providerId: 'pse_1', status: 'ASSIGNED', amountCents: 1_000n }), [
      line({ providerId: 'pse_1', ourId: 'dep_1', direction: 'IN', status: 'FAILED', amountCents: 1_000n }),
    ]);
    expect(pse.breaks).toEqual([expect.objectContaining({ kind: 'status_mismatch', differenceCents: 1_000n })]);
    // A duplicate counts every copy: two lines of 150,000 against one record of 150,000.
    const dup = group('breb', ours(), [line({ lineNo: 1 }), line({ lineNo: 2 })]);
    expect(dup.breaks).toEqual([expect.objectContaining({ kind: 'duplicate', differenceCents: 150_000n })]);
    // A value date only: no money.
    const late = group('breb', ours(), [line({ valueDate: '2025-03-15' })]);
    expect(late.breaks).toEqual([expect.objectContaining({ kind: 'value_date_mismatch', differenceCents: 0n })]);
    expect(effectOfLine('breb-inbound', 'RECEIVED', 'IN', 5n)).toBe(-5n);
    expect(effectOfLine('pse', 'REVERSED', 'OUT', 5n)).toBe(5n);
    expect(effectOfRecord('pse', { status: 'REVERSED', amountCents: 5n })).toBe(5n);
    expect(effectOfRecord('breb-inbound', { status: 'UNASSIGNED', amountCents: 5n })).toBe(-5n);
    expect(effectOfRecord('ach', { status: 'FAILED', amountCents: 5n })).toBe(0n);
  });

  it('keeps a bounded number of copies however many there are', () => {
    const lines = Array.from({ length: 1000 }, (_, i) => line({ lineNo: i + 1 }));
    const r = group('breb', ours(), lines);
    const dup = r.breaks.find((b) => b.kind === 'duplicate')!;
    expect(dup.copies).toBe(999);
    expect(dup.others!.map((o) => o.lineNo)).toEqual([2, 3, 4, 5, 6].slice(0, SHOWN_DUPLICATES));
  });

  it('break keys are <rail>:<date>:<kind>:<ref>[:leg]', () => {
    expect(breakKey('ach', D, 'amount_mismatch', 'ach_1', 'OUT')).toBe(`ach:${D}:amount_mismatch:ach_1`);
    expect(breakKey('pse', D, 'duplicate', 'pse_1', 'IN')).toBe(`pse:${D}:duplicate:pse_1:payment`);
    expect(breakKey('breb-inbound', D, 'duplicate', 'brb_in_1', 'IN')).toBe(`breb-inbound:${D}:duplicate:brb_in_1`);
    expect(breakKey('breb-inbound', D, 'duplicate', 'brb_in_1', 'OUT', 'ret_1')).toBe(`breb-inbound:${D}:duplicate:brb_in_1:return:ret_1`);
    expect(breakKey('pse', D, 'duplicate', 'pse_1', 'OUT', 'ret_1')).toBe(`pse:${D}:duplicate:pse_1:refund:ret_1`);
  });

  it('a PSE refund: its REFUNDED (OUT) line is a key of its own (the return id, its our_id), matched by our REFUNDED record; a refund moves pse_settlement like a reversal', () => {
    const R = 'ret_aaaaaaaaaaaaaaaaaaaaaaa1';
    const refund = ours({ ourId: R, providerId: 'pse_1', status: 'REFUNDED', direction: 'OUT', amountCents: 4_000n });
    const refundLine = line({ providerId: 'pse_1', ourId: R, direction: 'OUT', status: 'REFUNDED', amountCents: 4_000n });
    expect(recordKey('pse', refund)).toBe(lineKey('pse', 'pse_1', R, 'OUT'));
    expect(recordKey('pse', refund)).toBe(`${R}\u0000OUT`);
    expect(lookupIdOf(recordKey('pse', refund))).toBe(R);
    expect(refundIdOfKey('pse', recordKey('pse', refund))).toBe(R);
    expect(refundIdOfKey('pse', lineKey('pse', 'pse_1', 'dep_1', 'OUT'))).toBeUndefined();
    expect(refundIdOfKey('breb-inbound', `${R}\u0000OUT`)).toBeUndefined();
    // In flight on our side (SENDING / RELEASING): a PENDING OUT leg, the same key.
    expect(recordKey('pse', { ...refund, status: 'PENDING', settledAt: null })).toBe(recordKey('pse', refund));
    expect(group('pse', refund, [refundLine])).toEqual({ matched: { amountCents: 4_000n }, breaks: [] });
    const missing = group('pse', refund, []);
    expect(missing.breaks).toEqual([
      expect.objectContaining({ key: `pse:${D}:missing_at_provider:pse_1:refund:${R}`, ourId: R, providerId: 'pse_1', differenceCents: -4_000n }),
    ]);
    expect(isRefundBreak(missing.breaks[0]!)).toBe(true);
    expect(isRefundBreak({ rail: 'pse', key: `pse:${D}:missing_at_provider:dep_1:reversal`, ourId: 'dep_1' })).toBe(false);
    const amount = group('pse', refund, [{ ...refundLine, amountCents: 4_500n }]);
    expect(amount.breaks).toEqual([expect.objectContaining({ key: `pse:${D}:amount_mismatch:pse_1:refund:${R}`, differenceCents: 500n })]);
    expect(effectOfLine('pse', 'REFUNDED', 'OUT', 5n)).toBe(5n);
    expect(effectOfRecord('pse', { status: 'REFUNDED', amountCents: 5n })).toBe(5n);
    expect(effectOfRecord('breb', { status: 'REFUNDED', amountCents: 5n })).toBe(0n);
    // Deposit ids (dep_…) sort before return ids (ret_…) in byte order: every deposit's legs, then the refunds.
    expect(recordKey('pse', ours({ ourId: 'dep_z', providerId: 'pse_z', status: 'REVERSED' })) < recordKey('pse', refund)).toBe(true);
  });
});
