import { bogotaInstant, formatInstant, instantFromMicros, instantToDate } from '@wallet/platform';
import { bogotaCell, bogotaIso, csvCell, csvRow, pesos } from './csv-cells.js';

/** The exact conversions the shortcuts must equal (what csv-cells did before them). */
const exactIso = (i: string) => bogotaInstant(formatInstant(i));
const exactCell = (i: string) => new Date(instantToDate(i).getTime() - 5 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');

describe('csv cells', () => {
  it('writes an instant in Bogotá time exactly as the conversion through microseconds does, across hours, days, months and years', () => {
    const starts = [
      '2026-11-21T04:59:59.999999Z',
      '2026-01-01T00:00:00.000000Z',
      '2024-02-29T04:30:00.000001Z',
      '2026-03-01T05:00:00.000000Z',
      '1999-12-31T23:59:59.123456Z',
    ];
    for (const s of starts) {
      const start = BigInt(Date.parse(s)) * 1000n + BigInt(s.slice(23, 26));
      for (let k = 0; k < 3_000; k++) {
        // steps of a few seconds to an hour, in time order as statement lines come, and back again
        const us = start + BigInt(k) * (k % 7 === 0 ? 3_600_000_000n : 1_234_567n) * (k % 11 === 0 ? -1n : 1n);
        const i = instantFromMicros(us);
        expect(bogotaIso(i)).toBe(exactIso(i));
        expect(bogotaCell(i)).toBe(exactCell(i));
      }
    }
    expect(bogotaIso('2026-11-21T15:00:00.123456Z')).toBe('2026-11-21T10:00:00.123456-05:00');
    expect(bogotaCell('2026-11-21T03:07:09.123456Z')).toBe('2026-11-20 22:07:09');
    expect(bogotaIso(new Date('2026-11-21T15:00:00Z'))).toBe('2026-11-21T10:00:00.000000-05:00');
    expect(bogotaCell(new Date('2026-11-21T15:00:00Z'))).toBe('2026-11-21 10:00:00');
  });

  it('refuses what is not an instant, as before', () => {
    for (const bad of [
      '2026-02-30T10:00:00.000000Z',
      '2026-11-21T24:00:00.000000Z',
      '2026-11-21T10:60:00.000000Z',
      '2026-11-21T10:00:60.000000Z',
      '2026-11-21T10:00:00Z',
      'x',
    ]) {
      expect(() => bogotaIso(bad)).toThrow('not an instant');
      expect(() => bogotaCell(bad)).toThrow('not an instant');
    }
  });

  it('writes pesos with a decimal comma', () => {
    expect([0n, 5n, 99n, 100n, -5n, -100_655n, 123_456_789_012n, -(2n ** 70n)].map(pesos)).toEqual([
      '0,00',
      '0,05',
      '0,99',
      '1,00',
      '-0,05',
      '-1006,55',
      '1234567890,12',
      '-11805916207174113034,24',
    ]);
  });

  it('quotes every cell, doubles quotes, and defuses what a spreadsheet would run as a formula', () => {
    expect(['', 'a', 'say "hi"', '=SUM(A1)', '+57', '@x', '\tx', '\rx', '-x', '-5', '-5,5', '-1006,55', "'x", '1;2'].map(csvCell)).toEqual([
      '""',
      '"a"',
      '"say ""hi"""',
      `"'=SUM(A1)"`,
      `"'+57"`,
      `"'@x"`,
      `"'\tx"`,
      `"'\rx"`,
      `"'-x"`,
      `"'-5"`,
      `"'-5,5"`,
      '"-1006,55"',
      `"'x"`,
      '"1;2"',
    ]);
    expect(csvRow(['a', '=b', '-1,00'])).toBe(`"a";"'=b";"-1,00"\r\n`);
    expect(csvRow([])).toBe('\r\n');
  });
});
