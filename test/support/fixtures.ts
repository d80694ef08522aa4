import { instantFromDate, type Instant } from '@wallet/platform';

/**
 * Request pieces the e2e suites share. The sandbox accepts this account (ACH, savings, a CC holder):
 * a send to it completes after SANDBOX_ACH_CONFIRM_MS unless its amount ends in 13 centavos.
 */
export const SANDBOX_ACH_ACCOUNT = {
  bankId: 1,
  accountTypeId: 20,
  accountNumber: '12345678901',
  documentTypeId: 1,
  documentNumber: '1020304050',
  holderFirstName: 'Ana María',
  holderLastName: 'Pérez Gómez',
} as const;

/** A PSE payer the sandbox's pay page accepts (the payer part of POST /deposits/pse; add `amountCents`). */
export const PSE_PAYER = {
  payerDocumentTypeId: 1,
  payerDocumentNumber: '1020304050',
  payerFirstName: 'Laura',
  payerLastName: 'Gómez Ruiz',
  payerEmail: 'laura@example.com',
  payerPhone: '3101234567',
} as const;

/**
 * An instant strictly between what happened before the call and what happens after it (10 ms either
 * side): a statement or balance bound that puts earlier postings on one side and later ones on the other.
 */
export async function instantMark(): Promise<Instant> {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(10);
  const t = instantFromDate(new Date());
  await sleep(10);
  return t;
}
