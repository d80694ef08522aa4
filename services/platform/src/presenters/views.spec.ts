import type { collectKeyV1, depositV1, transferV1 } from '@wallet/proto';
import { collectKeyView } from './collect-key.js';
import { counterpartyView } from './counterparty.js';
import { depositView } from './deposit.js';

// The exact text the API answers and the webhooks send: field order and nulls are part of it.
describe('public views', () => {
  it('a deposit', () => {
    const d = {
      id: 'd1',
      status: 'ASSIGNED',
      amountCents: 500_000n,
      feeAmountCents: 1_000n,
      ivaAmountCents: 190n,
      netAmountCents: 498_810n,
      currency: '',
      source: 'BREB',
      brebKey: { id: 'k1', externalId: 'e1', name: 'Caja', value: '@caja' },
      payerName: 'Laura',
      providerConfirmedAt: new Date('2026-11-28T15:00:00Z'),
      createdAt: new Date('2026-11-28T14:59:00Z'),
    } as unknown as depositV1.Deposit;
    expect(JSON.stringify(depositView(d))).toBe(
      '{"id":"d1","status":"ASSIGNED","amountCents":"500000","feeAmountCents":"1000","ivaAmountCents":"190",' +
        '"netAmountCents":"498810","netCreditedCents":"498810","currency":"COP","source":"BREB","brebKey":{"id":"k1","externalId":"e1","name":"Caja","value":"@caja"},' +
        '"payerName":"Laura","payerFirstName":null,"payerLastName":null,"payerDocument":null,"payerBank":null,"payerEmail":null,"providerTransferId":null,' +
        `"providerConfirmedAt":${JSON.stringify(depositView(d).paidAt)},"paidAt":${JSON.stringify(depositView(d).paidAt)},"internalRef":null,"cobroId":null,"createdAt":${JSON.stringify(depositView(d).createdAt)}}`,
    );
    expect(depositView(d).paidAt).toEqual(expect.any(String));
  });
  it('a collect key', () => {
    const k = { id: 'k1', externalId: 'e1', name: 'Caja', keyType: 'ALPHANUM', keyValue: '@caja', state: 'ACTIVE' } as unknown as collectKeyV1.CollectKey;
    expect(JSON.stringify(collectKeyView(k))).toBe(
      '{"id":"k1","externalId":"e1","name":"Caja","key":{"type":"ALPHANUM","value":"@caja"},"state":"ACTIVE","createdAt":null,"deletedAt":null}',
    );
  });
  it('a counterparty: the account number never more than its last four digits, absent fields as null', () => {
    const c = {
      id: 'cpty_aaaaaaaaaaaaaaaaaaaaaaaa',
      name: 'Proveedor',
      rail: 'ACH',
      bankAccount: { bankId: 7, bankName: 'Banco de Bogotá', accountTypeId: 20, accountNumberMasked: '12345678901234' },
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderName: 'Ana Pérez',
      tags: ['nomina'],
      verification: { status: 'FAILED', method: 'PRENOTE', reasonCode: 'R17', reason: 'No corresponde', requestedAt: new Date('2026-11-28T15:00:00Z') },
      createdAt: new Date('2026-11-28T14:59:00Z'),
      updatedAt: new Date('2026-11-28T15:00:00Z'),
      version: 3,
    } as unknown as transferV1.Counterparty;
    const v = counterpartyView(c);
    expect(JSON.stringify(v)).toBe(
      '{"id":"cpty_aaaaaaaaaaaaaaaaaaaaaaaa","name":"Proveedor","rail":"ACH","brebKey":null,' +
        '"bankAccount":{"bankId":7,"bankName":"Banco de Bogotá","accountTypeId":20,"accountNumberMasked":"****1234"},' +
        '"documentTypeId":1,"documentNumber":"1020304050","holderName":"Ana Pérez","tags":["nomina"],' +
        `"verification":{"status":"FAILED","method":"PRENOTE","reasonCode":"R17","reason":"No corresponde","requestedAt":${JSON.stringify(v.verification.requestedAt)},"decidedAt":null},` +
        `"createdAt":${JSON.stringify(v.createdAt)},"updatedAt":${JSON.stringify(v.updatedAt)},"version":3}`,
    );
    expect(v.verification.requestedAt).toEqual(expect.any(String));
  });
});
