import { readBrebDepositEvent } from './breb-deposit.js';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const event = (over: Record<string, unknown> = {}, dep: Record<string, unknown> = {}) => ({
  eventId: 'e-1',
  companyId: 'co-1',
  occurredAt: '2026-11-21T09:00:01.000Z',
  ...over,
  deposit: {
    id: 'dep_aaaaaaaaaaaaaaaaaaaaaaaa',
    status: 'ASSIGNED',
    amountCents: '50000',
    feeAmountCents: '0',
    ivaAmountCents: '0',
    netAmountCents: '50000',
    currency: 'COP',
    source: 'BREB',
    brebKey: { id: 'ck_1', externalId: 'ext-1', name: 'Caja', value: '@acme' },
    payerName: 'Luis Gómez',
    payerDocument: 'CC 123456',
    payerBank: 'Nequi',
    providerTransferId: 'tr-1',
    providerConfirmedAt: '2026-11-21T09:00:00.000Z',
    createdAt: '2026-11-21T09:00:00.500Z',
    ...dep,
  },
});

describe('Bre-B deposit events', () => {
  it('reads a collect-key deposit (proto3 JSON, int64 as strings)', () => {
    const r = readBrebDepositEvent(event(), NOW);
    expect(r).toEqual({
      kind: 'upsert',
      deposit: {
        id: 'dep_aaaaaaaaaaaaaaaaaaaaaaaa',
        companyId: 'co-1',
        status: 'ASSIGNED',
        amount: 50_000n,
        fee: 0n,
        iva: 0n,
        net: 50_000n,
        currency: 'COP',
        brebKey: { id: 'ck_1', externalId: 'ext-1', name: 'Caja', value: '@acme' },
        payerName: 'Luis Gómez',
        payerDocument: 'CC 123456',
        payerBank: 'Nequi',
        providerTransferId: 'tr-1',
        providerConfirmedAt: new Date('2026-11-21T09:00:00.000Z'),
        createdAt: new Date('2026-11-21T09:00:00.500Z'),
        transactionId: null,
        cobroId: null,
        eventAt: new Date('2026-11-21T09:00:01.000Z'),
      },
    });
  });

  it("ignores this service's own PSE events quietly", () => {
    expect(readBrebDepositEvent(event({}, { source: 'PSE', status: 'PENDING_CONFIRM' }), NOW)).toMatchObject({ kind: 'ignore', level: 'debug' });
  });

  it('drops unusable events with a reason', () => {
    for (const [e, level] of [
      [{ companyId: 'co-1' }, 'error'],
      [event({ companyId: '' }), 'error'],
      [event({}, { id: 'nope' }), 'error'],
      [event({}, { status: 'PENDING_CONFIRM' }), 'warn'],
      [event({}, { netAmountCents: '49999' }), 'error'],
      [event({}, { amountCents: '0', netAmountCents: '0' }), 'error'],
    ] as const)
      expect(readBrebDepositEvent(e, NOW)).toMatchObject({ kind: 'ignore', level });
  });

  it('falls back: createdAt ← occurredAt ← now, no key → null, fees kept', () => {
    const r = readBrebDepositEvent(
      event(
        { occurredAt: undefined },
        {
          createdAt: undefined,
          brebKey: undefined,
          status: 'UNASSIGNED',
          feeAmountCents: '1000',
          ivaAmountCents: '190',
          netAmountCents: '48810',
        },
      ),
      NOW,
    );
    expect(r).toMatchObject({
      kind: 'upsert',
      deposit: { status: 'UNASSIGNED', brebKey: null, createdAt: NOW, eventAt: NOW, fee: 1_000n, iva: 190n, net: 48_810n },
    });
  });
});
