import {
  REPORT_COLUMNS,
  ReportFormatError,
  TrailerTotals,
  bogotaDate,
  checkHeader,
  isCalendarDate,
  parseLine,
  parseTrailer,
  type RejectReason,
} from './report.js';

const good = ['brb_1', 'tx-1', 'OUT', '150000', '0', 'COMPLETED', '2025-03-14', '2025-03-14T13:00:00.000Z', '2025-03-14T13:00:03.250Z', '3001234567'];
const with_ = (i: number, v: string) => good.map((f, j) => (j === i ? v : f));

function reason(fn: () => unknown): { reason: RejectReason; lineNo: number | undefined; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ReportFormatError) return { reason: err.reason, lineNo: err.lineNo, message: err.message };
    throw err;
  }
  throw new Error('did not throw');
}

describe('report header, lines and trailer', () => {
  it('accepts the header in order; an empty report or another header is rejected', () => {
    expect(() => checkHeader([...REPORT_COLUMNS])).not.toThrow();
    expect(reason(() => checkHeader(undefined)).reason).toBe('EMPTY');
    expect(reason(() => checkHeader(['our_id', 'provider_id', ...REPORT_COLUMNS.slice(2)])).reason).toBe('BAD_HEADER');
    expect(reason(() => checkHeader([...REPORT_COLUMNS, 'extra'])).reason).toBe('BAD_HEADER');
  });

  it('reads a line: our id empty means none, amounts are bigint centavos', () => {
    expect(parseLine('breb', good, 7)).toEqual({
      lineNo: 7,
      providerId: 'brb_1',
      ourId: 'tx-1',
      direction: 'OUT',
      amountCents: 150_000n,
      feeCents: 0n,
      status: 'COMPLETED',
      valueDate: '2025-03-14',
      acceptedAt: '2025-03-14T13:00:00.000Z',
      settledAt: '2025-03-14T13:00:03.250Z',
      counterparty: '3001234567',
    });
    expect(parseLine('breb-inbound', ['brb_in_1', '', 'IN', '9007199254740993', '250', 'RECEIVED', ...good.slice(6)], 1)).toMatchObject({
      ourId: null,
      amountCents: 9_007_199_254_740_993n,
      feeCents: 250n,
    });
  });

  it.each([
    ['a missing field', good.slice(0, 9), '9 fields'],
    ['an empty provider id', with_(0, ''), 'provider_id is empty'],
    ['a control character in an id', with_(1, 'tx\t1'), 'control character'],
    ['another direction', with_(2, 'SIDEWAYS'), 'direction'],
    ['a decimal amount', with_(3, '1500.00'), 'amount_cents'],
    ['a negative amount', with_(3, '-5'), 'amount_cents'],
    ['a leading zero', with_(3, '0150'), 'amount_cents'],
    ['a fee that is not a number', with_(4, 'x'), 'fee_cents'],
    ['a status this rail never reports', with_(5, 'PAID'), 'status "PAID"'],
    ['a date that does not exist', with_(6, '2025-02-30'), 'value_date'],
    ['a timestamp that is not ISO-8601', with_(8, '14/03/2025 13:00'), 'settled_at'],
  ])('rejects a line with %s, naming the line', (_what, record, message) => {
    const r = reason(() => parseLine('breb', record, 42));
    expect(r).toMatchObject({ reason: 'MALFORMED_LINE', lineNo: 42 });
    expect(r.message).toContain('line 42');
    expect(r.message).toContain(message);
  });

  it('checks statuses per rail: PSE reports PAID, REVERSED and FAILED; ACH never RECEIVED', () => {
    for (const s of ['PAID', 'REVERSED', 'FAILED']) expect(parseLine('pse', with_(5, s), 1).status).toBe(s);
    expect(reason(() => parseLine('ach', with_(5, 'RECEIVED'), 1)).reason).toBe('MALFORMED_LINE');
  });

  it('reads the trailer TRAILER,<lines>,<amount>,<fee>; any other shape is malformed', () => {
    expect(parseTrailer(['TRAILER', '2', '400013', '0'], 3)).toEqual({ lines: 2, amountCents: 400_013n, feeCents: 0n });
    for (const bad of [
      ['TRAILER', '2', '400013'],
      ['TRAILER', 'two', '1', '0'],
      ['TRAILER', '2', '1.5', '0'],
      ['TRAILER', '2', '1', '0', ''],
    ]) {
      expect(reason(() => parseTrailer(bad, 3)).reason).toBe('MALFORMED_LINE');
    }
  });

  it('control totals are bigint sums (exact past 2^53) and name every figure that differs', () => {
    const t = new TrailerTotals();
    let expected = 0n;
    for (let i = 0; i < 5000; i++) {
      const a = i % 2 ? 999_999_999_999_999n - BigInt(i) : 9_000_000_000_000_000_000n + BigInt(i);
      t.add(a.toString(), i % 3 ? '0' : '7');
      expected += a;
    }
    expect(t.amountCents).toBe(expected);
    expect(t.feeCents).toBe(7n * 1667n);
    expect(() => t.verify({ lines: 5000, amountCents: expected, feeCents: 7n * 1667n })).not.toThrow();
    const r = reason(() => t.verify({ lines: 5001, amountCents: expected, feeCents: 1n }));
    expect(r.reason).toBe('TRAILER_MISMATCH');
    expect(r.message).toContain('lines 5001 stated, 5000 read');
    expect(r.message).toContain('fee_cents 1 stated, 11669 read');
    expect(r.message).not.toContain('amount_cents');
  });
});

describe('dates', () => {
  it('the Bogotá date of an instant: UTC-5 all year, day D from D 05:00Z to D+1 05:00Z', () => {
    expect(bogotaDate('2025-03-14T05:00:00.000Z')).toBe('2025-03-14');
    expect(bogotaDate('2025-03-15T04:59:59.999Z')).toBe('2025-03-14');
    expect(bogotaDate('2025-03-14T04:59:59.999Z')).toBe('2025-03-13');
    // Alternating days: the memo never answers for the wrong one.
    expect(['2025-03-14T12:00:00Z', '2025-07-01T12:00:00Z', '2025-03-14T12:00:00Z'].map((s) => bogotaDate(s))).toEqual([
      '2025-03-14',
      '2025-07-01',
      '2025-03-14',
    ]);
    expect(bogotaDate('2025-03-14T08:00:00-05:00')).toBe('2025-03-14');
    expect(() => bogotaDate('yesterday')).toThrow(RangeError);
  });

  it('a calendar date is real', () => {
    expect(['2024-02-29', '2025-12-31'].map(isCalendarDate)).toEqual([true, true]);
    expect(['2025-02-29', '2025-13-01', '2025-3-14', ''].map(isCalendarDate)).toEqual([false, false, false, false]);
  });
});
