import { depositEventsV1, transferEventsV1 } from '@wallet/proto';
import { eventBody, mapSourceEvent, webhookEventId } from './event-types.js';

describe('internal events → public webhook events', () => {
  const now = new Date('2026-11-21T10:00:00.000Z');
  const transfer = (extra: Partial<transferEventsV1.TransferEvent> = {}) => transferEventsV1.TransferEvent.toJSON(transferEventsV1.TransferEvent.fromPartial({
    eventId: 'e1', transferId: 't1', companyId: 'c1', rail: 'RAIL_ACH' as never, status: 'MOVEMENT_STATUS_COMPLETED' as never,
    amount: 100_000n, totalFee: 300n, ivaAmount: 57n, netAmount: 100_000n, targetName: 'Ana', targetDocument: '1', createdAt: now, occurredAt: now, ...extra,
  }));

  it('maps a transfer event to the same type with a stable id and the API shape', () => {
    const [e, ...rest] = mapSourceEvent({ id: 'src-1', subject: 'transfer.completed', payload: transfer({ bankAccountNumberMasked: '****8901' }) });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({ type: 'transfer.completed', companyId: 'c1', resourceKey: 'transfer:t1', id: webhookEventId('src-1', 'transfer.completed'), createdAt: now });
    expect(e!.id).toBe(mapSourceEvent({ id: 'src-1', subject: 'transfer.completed', payload: transfer() })[0]!.id);
    expect(e!.data).toMatchObject({ id: 't1', status: 'COMPLETED', rail: 'ACH', amount: 100_000, totalFee: 300, ivaAmount: 57, currency: 'COP', bankAccountNumberMasked: '****8901', reference: null });
    expect(JSON.parse(eventBody(e!))).toEqual({ id: e!.id, type: 'transfer.completed', createdAt: '2026-11-21T10:00:00.000000Z', data: e!.data });
  });

  it('carries the approval of a multi-signature send', () => {
    const [e] = mapSourceEvent({ id: 'src-2', subject: 'transfer.awaiting_approval', payload: transfer({ status: 'MOVEMENT_STATUS_AWAITING_APPROVAL' as never, approvalId: 'ap1', approvalThreshold: 2, approvalExpiresAt: now } as never) });
    expect(e!.data).toMatchObject({ status: 'AWAITING_APPROVAL', approvalId: 'ap1', threshold: 2, expiresAt: '2026-11-21T10:00:00.000000Z' });
  });

  it('a rejected multi-signature send is also transfer.failed (its final state), with its own stable id', () => {
    const out = mapSourceEvent({ id: 'src-3', subject: 'transfer.rejected', payload: transfer({ status: 'MOVEMENT_STATUS_FAILED' as never, errorMessage: 'Rechazada', rejectedBy: 'a@b.co' }) });
    expect(out.map((e) => e.type)).toEqual(['transfer.rejected', 'transfer.failed']);
    expect(out[1]!.id).toBe(webhookEventId('src-3', 'transfer.failed'));
    expect(out[1]!.data).toMatchObject({ id: 't1', status: 'FAILED' });
  });

  it('gives nothing for internal-only subjects', () => {
    expect(mapSourceEvent({ id: 'x', subject: 'transfer.dispatched', payload: transfer() })).toEqual([]);
    expect(mapSourceEvent({ id: 'x', subject: 'collectkey.qr_issued', payload: {} })).toEqual([]);
    expect(mapSourceEvent({ id: 'x', subject: 'ledger.credited', payload: {} })).toEqual([]);
  });

  it('adds collect_key.payment_received to a Bre-B deposit to a key', () => {
    const payload = depositEventsV1.DepositEvent.toJSON(depositEventsV1.DepositEvent.fromPartial({
      eventId: 'd', companyId: 'c1', occurredAt: now,
      deposit: { id: 'dep_1', status: 'ASSIGNED', amountCents: 10n, source: 'BREB', brebKey: { id: 'bkey_1', externalId: 'x', name: 'n', value: '@v' }, createdAt: now },
    }));
    const out = mapSourceEvent({ id: 'src-3', subject: 'deposit.paid', payload });
    expect(out.map((e) => e.type)).toEqual(['deposit.paid', 'collect_key.payment_received']);
    expect(new Set(out.map((e) => e.id)).size).toBe(2);
    expect(out[1]!.data).toEqual(out[0]!.data);
    expect(out[0]!.data).toMatchObject({ id: 'dep_1', amountCents: '10', brebKey: { id: 'bkey_1', externalId: 'x', name: 'n', value: '@v' } });
  });

  it('throws on a payload without its ids (the dispatcher logs and drops it)', () => {
    expect(() => mapSourceEvent({ id: 'x', subject: 'transfer.completed', payload: { nonsense: true } })).toThrow();
  });
});
