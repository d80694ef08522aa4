import { amlCandidates, normalizeDocument, normalizeName, sameHolderName } from './names.js';

describe('holder names and documents', () => {
  it('compares names ignoring accents, case and spacing', () => {
    expect(normalizeName('  José   Pérez\tÑúñez ')).toBe('JOSE PEREZ NUNEZ');
    expect(sameHolderName('MARIA JOSE PEREZ', 'María José  pérez')).toBe(true);
    expect(sameHolderName('MARIA JOSE PEREZ', 'MARIA JOSEFA PEREZ')).toBe(false);
    expect(sameHolderName('ANA PEREZ', 'ANA  PEREZ'.normalize('NFD'))).toBe(true);
  });

  it('normalizes documents to letters and digits; a NIT also matches without its check digit', () => {
    expect(normalizeDocument('900.123.456-7')).toBe('9001234567');
    expect(amlCandidates('900.123.456-7')).toEqual(['9001234567', '900123456']);
    expect(amlCandidates('1020304050')).toEqual(['1020304050']);
    expect(amlCandidates('')).toEqual([]);
  });
});
