import type { BatchMove, BatchRecord, BatchSummary } from '../domain/batch.js';
import type { BatchStore } from './batch-ports.js';
import { BatchSaga } from './batch-saga.js';
import type { BatchDeps } from './deps.js';

/** A batch saga over a store that records the moves it is handed (no database: the saga's own decisions). */
function sagaWith(answer: BatchRecord | undefined = undefined) {
  const moves: BatchMove[] = [];
  const events: string[] = [];
  let written = 0;
  const store = {
    transition: async (_b: unknown, move: BatchMove, _patch: unknown, evt: ((b: BatchRecord) => { subject: string }) | null) => {
      moves.push(move);
      if (evt && answer) events.push(evt(answer).subject);
      return answer;
    },
    insert: async () => 'OK' as const,
  } as unknown as BatchStore;
  const deps = {
    batches: store,
    now: () => new Date('2026-11-24T15:00:00Z'),
    newId: () => '00000000-0000-4000-8000-000000000001',
    traceparent: () => undefined,
    eventsWritten: () => {
      written += 1;
    },
    log: { info: () => undefined },
  } as unknown as BatchDeps;
  return { saga: new BatchSaga(deps), moves, events, written: () => written };
}

const batch = (state: BatchRecord['state']): BatchRecord => ({
  id: '00000000-0000-4000-8000-0000000000b1',
  companyId: 'co',
  apiKeyId: null,
  state,
  reference: null,
  description: null,
  mode: 'ALL',
  source: 'JSON',
  itemCount: 1,
  validCount: 1,
  invalidCount: 0,
  ivaApplicable: true,
  createdAt: new Date(0),
  expiresAt: new Date(1),
  executedAt: null,
  completedAt: null,
  cancelledAt: null,
  errorMessage: null,
});
const summary = (b: BatchRecord): BatchSummary => ({ ...b, approval: null, totals: [], byStatus: [], finishedCount: 0 });

describe('the batch saga (the one writer of batch states)', () => {
  it("hands the store the table's move: its from states and the one state it leads to", async () => {
    const { saga, moves } = sagaWith(batch('CANCELLED'));
    await saga.transition(batch('VALIDATED'), 'cancel', 'request', { patch: { cancelled: true } });
    expect(moves).toEqual([{ event: 'cancel', from: ['VALIDATED'], to: 'CANCELLED' }]);
  });

  it('refuses an actor the table does not name, and a state the event does not lead to, before touching the store', async () => {
    const { saga, moves } = sagaWith();
    await expect(saga.transition(batch('VALIDATED'), 'cancel', 'sweeper', { patch: {} })).rejects.toThrow('sweeper may not apply cancel');
    await expect(saga.transition(batch('AWAITING_APPROVAL'), 'approved', 'request', { patch: {} })).rejects.toThrow('request may not apply approved');
    await expect(
      saga.transition(batch('EXECUTING'), 'finished', 'sweeper', { to: 'CANCELLED', patch: {}, summary: summary(batch('EXECUTING')) }),
    ).rejects.toThrow('does not lead to CANCELLED');
    // `finished` leads to several states: the writer must name one.
    await expect(saga.transition(batch('EXECUTING'), 'finished', 'sweeper', { patch: {}, summary: summary(batch('EXECUTING')) })).rejects.toThrow(
      'does not lead to one state',
    );
    expect(moves).toEqual([]);
  });

  it('writes batch.completed exactly where the table says, and wakes the relay only when the move was won', async () => {
    const done = sagaWith(batch('COMPLETED'));
    await done.saga.transition(batch('EXECUTING'), 'finished', 'request', {
      to: 'COMPLETED',
      patch: { completed: true },
      summary: summary(batch('EXECUTING')),
    });
    expect(done.events).toEqual(['transfer.batch_completed']);
    expect(done.written()).toBe(1);
    await expect(done.saga.transition(batch('FUNDING'), 'nothing_to_fund', 'sweeper', { patch: {} })).rejects.toThrow("needs the batch's summary");

    const lost = sagaWith(undefined);
    await lost.saga.transition(batch('EXECUTING'), 'finished', 'sweeper', { to: 'FAILED', patch: {}, summary: summary(batch('EXECUTING')) });
    expect(lost.written()).toBe(0);
    // A move that writes no event never wakes the relay.
    const cancel = sagaWith(batch('CANCELLED'));
    await cancel.saga.transition(batch('VALIDATED'), 'cancel', 'request', { patch: {} });
    expect(cancel.written()).toBe(0);
  });

  it('creates a batch only in an entry state of the table', async () => {
    const { saga, written } = sagaWith();
    expect(await saga.create(batch('VALIDATED'), summary(batch('VALIDATED')), 'h', null, [])).toBe('OK');
    expect(await saga.create(batch('REJECTED'), summary(batch('REJECTED')), 'h', null, [])).toBe('OK');
    expect(written()).toBe(2);
    await expect(saga.create(batch('EXECUTING'), summary(batch('EXECUTING')), 'h', null, [])).rejects.toThrow('never created EXECUTING');
  });
});
