import { deadEnds, reachableFrom, targetsOf, undeclaredActors } from '@wallet/platform';
import {
  BATCH_ACTORS,
  BATCH_ENTRIES,
  BATCH_EVENTS,
  BATCH_FINAL_STATES,
  BATCH_MACHINE,
  BATCH_STATES,
  batchExitsOf,
  finalBatchState,
  publicBatchState,
  type BatchState,
} from './batch.js';

const EXECUTED: readonly BatchState[] = ['FUNDING', 'AWAITING_APPROVAL', 'EXECUTING'];

describe('the batch saga table', () => {
  it('every state is reachable from the states a batch is created in', () => {
    expect(
      reachableFrom(
        BATCH_EVENTS,
        BATCH_MACHINE,
        BATCH_ENTRIES.map((e) => e.to),
      ),
    ).toEqual([...BATCH_STATES].sort());
  });

  it('the final states are exactly the ones no event leaves; every live state has a way out the sweeper takes', () => {
    expect(deadEnds(BATCH_EVENTS, BATCH_MACHINE, BATCH_STATES).sort()).toEqual([...BATCH_FINAL_STATES].sort());
    for (const s of BATCH_STATES.filter((x) => !BATCH_FINAL_STATES.includes(x))) {
      const bySweeper = batchExitsOf(s).filter((e) => BATCH_MACHINE[e].by.includes('sweeper'));
      expect({ s, bySweeper: bySweeper.length > 0 }).toEqual({ s, bySweeper: true });
    }
  });

  it('every event names only declared actors, at least one', () => {
    expect(undeclaredActors(BATCH_EVENTS, BATCH_MACHINE, BATCH_ACTORS)).toEqual([]);
    for (const e of BATCH_EVENTS) expect({ e, actors: BATCH_MACHINE[e].by.length > 0 }).toEqual({ e, actors: true });
    // Only a signer's decision approves; a request or a sweeper never does.
    expect(BATCH_MACHINE.approved.by).toEqual(['approval']);
  });

  it('no event leads back to where it leaves from, and every target is a state of the table', () => {
    for (const e of BATCH_EVENTS) {
      for (const to of targetsOf(BATCH_MACHINE[e])) {
        expect(BATCH_STATES).toContain(to);
        expect({ e, to, loops: BATCH_MACHINE[e].from.includes(to) }).toEqual({ e, to, loops: false });
      }
    }
  });

  it('batch.completed is written exactly by the moves that close an executed batch', () => {
    for (const e of BATCH_EVENTS) {
      const t = BATCH_MACHINE[e];
      const closesExecuted = t.from.every((f) => EXECUTED.includes(f)) && targetsOf(t).every((to) => BATCH_FINAL_STATES.includes(to));
      expect({ e, emits: t.emits === 'batch.completed' }).toEqual({ e, emits: closesExecuted });
    }
  });

  it("FUNDING (the ReserveBatch) is entered only by execute and left only by the reserve's outcomes", () => {
    expect(BATCH_EVENTS.filter((e) => targetsOf(BATCH_MACHINE[e]).includes('FUNDING'))).toEqual(['execute']);
    expect(batchExitsOf('FUNDING').sort()).toEqual(['awaiting_approval', 'funded', 'funding_refused', 'nothing_to_fund']);
    // A refused reserve holds nothing: the batch may be executed again.
    expect(BATCH_MACHINE.funding_refused.to).toEqual(['VALIDATED']);
  });

  it('every outcome of an executed batch is a target of `finished`', () => {
    const outcomes = new Set([
      finalBatchState([{ status: 'COMPLETED', count: 2 }]),
      finalBatchState([
        { status: 'COMPLETED', count: 1 },
        { status: 'FAILED', count: 1 },
      ]),
      finalBatchState([{ status: 'FAILED', count: 1 }]),
      finalBatchState([{ status: 'EXPIRED', count: 1 }]),
      finalBatchState([{ status: 'REJECTED', count: 1 }]),
    ]);
    expect([...outcomes].sort()).toEqual([...BATCH_MACHINE.finished.to].sort());
  });

  it('users never see FUNDING', () => {
    for (const s of BATCH_STATES) expect(publicBatchState(s)).not.toBe('FUNDING');
    expect(publicBatchState('FUNDING')).toBe('EXECUTING');
  });
});
