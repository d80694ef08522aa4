import { reachableFrom, undeclaredActors } from '@wallet/platform';
import { COUNTERPARTY_EVENTS, COUNTERPARTY_MACHINE, counterpartyExitsOf } from './counterparty-machine.js';
import { COUNTERPARTY_STATES, directoryVerdict, validateCounterpartyChange, validateNewCounterparty, type CounterpartyRecord } from './counterparty.js';

describe('the counterparty verification table', () => {
  it('every status is reachable from UNVERIFIED, and every status has a way out (a change re-verifies)', () => {
    expect(reachableFrom(COUNTERPARTY_EVENTS, COUNTERPARTY_MACHINE, ['UNVERIFIED'])).toEqual([...COUNTERPARTY_STATES].sort());
    for (const s of COUNTERPARTY_STATES) expect({ s, exits: counterpartyExitsOf(s).length > 0 }).toEqual({ s, exits: true });
  });

  it('an identity change leads every status to PENDING with a new attempt', () => {
    const t = COUNTERPARTY_MACHINE.identity_changed;
    expect([...t.from].sort()).toEqual([...COUNTERPARTY_STATES].sort());
    expect(t).toMatchObject({ to: 'PENDING', newAttempt: true, by: ['request'] });
  });

  it('verify again only from a decided (or never started) status: PENDING is in progress', () => {
    expect([...COUNTERPARTY_MACHINE.verify.from].sort()).toEqual(['FAILED', 'UNVERIFIED', 'VERIFIED']);
  });

  it('only a decision leaves PENDING for VERIFIED or FAILED; each writes its event; the request never decides', () => {
    const decisions = COUNTERPARTY_EVENTS.filter((e) => COUNTERPARTY_MACHINE[e].to === 'VERIFIED' || COUNTERPARTY_MACHINE[e].to === 'FAILED');
    expect(decisions.sort()).toEqual(['verification_failed', 'verified']);
    for (const e of decisions) {
      expect(COUNTERPARTY_MACHINE[e].from).toEqual(['PENDING']);
      expect(COUNTERPARTY_MACHINE[e].by).not.toContain('request');
      expect(COUNTERPARTY_MACHINE[e].emits).toBe(e === 'verified' ? 'counterparty.verified' : 'counterparty.verification_failed');
      expect(COUNTERPARTY_MACHINE[e].newAttempt).toBeUndefined();
    }
    expect(undeclaredActors(COUNTERPARTY_EVENTS, COUNTERPARTY_MACHINE, ['request', 'directory', 'rail', 'sweeper'])).toEqual([]);
  });

  it('every event that leads to PENDING starts a new attempt (so a late answer to the previous one cannot apply)', () => {
    for (const e of COUNTERPARTY_EVENTS)
      expect({ e, fresh: COUNTERPARTY_MACHINE[e].to === 'PENDING' }).toEqual({ e, fresh: COUNTERPARTY_MACHINE[e].newAttempt === true });
  });
});

describe('counterparty input', () => {
  it('lists every problem at once and deduplicates tags', () => {
    expect(() => validateNewCounterparty({ name: '', tags: ['A'] })).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    const ok = validateNewCounterparty({
      name: ' Uno ',
      brebKey: { type: 'AUTO', value: '3001234567' },
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderName: 'Ana',
      tags: ['a', 'b', 'a'],
    });
    expect(ok).toMatchObject({ name: 'Uno', rail: 'BREB', destination: { kind: 'BREB', keyType: 'PHONE' }, tags: ['a', 'b'] });
  });

  it('a change of tags or name keeps the identity; a new holder is a new identity', () => {
    const c = {
      rail: 'BREB',
      destination: { kind: 'BREB', keyType: 'PHONE', keyValue: '3001234567' },
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderName: 'Ana',
      tags: [],
    } as unknown as CounterpartyRecord;
    expect(validateCounterpartyChange(c, { replaceTags: true, tags: ['x'] })).toEqual({ name: null, identity: null, tags: ['x'] });
    expect(validateCounterpartyChange(c, { replaceTags: false, holderName: 'Ana' }).identity).toBeNull();
    expect(validateCounterpartyChange(c, { replaceTags: false, holderName: 'Beto' }).identity).toMatchObject({ holderName: 'Beto' });
  });

  it("judges the directory's answer with the send's rules", () => {
    const c = { holderName: 'josé  pérez', documentNumber: '1.020.304.050' };
    expect(directoryVerdict(c, { status: 'active', fullName: 'JOSE PEREZ', idValue: '1020304050' })).toEqual({ verified: true });
    expect(directoryVerdict(c, { status: 'active', fullName: 'JUAN PEREZ', idValue: '1020304050' })).toEqual({ verified: false, code: 'NAME_MISMATCH' });
    expect(directoryVerdict(c, { status: 'active', fullName: 'JOSE PEREZ', idValue: '1' })).toEqual({ verified: false, code: 'DOCUMENT_MISMATCH' });
    expect(directoryVerdict(c, { status: 'not_found' })).toEqual({ verified: false, code: 'KEY_NOT_FOUND' });
    expect(directoryVerdict(c, { status: 'inactive', fullName: 'JOSE PEREZ', idValue: '1020304050' })).toEqual({ verified: false, code: 'KEY_INACTIVE' });
  });
});
