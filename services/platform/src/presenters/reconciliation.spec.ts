import type { reconciliationV1 } from '@wallet/proto';
import { reconciliationBreakView, reconciliationRunView } from './reconciliation.js';

// The admin API and the operators' webhooks answer these same texts (docs/webhooks.md "Operators' webhooks").
describe('reconciliation views', () => {
  it('a run: cents as decimal strings, counts as numbers, absent instants as null', () => {
    const r = {
      id: 'rec_1',
      rail: 'breb',
      date: '2026-11-23',
      trigger: 'SCHEDULE',
      status: 'RECONCILED',
      requestedBy: 'scheduler',
      startedAt: new Date('2026-11-24T11:00:00Z'),
      reportLines: 3n,
      reportAmountCents: 150_000n,
      reportFeeCents: 0n,
      reportNetCents: 150_000n,
      oursCount: 3n,
      oursAmountCents: 148_000n,
      oursNetCents: 148_000n,
      matchedCount: 2n,
      matchedAmountCents: 100_000n,
      breaksTotal: 1n,
      breaksOpened: 1n,
      breaksByKind: { amount_mismatch: 1n },
    } as unknown as reconciliationV1.Run;
    expect(JSON.stringify(reconciliationRunView(r))).toBe(
      '{"id":"rec_1","rail":"breb","date":"2026-11-23","trigger":"SCHEDULE","status":"RECONCILED","requestedBy":"scheduler",' +
        '"startedAt":"2026-11-24T11:00:00.000000Z","finishedAt":null,"coversUntil":null,"rejectReason":null,"detail":null,' +
        '"report":{"lines":3,"amountCents":"150000","feeCents":"0","netCents":"150000"},"ours":{"count":3,"amountCents":"148000","netCents":"148000"},' +
        '"matched":{"count":2,"amountCents":"100000"},"breaks":{"total":1,"opened":1,"byKind":{"amount_mismatch":1}}}',
    );
  });

  it('a break: its recorded sides as objects (anything else reads as {}), the correction it made', () => {
    const b = {
      key: 'breb:2026-11-23:amount_mismatch:tr-1',
      kind: 'amount_mismatch',
      rail: 'breb',
      date: '2026-11-23',
      ourId: 'tr-1',
      oursJson: '{"amountCents":"48000"}',
      theirsJson: '[1]',
      status: 'RESOLVED',
      runId: 'rec_1',
      lastSeenRunId: 'rec_2',
      openedAt: new Date('2026-11-24T11:00:04Z'),
      resolvedAt: new Date('2026-11-25T09:00:00Z'),
      resolution: 'accept_provider',
      exceptionId: 'exc_1',
      differenceCents: -2_000n,
      movement: 'breb:our:tr-1',
      adjustmentState: 'POSTED',
    } as unknown as reconciliationV1.Break;
    expect(reconciliationBreakView(b)).toEqual({
      key: 'breb:2026-11-23:amount_mismatch:tr-1',
      kind: 'amount_mismatch',
      rail: 'breb',
      date: '2026-11-23',
      ourId: 'tr-1',
      providerId: null,
      ours: { amountCents: '48000' },
      theirs: {},
      status: 'RESOLVED',
      runId: 'rec_1',
      lastSeenRunId: 'rec_2',
      openedAt: '2026-11-24T11:00:04.000000Z',
      resolvedAt: '2026-11-25T09:00:00.000000Z',
      resolution: 'accept_provider',
      exceptionId: 'exc_1',
      differenceCents: '-2000',
      movement: 'breb:our:tr-1',
      adjustmentState: 'POSTED',
      linkedCase: null,
    });
  });
});
