import { maskAccount } from '@wallet/platform';
import type { transferV1 } from '@wallet/proto';
import { methodOf, type CounterpartyRecord } from '../domain/counterparty.js';

/** A counterparty as the API answers it and its events carry it: the account number only masked. */
export function counterpartyToProto(c: CounterpartyRecord): transferV1.Counterparty {
  const d = c.destination;
  return {
    id: c.id,
    name: c.name,
    rail: c.rail,
    ...(d.kind === 'BREB' ? { brebKey: { type: d.keyType, value: d.keyValue } } : {}),
    ...(d.kind === 'ACH'
      ? { bankAccount: { bankId: d.bankId, bankName: d.bankName, accountTypeId: d.accountTypeId, accountNumberMasked: maskAccount(d.accountNumber) ?? '' } }
      : {}),
    documentTypeId: c.documentTypeId,
    documentNumber: c.documentNumber,
    holderName: c.holderName,
    tags: c.tags,
    verification: {
      status: c.status,
      method: methodOf(c.rail),
      ...(c.reasonCode ? { reasonCode: c.reasonCode } : {}),
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.requestedAt ? { requestedAt: c.requestedAt } : {}),
      ...(c.decidedAt ? { decidedAt: c.decidedAt } : {}),
    },
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    version: c.version,
  };
}
