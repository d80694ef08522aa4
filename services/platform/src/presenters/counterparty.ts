import type { transferV1 } from '@wallet/proto';
import { maskAccount } from '../logging/logger.js';
import { formatInstant } from '../time/instant.js';

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);

/**
 * A counterparty (payee) as the API shows it (the gateway's CounterpartySchema) and the
 * `counterparty.*` webhooks carry it (docs/counterparties.md). The bank account number only masked:
 * the service answers it masked, and it is masked again here so no path can show more than its last
 * four digits.
 */
export function counterpartyView(c: transferV1.Counterparty) {
  const v = c.verification;
  return {
    id: c.id,
    name: c.name,
    rail: c.rail,
    brebKey: c.brebKey ? { keyType: c.brebKey.type, keyValue: c.brebKey.value } : null,
    bankAccount: c.bankAccount
      ? {
          bankId: c.bankAccount.bankId,
          bankName: c.bankAccount.bankName,
          accountTypeId: c.bankAccount.accountTypeId,
          accountNumberMasked: maskAccount(c.bankAccount.accountNumberMasked) ?? '',
        }
      : null,
    documentTypeId: c.documentTypeId,
    documentNumber: c.documentNumber,
    holderName: c.holderName,
    tags: [...c.tags],
    verification: {
      status: v?.status ?? 'UNVERIFIED',
      method: v?.method ?? (c.rail === 'BREB' ? 'DIRECTORY' : 'PRENOTE'),
      reasonCode: v?.reasonCode ?? null,
      reason: v?.reason ?? null,
      requestedAt: iso(v?.requestedAt),
      decidedAt: iso(v?.decidedAt),
    },
    createdAt: iso(c.createdAt)!,
    updatedAt: iso(c.updatedAt)!,
    version: c.version,
  };
}
