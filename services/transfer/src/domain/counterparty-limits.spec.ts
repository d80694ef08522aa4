import { bogotaWindows, checkCounterpartyLimits, effectiveLimits } from './counterparty-limits.js';

describe('counterparty limits', () => {
  it('day and month start at midnight in Bogota (UTC−5)', () => {
    // 2026-03-01 03:00 UTC is still 2026-02-28 22:00 in Bogota.
    const w = bogotaWindows(new Date('2026-03-01T03:00:00Z'));
    expect(w.dayStart.toISOString()).toBe('2026-02-28T05:00:00.000Z');
    expect(w.monthStart.toISOString()).toBe('2026-02-01T05:00:00.000Z');
    const x = bogotaWindows(new Date('2026-03-01T05:00:00Z'));
    expect(x.dayStart.toISOString()).toBe('2026-03-01T05:00:00.000Z');
    expect(x.monthStart.toISOString()).toBe('2026-03-01T05:00:00.000Z');
  });

  it('reaching a limit exactly is allowed; exceeding it is refused, daily first', () => {
    const limits = { daily: 1_000n, monthly: 5_000n };
    expect(checkCounterpartyLimits(400n, { daySum: 600n, monthSum: 600n }, limits)).toBe('OK');
    expect(checkCounterpartyLimits(401n, { daySum: 600n, monthSum: 600n }, limits)).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    expect(checkCounterpartyLimits(100n, { daySum: 0n, monthSum: 4_900n }, limits)).toBe('OK');
    expect(checkCounterpartyLimits(101n, { daySum: 0n, monthSum: 4_900n }, limits)).toBe('COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED');
    expect(checkCounterpartyLimits(2_000n, { daySum: 0n, monthSum: 4_900n }, limits)).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
  });

  it('a company limit above zero wins over the default', () => {
    const defaults = { daily: 5_000_000_000n, monthly: 50_000_000_000n };
    expect(effectiveLimits({ daily: 0n, monthly: 0n }, defaults)).toEqual(defaults);
    expect(effectiveLimits({ daily: 10n, monthly: 0n }, defaults)).toEqual({ daily: 10n, monthly: 50_000_000_000n });
  });
});
