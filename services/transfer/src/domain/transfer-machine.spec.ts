import { reachableFrom } from '@wallet/platform';
import { BULK_EVENTS, CONTRADICTIONS, DUPLICATES, MONEY_STATES, TRANSFER_EVENTS, TRANSFER_MACHINE, exitsOf } from './transfer-machine.js';
import { FINAL_STATES, LIVE_STATES, TRANSFER_STATES } from './transfer.js';

describe('the send saga table', () => {
  it('every live state has a way out; no final state has one', () => {
    for (const s of LIVE_STATES) expect({ s, exits: exitsOf(s).length > 0 }).toEqual({ s, exits: true });
    for (const s of FINAL_STATES) expect({ s, exits: exitsOf(s) }).toEqual({ s, exits: [] });
    expect([...LIVE_STATES, ...FINAL_STATES].sort()).toEqual([...TRANSFER_STATES].sort());
  });

  it('every state is reachable from RECEIVED', () => {
    expect(reachableFrom(TRANSFER_EVENTS, TRANSFER_MACHINE, ['RECEIVED'])).toEqual([...TRANSFER_STATES].sort());
  });

  it('every money step runs behind a won transition into its own intermediate state, and is closed from there', () => {
    for (const e of TRANSFER_EVENTS) {
      const t = TRANSFER_MACHINE[e];
      if (!t.money) continue;
      const owed = MONEY_STATES[t.to];
      // The step belongs to the state the transition enters: it runs only once that state is won.
      expect({ e, step: owed?.step }).toEqual({ e, step: t.money });
      // An intermediate state is entered only by transitions that owe its step, and left only by its closing events.
      expect({ e, leaves: exitsOf(t.to).sort() }).toEqual({ e, leaves: [...owed!.closes].sort() });
    }
    for (const [state, owed] of Object.entries(MONEY_STATES)) {
      const entering = TRANSFER_EVENTS.filter((e) => TRANSFER_MACHINE[e].to === state);
      for (const e of entering) expect({ e, money: TRANSFER_MACHINE[e].money }).toEqual({ e, money: owed!.step });
    }
  });

  it('a compensation never starts from a state that moved money forward', () => {
    for (const e of TRANSFER_EVENTS) {
      const t = TRANSFER_MACHINE[e];
      if (t.money === 'release' || t.money === 'void-or-release') {
        for (const f of t.from) expect({ e, f }).not.toEqual({ e, f: expect.stringMatching(/^(COMPLETING|COMPLETED)$/) });
      }
    }
  });

  it('a provider outcome is a transition, a duplicate or a contradiction in every state a callback can find', () => {
    for (const e of ['rail_completed', 'rail_failed'] as const) {
      for (const s of TRANSFER_STATES) {
        if (s === 'RECEIVED') continue; // asked to retry: we have not recorded the reserve yet
        const applies = TRANSFER_MACHINE[e].from.includes(s) || ['RESERVED', 'EXECUTING'].includes(s); // dispatch implied first
        const dup = DUPLICATES[e]?.includes(s) ?? false;
        const contra = CONTRADICTIONS[e]?.in.includes(s) ?? false;
        expect({ e, s, cases: [applies, dup, contra].filter(Boolean).length }).toEqual({ e, s, cases: 1 });
      }
    }
  });
});

describe('the send saga table: bulk moves go through the one writer (EXAMPLES.md B2)', () => {
  it('every bulk event is a transition of the table that its bulk actors may apply singly too; only one that declares it owes a money step', () => {
    expect([...BULK_EVENTS].sort()).toEqual(['awaiting_approval', 'committed', 'dispatched', 'quorum', 'rail_completed', 'reserve_refused', 'reserved']);
    for (const e of BULK_EVENTS) {
      const t = TRANSFER_MACHINE[e];
      for (const a of t.bulk!.by) expect({ e, a, single: t.by.includes(a) }).toEqual({ e, a, single: true });
      // Into a money state only with the step run in bulk by its writer (a page of the rail's confirmations).
      const owes = t.bulk!.moneyStepInBulk === true;
      expect({ e, money: t.money !== undefined, intoMoneyState: MONEY_STATES[t.to] !== undefined }).toEqual({ e, money: owes, intoMoneyState: owes });
    }
    expect(BULK_EVENTS.filter((e) => TRANSFER_MACHINE[e].bulk!.moneyStepInBulk)).toEqual(['rail_completed']);
    // Its step's closing event is a bulk move of the same writer.
    expect(MONEY_STATES[TRANSFER_MACHINE.rail_completed.to]!.closes).toEqual(['committed']);
    expect(TRANSFER_MACHINE.committed.bulk!.by).toEqual(expect.arrayContaining([...TRANSFER_MACHINE.rail_completed.bulk!.by]));
  });

  it('only the acceptance of a batch line starts its dispatch clock', () => {
    expect(BULK_EVENTS.filter((e) => TRANSFER_MACHINE[e].bulk!.startsDispatchClock)).toEqual(['reserved']);
  });
});
