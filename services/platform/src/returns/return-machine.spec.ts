import { deadEnds, reachableFrom } from '../state-machine/state-table.js';
import { FINAL_RETURN_STATES, LIVE_RETURN_STATES, RETURN_EVENTS, RETURN_MACHINE, RETURN_MONEY, RETURN_STATES, publicReturnStatus } from './return-machine.js';

describe('the return machine', () => {
  it('reaches every state from RESERVING, and only the final states are dead ends', () => {
    expect(reachableFrom(RETURN_EVENTS, RETURN_MACHINE, ['RESERVING'])).toEqual([...RETURN_STATES].sort());
    expect(deadEnds(RETURN_EVENTS, RETURN_MACHINE, RETURN_STATES).sort()).toEqual([...FINAL_RETURN_STATES].sort());
  });

  it('owes a money step in each live state, and an event that moves money leads into it', () => {
    expect(Object.keys(RETURN_MONEY).sort()).toEqual([...LIVE_RETURN_STATES].sort());
    for (const e of RETURN_EVENTS) {
      const t = RETURN_MACHINE[e];
      if (t.money) expect(RETURN_MONEY[t.to as keyof typeof RETURN_MONEY]).toBe(t.money);
    }
  });

  it('a compensation (the release) is entered only from SENDING, after the network refused', () => {
    const intoReleasing = RETURN_EVENTS.filter((e) => RETURN_MACHINE[e].to === 'RELEASING');
    expect(intoReleasing).toEqual(['send_refused']);
    expect(RETURN_MACHINE.send_refused.from).toEqual(['SENDING']);
  });

  it('shows PENDING while money is owed', () => {
    expect(RETURN_STATES.map(publicReturnStatus)).toEqual(['PENDING', 'PENDING', 'PENDING', 'RETURNED', 'FAILED']);
  });
});
