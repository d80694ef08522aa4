import {
  bogotaInstant,
  compareInstants,
  formatInstant,
  instantFromDate,
  instantFromMicros,
  instantMicros,
  instantToDate,
  isInstant,
  parseInstant,
  parseInstantOrBogotaDate,
} from './instant.js';

describe('instants at microsecond precision', () => {
  it('parses RFC 3339 with an offset to UTC with six fraction digits, exactly', () => {
    expect(parseInstant('2026-11-28T16:39:52.123456Z')).toBe('2026-11-28T16:39:52.123456Z');
    expect(parseInstant('2026-11-28T11:39:52.123456-05:00')).toBe('2026-11-28T16:39:52.123456Z');
    expect(parseInstant('2026-11-28T16:39:52.1Z')).toBe('2026-11-28T16:39:52.100000Z');
    expect(parseInstant('2026-11-28T16:39:52Z')).toBe('2026-11-28T16:39:52.000000Z');
    expect(parseInstant('2026-11-28T16:39Z')).toBe('2026-11-28T16:39:00.000000Z');
    expect(parseInstant('2026-11-01T00:30:00+01:00')).toBe('2026-10-31T23:30:00.000000Z');
  });

  it('truncates digits past the sixth (never rounds a bound past the instant it names)', () => {
    expect(parseInstant('2026-11-28T16:39:52.123456999Z')).toBe('2026-11-28T16:39:52.123456Z');
    expect(parseInstant('2026-12-31T23:59:59.9999999Z')).toBe('2026-12-31T23:59:59.999999Z');
  });

  it('refuses what is not an instant with its offset', () => {
    for (const bad of [
      '2026-11-28',
      '2026-11-28T16:39:52',
      '2026-11-28T16:39:52.1234567890Z',
      '2026-02-30T00:00:00Z',
      '2026-11-28T24:00:00Z',
      '2026-11-28T16:39:60Z',
      '2026-11-28T16:39:52+25:00',
      '2026-11-28 16:39:52Z',
      '',
      'now',
    ]) {
      expect(parseInstant(bad)).toBeNull();
    }
  });

  it('reads a bare date as 00:00 in Bogotá', () => {
    expect(parseInstantOrBogotaDate('2026-11-01')).toBe('2026-11-01T05:00:00.000000Z');
    expect(parseInstantOrBogotaDate('2026-02-30')).toBeNull();
    expect(parseInstantOrBogotaDate('2026-11-01T00:00:00.5Z')).toBe('2026-11-01T00:00:00.500000Z');
  });

  it('round-trips through microseconds, orders and converts', () => {
    const i = '2026-11-28T16:39:52.123456Z';
    expect(instantMicros(i)).toBe(1795883992123456n);
    expect(instantFromMicros(instantMicros(i))).toBe(i);
    expect(instantFromMicros(-1n)).toBe('1969-12-31T23:59:59.999999Z');
    expect(compareInstants(i, '2026-11-28T16:39:52.123457Z')).toBe(-1);
    expect(compareInstants(i, i)).toBe(0);
    expect(instantToDate(i).toISOString()).toBe('2026-11-28T16:39:52.123Z');
    expect(instantFromDate(new Date('2026-11-28T16:39:52.123Z'))).toBe('2026-11-28T16:39:52.123000Z');
    expect(formatInstant(new Date('2026-11-28T16:39:52.123Z'))).toBe('2026-11-28T16:39:52.123000Z');
    expect(formatInstant(i)).toBe(i);
    expect(bogotaInstant(i)).toBe('2026-11-28T11:39:52.123456-05:00');
    expect(isInstant(i)).toBe(true);
    expect(isInstant('2026-11-28T16:39:52.123Z')).toBe(false);
  });
});
