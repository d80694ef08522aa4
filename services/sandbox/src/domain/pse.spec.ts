import { formatCop, isPseBank } from './pse.js';

describe('formatCop', () => {
  it('formats integer centavos as es-CO pesos', () => {
    expect(formatCop(123456789n)).toBe('$ 1.234.567,89');
    expect(formatCop(123456n)).toBe('$ 1.234,56');
    expect(formatCop(5n)).toBe('$ 0,05');
    expect(formatCop(100000n)).toBe('$ 1.000,00');
    expect(formatCop(99999999999999999n)).toBe('$ 999.999.999.999.999,99');
  });
  it('knows the PSE banks', () => {
    expect(isPseBank('Bancolombia')).toBe(true);
    expect(isPseBank('Banco Inexistente')).toBe(false);
  });
});
