import {
  TrailerTotals,
  addDays,
  applyToLine,
  bogotaDayRange,
  extraLines,
  isReportDate,
  lateRefs,
  lineRecord,
  trailerRecord,
  type Discrepancy,
  type DiscrepancySpec,
  type ReportLine,
} from './settlement-report.js';

const line: ReportLine = {
  providerId: 'pse_1',
  ourId: 'dep_1',
  direction: 'IN',
  amountCents: 500n,
  feeCents: 0n,
  status: 'PAID',
  valueDate: '2025-03-14',
  acceptedAt: '2025-03-14T16:00:00.000Z',
  settledAt: '2025-03-14T17:00:00.000Z',
  counterparty: 'Ana',
};
let n = 0;
const d = (spec: DiscrepancySpec): Discrepancy =>
  ({ ...spec, id: `dsc_${(n += 1)}`, rail: 'pse', date: '2025-03-14', createdAt: '2025-03-14T00:00:00.000Z' }) as Discrepancy;

describe('report dates (Bogotá, UTC-5)', () => {
  it('accepts only real calendar dates', () => {
    for (const ok of ['2025-03-14', '2024-02-29', '1970-01-01']) expect(isReportDate(ok)).toBe(true);
    for (const bad of ['2025-02-29', '2025-13-01', '2025-3-14', '14-03-2025', '2025-03-14T00:00', '', '1969-12-31']) expect(isReportDate(bad)).toBe(false);
  });
  it('a day runs from 05:00 UTC to 05:00 UTC the next day', () => {
    expect(bogotaDayRange('2025-03-14')).toEqual({ from: '2025-03-14T05:00:00.000Z', to: '2025-03-15T05:00:00.000Z' });
    expect(bogotaDayRange('2024-12-31')).toEqual({ from: '2024-12-31T05:00:00.000Z', to: '2025-01-01T05:00:00.000Z' });
  });
  it('adds days across months and leap years', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2025-03-01', -1)).toBe('2025-02-28');
    expect(addDays('2024-12-31', 1)).toBe('2025-01-01');
  });
});

describe('applyToLine', () => {
  it('leaves a line no discrepancy names as it is', () => {
    expect(applyToLine(line, [d({ kind: 'missing', ref: 'other' })])).toEqual({ today: [line], nextDay: [] });
  });
  it('matches by provider id or our id, and by status when lineStatus is given', () => {
    expect(applyToLine(line, [d({ kind: 'missing', ref: 'pse_1' })]).today).toEqual([]);
    expect(applyToLine(line, [d({ kind: 'missing', ref: 'dep_1' })]).today).toEqual([]);
    expect(applyToLine(line, [d({ kind: 'missing', ref: 'dep_1', lineStatus: 'REVERSED' })]).today).toEqual([line]);
  });
  it('applies amount, fee and status changes in injection order (the last one wins)', () => {
    const out = applyToLine(line, [
      d({ kind: 'amount', ref: 'dep_1', amountCents: 600n }),
      d({ kind: 'amount', ref: 'dep_1', feeCents: 30n }),
      d({ kind: 'status', ref: 'dep_1', status: 'FAILED' }),
      d({ kind: 'amount', ref: 'dep_1', amountCents: 700n }),
    ]);
    expect(out.today).toEqual([{ ...line, amountCents: 700n, feeCents: 30n, status: 'FAILED' }]);
  });
  it('duplicates once per duplicate discrepancy, with the changes applied to every copy', () => {
    const out = applyToLine(line, [
      d({ kind: 'duplicate', ref: 'dep_1' }),
      d({ kind: 'duplicate', ref: 'dep_1' }),
      d({ kind: 'amount', ref: 'dep_1', amountCents: 1n }),
    ]);
    expect(out.today).toEqual([1, 2, 3].map(() => ({ ...line, amountCents: 1n })));
  });
  it('a late value date moves the line (and its copies) to the next day', () => {
    const out = applyToLine(line, [d({ kind: 'late_value_date', ref: 'pse_1' }), d({ kind: 'duplicate', ref: 'pse_1' })]);
    expect(out).toEqual({
      today: [],
      nextDay: [
        { ...line, valueDate: '2025-03-15' },
        { ...line, valueDate: '2025-03-15' },
      ],
    });
  });
  it('missing wins over everything else', () => {
    const out = applyToLine(line, [d({ kind: 'duplicate', ref: 'pse_1' }), d({ kind: 'late_value_date', ref: 'pse_1' }), d({ kind: 'missing', ref: 'pse_1' })]);
    expect(out).toEqual({ today: [], nextDay: [] });
  });
  it('lateRefs lists each moved ref once', () => {
    expect(lateRefs([d({ kind: 'late_value_date', ref: 'a' }), d({ kind: 'missing', ref: 'b' }), d({ kind: 'late_value_date', ref: 'a' })])).toEqual(['a']);
  });
});

describe('extra lines and the trailer', () => {
  it('an extra line is dated 12:00 Bogotá on the report date, with no id of ours', () => {
    const [x] = extraLines('2025-03-14', [
      d({ kind: 'extra', providerId: 'pse_x', direction: 'IN', amountCents: 9n, feeCents: 1n, status: 'PAID', counterparty: 'X' }),
    ]);
    expect(lineRecord(x!)).toEqual(['pse_x', '', 'IN', '9', '1', 'PAID', '2025-03-14', '2025-03-14T17:00:00.000Z', '2025-03-14T17:00:00.000Z', 'X']);
  });
  it('sums the lines served; a trailer discrepancy overrides only the figures it names', () => {
    const t = new TrailerTotals();
    t.add(line);
    t.add({ ...line, amountCents: 2n ** 60n, feeCents: 7n });
    expect(trailerRecord(t.stated([]))).toEqual(['TRAILER', '2', String(500n + 2n ** 60n), '7']);
    expect(trailerRecord(t.stated([d({ kind: 'trailer', lines: 5 }), d({ kind: 'trailer', feeCents: 0n })]))).toEqual([
      'TRAILER',
      '5',
      String(500n + 2n ** 60n),
      '0',
    ]);
  });
});
