import { deadEnds, reachableFrom } from '@wallet/platform';
import { COBRO_EVENTS, COBRO_MACHINE, COBRO_STATES, exitsOf } from './cobro-machine.js';
import { OPEN_STATES } from './cobro.js';

describe('the cobro state table', () => {
  it('every state is reachable from CREATING; the final states have no way out', () => {
    expect(reachableFrom(COBRO_EVENTS, COBRO_MACHINE, ['CREATING'])).toEqual([...COBRO_STATES].sort());
    expect(deadEnds(COBRO_EVENTS, COBRO_MACHINE, COBRO_STATES).sort()).toEqual(['ABANDONED', 'CANCELLED', 'EXPIRED']);
  });
  it('an open cobro is left by a payment, the expiry (the sweeper), a cancel (the company) or a reversal of a payment it counted, and by nothing else', () => {
    expect(exitsOf('OPEN').sort()).toEqual(['cancel', 'expire', 'paid', 'partially_paid']);
    expect(exitsOf('PARTIALLY_PAID').sort()).toEqual(['cancel', 'expire', 'paid', 'partially_paid', 'reversed_to_open', 'reversed_to_partial']);
    for (const s of OPEN_STATES) expect(exitsOf(s)).toEqual(expect.arrayContaining(['cancel', 'expire', 'paid', 'partially_paid']));
    expect(COBRO_MACHINE.expire.by).toEqual(['sweeper']);
    expect(COBRO_MACHINE.cancel.by).toEqual(['company']);
    expect(COBRO_MACHINE.paid.by).toEqual(['matcher', 'company']);
  });
  it('a PAID cobro is left only by a reversal of a payment it counted (the matcher), never by the expiry or a cancel', () => {
    expect(exitsOf('PAID').sort()).toEqual(['reversed_still_paid', 'reversed_to_expired', 'reversed_to_open', 'reversed_to_partial']);
    for (const e of ['reversed_to_open', 'reversed_to_partial', 'reversed_still_paid', 'reversed_to_expired'] as const) {
      expect(COBRO_MACHINE[e].by).toEqual(['matcher']);
      expect(COBRO_MACHINE[e].emits).toBe('payment_reversed');
    }
    expect(COBRO_MACHINE.reversed_to_expired.closesKey).toBe('now');
  });
  it('a close deletes the key after it is won; every move a client sees writes its event', () => {
    for (const e of ['expire', 'cancel'] as const) expect(COBRO_MACHINE[e].closesKey).toBe('now');
    expect(COBRO_MACHINE.paid.closesKey).toBe('at_expiry');
    for (const e of COBRO_EVENTS) if (e !== 'abandon') expect(COBRO_MACHINE[e].emits).toBeDefined();
  });
});
