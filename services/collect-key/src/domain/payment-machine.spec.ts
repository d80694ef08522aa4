import { reachableFrom } from '@wallet/platform';
import {
  EXCEPTION_ACTIONS,
  EXCEPTION_KINDS,
  FINAL_STATES,
  INITIAL_STATES,
  MONEY_STATES,
  PAYMENT_EVENTS,
  PAYMENT_MACHINE,
  PAYMENT_STATES,
  exitsOf,
} from './payment-machine.js';

describe('the inbound payment table', () => {
  it('money moves only in a money state: every state that owes a step is left only by its closing event or its refusal', () => {
    for (const [state, owed] of Object.entries(MONEY_STATES)) {
      const exits = exitsOf(state as never);
      expect(exits).toContain(owed!.closes);
      for (const e of exits) expect([owed!.closes, 'credit_refused', 'assign_refused', 'return_refused']).toContain(e);
    }
    // The payment is recorded in a money state; nothing else enters one but a person's decision (an operator, the company).
    for (const s of INITIAL_STATES) expect(MONEY_STATES[s]).toBeDefined();
    for (const e of PAYMENT_EVENTS) {
      if (MONEY_STATES[PAYMENT_MACHINE[e].to]) for (const by of PAYMENT_MACHINE[e].by) expect(['operator', 'company']).toContain(by);
    }
    // Credited at most once: only CREDITING and ASSIGNING credit the wallet, entered from states never credited.
    expect(PAYMENT_MACHINE.assign.from).toEqual(['UNASSIGNED']);
    expect(PAYMENT_MACHINE.retry_credit.from).toEqual(['CREDIT_REFUSED']);
    // A refused credit is held (no credit) before it can be returned: money never leaves a state that did not receive it.
    expect(PAYMENT_MACHINE.hold_refused.money).toBe('hold');
  });

  it("settled states are final; CREDIT_REFUSED is left by an operator's retry, or by a credit the ledger accepted meanwhile", () => {
    for (const s of FINAL_STATES) expect(exitsOf(s)).toEqual([]);
    expect(exitsOf('UNASSIGNED')).toEqual(['assign', 'return']);
    expect(exitsOf('CREDIT_REFUSED')).toEqual(['credited', 'retry_credit', 'hold_refused']);
    expect(PAYMENT_MACHINE.retry_credit.by).toEqual(['operator']);
    expect(PAYMENT_MACHINE.hold_refused.by).toEqual(['operator']);
    // Only a ledger answer moves it to ASSIGNED: `credited` carries no money step of its own.
    expect(PAYMENT_MACHINE.credited.money).toBeUndefined();
    for (const s of PAYMENT_STATES) expect(PAYMENT_STATES).toContain(s);
  });

  it('every state is reachable from the states a payment is recorded in', () => {
    expect(reachableFrom(PAYMENT_EVENTS, PAYMENT_MACHINE, INITIAL_STATES)).toEqual([...PAYMENT_STATES].sort());
  });

  it('every exception kind admits a dismiss', () => {
    for (const k of EXCEPTION_KINDS) expect(EXCEPTION_ACTIONS[k]).toContain('dismiss');
  });
});
