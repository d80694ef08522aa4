import { amlCandidates, normalizeDocument, normalizeName, sameHolderName, sendAmlCandidates } from './names.js';

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

describe('sendAmlCandidates (one screening for a single send and a batch line)', () => {
  it('screens the company NIT and the document as written, with and without a NIT check digit', () => {
    expect([...new Set(sendAmlCandidates('800111222-3', '900123456-7'))].sort()).toEqual(['800111222', '8001112223', '900123456', '9001234567'].sort());
    // A normalised copy loses the NIT without its check digit: never screen on it instead of the raw document.
    expect(sendAmlCandidates('800111222-3', '9001234567')).not.toContain('900123456');
  });
});
