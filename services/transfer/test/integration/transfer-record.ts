import { randomUUID } from 'node:crypto';
import type { TransferRecord } from '../../src/domain/transfer.js';

/**
 * A transfer record as the send path builds it, for tests that write one directly (an owner that died
 * mid-way, a rail call without the saga): a fresh RECEIVED Bre-B send of 10,000 centavos without fee,
 * to `overrides` where given.
 */
export function transferRecord(overrides: Partial<TransferRecord> & Pick<TransferRecord, 'companyId'>): TransferRecord {
  return {
    id: randomUUID(),
    apiKeyId: null,
    rail: 'BREB',
    state: 'RECEIVED',
    amount: 10_000n,
    fee: { fixedFee: 0n, variableFee: 0n, subtotalFee: 0n, ivaApplicable: false, ivaAmount: 0n, totalCharged: 0n },
    targetName: 'ANA GOMEZ',
    targetDocument: '1020304050',
    reference: null,
    description: null,
    destination: { kind: 'BREB', keyType: 'PHONE', keyValue: '3001234567', anchorHandle: 'anh_x', bankName: null, bankAccountType: null },
    holdId: null,
    providerTransferId: null,
    errorMessage: null,
    dispatchAttempts: 0,
    approval: null,
    approvedAt: null,
    releaseEvent: null,
    rejectedBy: null,
    createdAt: new Date(),
    dispatchedAt: null,
    completedAt: null,
    ...overrides,
  };
}
