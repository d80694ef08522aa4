import { ledgerV1, walletEventsV1 } from '@wallet/proto';
import { walletMoveOfEvent, walletMoveOfResult, walletMoveView } from './wallet-move.js';

// The exact text POST /wallets/moves answers and the wallet.moved webhook sends: field order and nulls are part of it.
describe('the move view', () => {
  const leg = (id: string, rail: ledgerV1.Rail, type: ledgerV1.MovementType, extra: Partial<ledgerV1.Movement> = {}) =>
    ledgerV1.Movement.fromPartial({
      id,
      rail,
      type,
      status: ledgerV1.MovementStatus.COMPLETED,
      amount: 150_000n,
      netAmount: 150_000n,
      createdAt: '2026-11-28T16:39:52.123456Z',
      completedAt: '2026-11-28T16:39:52.123456Z',
      walletMoveId: 'c0ffee00-0000-4000-8000-000000000001',
      ...extra,
    });
  const result = ledgerV1.MoveResult.fromPartial({
    moveId: 'c0ffee00-0000-4000-8000-000000000001',
    debit: leg('d0000000-0000-4000-8000-000000000002', ledgerV1.Rail.ACH, ledgerV1.MovementType.TRANSFER_OUT, {
      reference: 'fondeo-breb',
      details: { description: 'Fondeo del día' },
    }),
    credit: leg('c0000000-0000-4000-8000-000000000003', ledgerV1.Rail.BREB, ledgerV1.MovementType.TRANSFER_IN, { reference: 'fondeo-breb' }),
  });
  const golden =
    '{"id":"c0ffee00-0000-4000-8000-000000000001","from":"ACH","to":"BREB","amountCents":150000,"status":"COMPLETED",' +
    '"reference":"fondeo-breb","description":"Fondeo del día","debitTransactionId":"d0000000-0000-4000-8000-000000000002",' +
    '"creditTransactionId":"c0000000-0000-4000-8000-000000000003","createdAt":"2026-11-28T16:39:52.123456Z"}';

  it("of the ledger's MoveResult", () => {
    expect(JSON.stringify(walletMoveView(walletMoveOfResult(result)))).toBe(golden);
  });

  it('of the wallet.moved event, as published (proto3 JSON): the same text, the microseconds kept', () => {
    const payload = walletEventsV1.WalletMoved.toJSON({
      eventId: 'e1',
      companyId: 'co_1',
      moveId: 'c0ffee00-0000-4000-8000-000000000001',
      fromRail: ledgerV1.Rail.ACH,
      toRail: ledgerV1.Rail.BREB,
      amountCents: 150_000n,
      reference: 'fondeo-breb',
      description: 'Fondeo del día',
      debitMovementId: 'd0000000-0000-4000-8000-000000000002',
      creditMovementId: 'c0000000-0000-4000-8000-000000000003',
      occurredAt: new Date('2026-11-28T16:39:52.123Z'),
    }) as Record<string, unknown>;
    const withMicros = { ...payload, occurredAt: '2026-11-28T16:39:52.123456Z' };
    const e = walletEventsV1.WalletMoved.fromJSON(withMicros);
    expect(JSON.stringify(walletMoveView(walletMoveOfEvent(e, withMicros.occurredAt)))).toBe(golden);
    // Without the text (or unreadable), the decoded Timestamp: milliseconds.
    expect(walletMoveView(walletMoveOfEvent(e)).createdAt).toBe('2026-11-28T16:39:52.123000Z');
  });

  it('absent texts are null; a leg off the two wallets is a bug, not an answer', () => {
    const bare = ledgerV1.MoveResult.fromPartial({
      ...result,
      debit: { ...result.debit!, reference: undefined, details: undefined },
    });
    expect(walletMoveView(walletMoveOfResult(bare))).toMatchObject({ reference: null, description: null });
    const pse = ledgerV1.MoveResult.fromPartial({ ...result, credit: { ...result.credit!, rail: ledgerV1.Rail.PSE } });
    expect(() => walletMoveView(walletMoveOfResult(pse))).toThrow(/BREB or ACH/);
    expect(() => walletMoveOfResult({ moveId: 'm', replayed: false })).toThrow(/two legs/);
  });
});
