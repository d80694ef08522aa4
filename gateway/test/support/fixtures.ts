/**
 * Request pieces the gateway's suites share (the e2e suites have theirs in test/support/fixtures.ts). The
 * sandbox accepts this account (ACH, savings, a CC holder): a send to it completes unless its amount ends in
 * 13 centavos.
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
