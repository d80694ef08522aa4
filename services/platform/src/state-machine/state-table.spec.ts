import { deadEnds, exitsOf, reachableFrom, stateTableMermaid, targetsOf, undeclaredActors, type StateTransition } from './state-table.js';

type S = 'NEW' | 'WORKING' | 'DONE' | 'LOST' | 'ORPHAN';
type E = 'start' | 'finish' | 'drop';
const EVENTS: readonly E[] = ['start', 'finish', 'drop'];
const TABLE: Readonly<Record<E, StateTransition<S, 'user' | 'robot'> & { note?: string }>> = {
  start: { from: ['NEW'], to: 'WORKING', by: ['user'] },
  finish: { from: ['WORKING'], to: ['DONE', 'LOST'], by: ['robot'], note: 'picks' },
  drop: { from: ['NEW', 'WORKING'], to: 'LOST', by: ['user', 'robot'] },
};

describe('state tables', () => {
  it('reads exits, targets and dead ends', () => {
    expect(exitsOf(EVENTS, TABLE, 'WORKING')).toEqual(['finish', 'drop']);
    expect(exitsOf(EVENTS, TABLE, 'DONE')).toEqual([]);
    expect(targetsOf(TABLE.start)).toEqual(['WORKING']);
    expect(targetsOf(TABLE.finish)).toEqual(['DONE', 'LOST']);
    expect(deadEnds(EVENTS, TABLE, ['NEW', 'WORKING', 'DONE', 'LOST'])).toEqual(['DONE', 'LOST']);
  });

  it('finds the reachable states, following every target of an event', () => {
    expect(reachableFrom(EVENTS, TABLE, ['NEW'])).toEqual(['DONE', 'LOST', 'NEW', 'WORKING']);
    expect(reachableFrom(EVENTS, TABLE, ['ORPHAN'])).toEqual(['ORPHAN']);
  });

  it('names the actors a table uses but does not declare', () => {
    expect(undeclaredActors(EVENTS, TABLE, ['user', 'robot'])).toEqual([]);
    expect(undeclaredActors(EVENTS, TABLE, ['user'])).toEqual([
      { event: 'finish', actor: 'robot' },
      { event: 'drop', actor: 'robot' },
    ]);
  });

  it('draws the table as Mermaid: entries, one edge per (from, to), finals', () => {
    expect(
      stateTableMermaid({
        events: EVENTS,
        table: TABLE,
        entries: [{ to: 'NEW' }, { to: 'WORKING', label: 'imported' }],
        finals: ['DONE', 'LOST'],
        label: (e, t) => `${e}${t.note ? ` / ${t.note}` : ''}`,
      }),
    ).toBe(
      [
        'stateDiagram-v2',
        '  [*] --> NEW',
        '  [*] --> WORKING: imported',
        '  NEW --> WORKING: start',
        '  WORKING --> DONE: finish / picks',
        '  WORKING --> LOST: finish / picks',
        '  NEW --> LOST: drop',
        '  WORKING --> LOST: drop',
        '  DONE --> [*]',
        '  LOST --> [*]',
      ].join('\n'),
    );
  });
});
