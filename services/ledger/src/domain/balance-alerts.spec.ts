import { crossings, isDisabled, settingsProblems, stateAfter, type BalanceAlertSettings, type BalanceAlertState } from './balance-alerts.js';

const s = (low: bigint, high: bigint | null = null, hysteresis = 0n): BalanceAlertSettings => ({ low, high, hysteresis });
const kinds = (state: BalanceAlertState, available: bigint, st: BalanceAlertSettings) => crossings(state, available, st).map((c) => c.kind);

describe('balance alert crossings', () => {
  const st = s(1_000n, 10_000n, 100n);

  it('enters LOW below low, not at low', () => {
    expect(crossings('NORMAL', 999n, st)).toEqual([{ kind: 'LOW', state: 'LOW', threshold: 1_000n }]);
    expect(kinds('NORMAL', 1_000n, st)).toEqual([]);
  });

  it('stays LOW until low + hysteresis, then recovers once', () => {
    expect(kinds('LOW', 500n, st)).toEqual([]);
    expect(kinds('LOW', 1_099n, st)).toEqual([]);
    expect(crossings('LOW', 1_100n, st)).toEqual([{ kind: 'RECOVERED', state: 'NORMAL', threshold: 1_000n }]);
  });

  it('enters HIGH above high, leaves it at high − hysteresis or less', () => {
    expect(kinds('NORMAL', 10_000n, st)).toEqual([]);
    expect(crossings('NORMAL', 10_001n, st)).toEqual([{ kind: 'HIGH', state: 'HIGH', threshold: 10_000n }]);
    expect(kinds('HIGH', 9_901n, st)).toEqual([]);
    expect(crossings('HIGH', 9_900n, st)).toEqual([{ kind: 'NORMAL', state: 'NORMAL', threshold: 10_000n }]);
  });

  it('a jump across both bands gives both crossings, in order', () => {
    expect(kinds('LOW', 50_000n, st)).toEqual(['RECOVERED', 'HIGH']);
    expect(kinds('HIGH', -5n, st)).toEqual(['NORMAL', 'LOW']);
    expect(stateAfter('LOW', crossings('LOW', 50_000n, st), st)).toBe('HIGH');
  });

  it('a state whose threshold is gone is left without an alert', () => {
    expect(kinds('LOW', 0n, s(0n, 10_000n))).toEqual([]);
    expect(stateAfter('LOW', [], s(0n, 10_000n))).toBe('NORMAL');
    expect(stateAfter('HIGH', [], s(1_000n))).toBe('NORMAL');
    expect(kinds('HIGH', 1n, s(1_000n))).toEqual(['LOW']);
  });

  it('each crossing alerts once along any walk of balances (hysteresis holds)', () => {
    // A deterministic pseudo-random walk: every alert alternates with its opposite, and the state after
    // each step is the one the balance's band and the previous state decide.
    let seed = 42;
    const rnd = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    let state: BalanceAlertState = 'NORMAL';
    let available = 5_000n;
    const seen: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      available += BigInt(Math.round(rnd() * 3_000));
      const cs = crossings(state, available, st);
      seen.push(...cs.map((c) => c.kind));
      state = stateAfter(state, cs, st);
      if (state === 'LOW') expect(available < 1_100n).toBe(true);
      if (state === 'HIGH') expect(available > 9_900n).toBe(true);
      if (available < 1_000n) expect(state).toBe('LOW');
      if (available > 10_000n) expect(state).toBe('HIGH');
    }
    const lows = seen.filter((k) => k === 'LOW' || k === 'RECOVERED');
    lows.forEach((k, i) => expect(k).toBe(i % 2 === 0 ? 'LOW' : 'RECOVERED'));
    const highs = seen.filter((k) => k === 'HIGH' || k === 'NORMAL');
    highs.forEach((k, i) => expect(k).toBe(i % 2 === 0 ? 'HIGH' : 'NORMAL'));
    expect(lows.length).toBeGreaterThan(2);
    expect(highs.length).toBeGreaterThan(2);
  });
});

describe('balance alert settings', () => {
  it('high must lie above low + hysteresis', () => {
    expect(settingsProblems(s(1_000n, 1_100n, 100n))).toEqual([['highThresholdCents', 'Debe ser mayor que lowThresholdCents + hysteresisCents.']]);
    expect(settingsProblems(s(1_000n, 1_101n, 100n))).toEqual([]);
    expect(settingsProblems(s(0n, 1n, 0n))).toEqual([]);
  });
  it('amounts stay within 0 and 2^53 − 1', () => {
    expect(settingsProblems(s(-1n)).map(([f]) => f)).toEqual(['lowThresholdCents']);
    expect(settingsProblems(s(1n, null, 2n ** 53n)).map(([f]) => f)).toEqual(['hysteresisCents']);
    expect(settingsProblems(s(1n, 2n ** 60n)).map(([f]) => f)).toEqual(['highThresholdCents']);
  });
  it('no low and no high is no alert', () => {
    expect(isDisabled(s(0n))).toBe(true);
    expect(isDisabled(s(0n, 5n))).toBe(false);
  });
});
