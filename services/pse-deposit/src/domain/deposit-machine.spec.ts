import { RETURN_EXCEPTION_KIND, reachableFrom } from '@wallet/platform';
import {
  DEPOSIT_EVENTS,
  DEPOSIT_MACHINE,
  EXCEPTION_ACTIONS,
  EXCEPTION_KINDS,
  FINAL_STATES,
  LIVE_STATES,
  MONEY_STATES,
  OUTCOME_TABLE,
  PROVIDER_OUTCOMES,
  PSE_STATES,
  SETTLED_STATES,
  exitsOf,
  outcomeOf,
  type PseState,
} from './deposit-machine.js';
import { publicStatus, statesShownAs, DEPOSIT_STATUSES } from './deposit.js';

const at = (iso: string) => new Date(iso);
const EXP = at('2026-01-01T00:00:00Z');

describe('the PSE deposit saga table', () => {
  it('states are live, settled or final; every live state has a way out the sweeper takes; no final state has one', () => {
    expect([...LIVE_STATES, ...SETTLED_STATES, ...FINAL_STATES].sort()).toEqual([...PSE_STATES].sort());
    for (const s of LIVE_STATES) {
      const bySweeper = exitsOf(s).filter((e) => DEPOSIT_MACHINE[e].by.includes('sweeper'));
      expect({ s, bySweeper: bySweeper.length > 0 }).toEqual({ s, bySweeper: true });
    }
    for (const s of FINAL_STATES) expect({ s, exits: exitsOf(s) }).toEqual({ s, exits: [] });
    // A settled state rests: only a provider's outcome or an operator moves it, never the sweeper alone.
    for (const s of SETTLED_STATES) {
      for (const e of exitsOf(s)) expect({ s, e, sweeper: DEPOSIT_MACHINE[e].by.includes('sweeper') }).toEqual({ s, e, sweeper: false });
    }
  });

  it('every state is reachable from PENDING_CONFIRM', () => {
    expect(reachableFrom(DEPOSIT_EVENTS, DEPOSIT_MACHINE, ['PENDING_CONFIRM'])).toEqual([...PSE_STATES].sort());
  });

  it('every money step runs behind a won transition into its own state, and is closed only from there', () => {
    for (const e of DEPOSIT_EVENTS) {
      const t = DEPOSIT_MACHINE[e];
      if (!t.money) continue;
      const owed = MONEY_STATES[t.to];
      // The step belongs to the state the transition enters: it runs only once that state is won.
      expect({ e, step: owed?.step }).toEqual({ e, step: t.money });
      // A money state is left only by its closing events, which move no money themselves.
      expect({ e, leaves: exitsOf(t.to).sort() }).toEqual({ e, leaves: [...owed!.closes].sort() });
      for (const c of owed!.closes) expect({ c, money: DEPOSIT_MACHINE[c].money }).toEqual({ c, money: undefined });
    }
    for (const [state, owed] of Object.entries(MONEY_STATES)) {
      const entering = DEPOSIT_EVENTS.filter((e) => DEPOSIT_MACHINE[e].to === state);
      expect(entering.length).toBeGreaterThan(0);
      for (const e of entering) expect({ e, money: DEPOSIT_MACHINE[e].money }).toEqual({ e, money: owed!.step });
      // Only the state that owes it is a money state: no other state moves money.
      expect(LIVE_STATES).toContain(state);
    }
  });

  it('a deposit is credited at most once and debited back only after a credit, by construction', () => {
    const credited = new Set<PseState>(['CREDITING', 'ASSIGNED', 'REVERSING', 'REVERSED']);
    for (const e of DEPOSIT_EVENTS) {
      const t = DEPOSIT_MACHINE[e];
      // The credit is entered only from states that were never credited, and nothing leads back to them.
      if (t.money === 'credit') for (const f of t.from) expect({ e, f, credited: credited.has(f) }).toEqual({ e, f, credited: false });
      if (credited.has(t.to) === false) for (const f of t.from) expect({ e, f, backFromCredited: credited.has(f) }).toEqual({ e, f, backFromCredited: false });
      if (t.money === 'reverse') expect({ e, from: t.from }).toEqual({ e, from: ['ASSIGNED'] });
    }
  });

  it('each event is emitted by exactly the transitions that reach its status once', () => {
    const emitting = DEPOSIT_EVENTS.filter((e) => DEPOSIT_MACHINE[e].emits).map((e) => [DEPOSIT_MACHINE[e].emits, DEPOSIT_MACHINE[e].to]);
    expect(emitting.sort()).toEqual([
      ['expired', 'EXPIRED'],
      ['failed', 'FAILED'],
      ['paid', 'ASSIGNED'],
      ['reversed', 'REVERSED'],
    ]);
  });

  it('every provider outcome in every state is applied, a duplicate, a contradiction or asked again — and nothing is left out', () => {
    for (const o of PROVIDER_OUTCOMES) {
      for (const s of PSE_STATES) {
        const v = OUTCOME_TABLE[o][s];
        expect({ o, s, defined: v !== undefined }).toEqual({ o, s, defined: true });
        if ('apply' in v) {
          const t = DEPOSIT_MACHINE[v.apply];
          expect({ o, s, from: t.from.includes(s), provider: t.by.includes('provider') }).toEqual({ o, s, from: true, provider: true });
        }
      }
    }
    // Every transition the provider drives is reached from the outcome table.
    const applied = new Set(
      PROVIDER_OUTCOMES.flatMap((o) =>
        PSE_STATES.map((s) => OUTCOME_TABLE[o][s])
          .filter((v) => 'apply' in v)
          .map((v) => (v as { apply: string }).apply),
      ),
    );
    for (const e of DEPOSIT_EVENTS) {
      const t = DEPOSIT_MACHINE[e];
      const providerStarts = t.by.includes('provider') && !Object.values(MONEY_STATES).some((m) => m!.closes.includes(e)) && e !== 'expire';
      if (providerStarts) expect({ e, reached: applied.has(e) }).toEqual({ e, reached: true });
    }
    // A late PAID never credits; a PAID after FAILED never credits on its own.
    for (const s of PSE_STATES) expect('apply' in OUTCOME_TABLE.PAID_LATE[s]).toBe(false);
    expect(OUTCOME_TABLE.PAID.FAILED).toEqual({ exception: 'PAID_AFTER_FAILURE' });
  });

  it('every exception kind is opened somewhere and can be resolved; only payment contradictions may be credited', () => {
    const fromTable = new Set(
      PROVIDER_OUTCOMES.flatMap((o) => PSE_STATES.map((s) => OUTCOME_TABLE[o][s])).flatMap((v) =>
        'exception' in v ? [v.exception] : 'retry' in v && v.thenException ? [v.thenException] : [],
      ),
    );
    for (const k of EXCEPTION_KINDS) {
      // The ledger's refusals are opened by the saga's money step; RETURN_CLOSE_REFUSED by the shared return saga (a refund parked).
      expect({ k, opened: fromTable.has(k) || k === 'CREDIT_REFUSED' || k === 'REVERSAL_REFUSED' || k === RETURN_EXCEPTION_KIND }).toEqual({ k, opened: true });
      expect(EXCEPTION_ACTIONS[k].length).toBeGreaterThan(0);
      for (const a of EXCEPTION_ACTIONS[k]) expect(['credit', 'retry', 'dismiss']).toContain(a);
    }
    const crediting = EXCEPTION_KINDS.filter((k) => EXCEPTION_ACTIONS[k].includes('credit'));
    expect(crediting.sort()).toEqual(['PAID_AFTER_EXPIRY', 'PAID_AFTER_FAILURE']);
    expect([...DEPOSIT_MACHINE.operator_credit.from].sort()).toEqual(['EXPIRED', 'FAILED']);
  });

  it('guards: a PAID within expiresAt + grace credits (an expired link too); later it does not; FAILED and expiry split at expiresAt', () => {
    const g = (state: PseState, now: string, paidAt?: string) => ({
      state,
      expiresAt: EXP,
      now: at(now),
      paidGraceSeconds: 60,
      ...(paidAt ? { paidAt: at(paidAt) } : {}),
    });
    const paid = DEPOSIT_MACHINE.paid.guard!.holds;
    expect(paid(g('PENDING_CONFIRM', '2025-12-31T23:59:00Z', '2025-12-31T23:58:00Z'))).toBe(true);
    expect(paid(g('PENDING_CONFIRM', '2026-01-01T00:00:10Z', '2025-12-31T23:59:00Z'))).toBe(false); // expire first
    expect(paid(g('EXPIRED', '2026-01-01T00:10:00Z', '2026-01-01T00:00:59Z'))).toBe(true);
    expect(paid(g('EXPIRED', '2026-01-01T00:10:00Z', '2026-01-01T00:01:00Z'))).toBe(true);
    expect(paid(g('EXPIRED', '2026-01-01T00:10:00Z', '2026-01-01T00:01:00.001Z'))).toBe(false);
    expect(paid(g('EXPIRED', '2026-01-01T00:10:00Z'))).toBe(false); // no paidAt: never
    expect(DEPOSIT_MACHINE.expire.guard!.holds(g('PENDING_CONFIRM', '2025-12-31T23:59:59.999Z'))).toBe(false);
    expect(DEPOSIT_MACHINE.expire.guard!.holds(g('PENDING_CONFIRM', '2026-01-01T00:00:00Z'))).toBe(true);
    expect(DEPOSIT_MACHINE.failed.guard!.holds(g('PENDING_CONFIRM', '2026-01-01T00:00:00Z'))).toBe(false);
    expect(outcomeOf('PAID', EXP, at('2026-01-01T00:01:00Z'), 60)).toBe('PAID');
    expect(outcomeOf('PAID', EXP, at('2026-01-01T00:01:01Z'), 60)).toBe('PAID_LATE');
    expect(outcomeOf('REVERSED', EXP, at('2030-01-01T00:00:00Z'), 60)).toBe('REVERSED');
  });

  it('clients see EXPIRED from expiresAt (before the sweeper moves it), never a money state', () => {
    const before = at('2025-12-31T23:59:59Z');
    expect(publicStatus('PENDING_CONFIRM', EXP, before)).toBe('PENDING_CONFIRM');
    expect(publicStatus('PENDING_CONFIRM', EXP, EXP)).toBe('EXPIRED');
    expect(publicStatus('CREDITING', EXP, before)).toBe('PENDING_CONFIRM');
    expect(publicStatus('CREDITING', EXP, EXP)).toBe('EXPIRED');
    expect(publicStatus('REVERSING', EXP, EXP)).toBe('ASSIGNED');
    for (const s of PSE_STATES) expect(DEPOSIT_STATUSES).toContain(publicStatus(s, EXP, before));
    for (const s of PSE_STATES) expect(DEPOSIT_STATUSES).toContain(publicStatus(s, EXP, EXP));
    // The listing filter's narrowing covers every state that can show as a status.
    for (const status of DEPOSIT_STATUSES) {
      for (const s of PSE_STATES) {
        for (const now of [before, EXP]) if (publicStatus(s, EXP, now) === status) expect(statesShownAs(status)).toContain(s);
      }
    }
  });
});
