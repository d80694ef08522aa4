import { PRENOTE_REASONS, decidePrenote, defaultPrenoteOutcome, prenoteCallbackKey, prenoteDraw } from './prenotes.js';

describe('ACH prenote rules', () => {
  it('draws the first 4 bytes of sha256(prenoteId) / 2^32', () => {
    // sha256("abc") = ba7816bf… (FIPS 180-2 test vector): 0xba7816bf / 2^32.
    expect(prenoteDraw('abc')).toBe(0xba7816bf / 2 ** 32);
    expect(prenoteDraw('pn-1')).toBe(0x00016756 / 2 ** 32);
    expect(prenoteDraw('pn-2')).toBe(0xe2cdb401 / 2 ** 32);
  });

  it('applies the default rules without a behaviour: 0000000000 → R03, …17 → R17, else accepted', () => {
    expect(defaultPrenoteOutcome('0000000000')).toEqual({ status: 'REJECTED', reasonCode: 'R03' });
    expect(defaultPrenoteOutcome('12345617')).toEqual({ status: 'REJECTED', reasonCode: 'R17' });
    expect(defaultPrenoteOutcome('1712345670')).toEqual({ status: 'ACCEPTED', reasonCode: null });
    expect(defaultPrenoteOutcome('00000000000')).toEqual({ status: 'ACCEPTED', reasonCode: null });
    expect(decidePrenote({ prenoteId: 'x', accountNumber: '0000000000' }, undefined, 2000)).toEqual({
      delayMs: 2000,
      outcome: { status: 'REJECTED', reasonCode: 'R03' },
    });
  });

  it('with a behaviour, rejects exactly when the draw is below the rate, with its code and delay, whatever the account', () => {
    const b = (rejectionRate: number) => ({ delayMs: 42, rejectionRate, reasonCode: 'R16' as const });
    const p = (prenoteId: string) => ({ prenoteId, accountNumber: '0000000000' });
    expect(decidePrenote(p('pn-2'), b(0), 2000)).toEqual({ delayMs: 42, outcome: { status: 'ACCEPTED', reasonCode: null } });
    expect(decidePrenote(p('pn-2'), b(1), 2000)).toEqual({ delayMs: 42, outcome: { status: 'REJECTED', reasonCode: 'R16' } });
    expect(decidePrenote(p('pn-1'), b(0.0001), 0).outcome.status).toBe('REJECTED'); // draw 0.0000214
    expect(decidePrenote(p('pn-2'), b(0.88), 0).outcome.status).toBe('ACCEPTED'); // draw 0.88595
    expect(decidePrenote(p('pn-2'), b(0.886), 0).outcome.status).toBe('REJECTED');
  });

  it('names every code in Spanish and keys callbacks apart from transaction ids', () => {
    expect(Object.keys(PRENOTE_REASONS)).toEqual(['R02', 'R03', 'R04', 'R16', 'R17']);
    expect(prenoteCallbackKey('tx-1')).toBe('ach-prenote/tx-1');
    expect(/^[A-Za-z0-9._:-]+$/.test(prenoteCallbackKey('tx-1'))).toBe(false);
  });
});
