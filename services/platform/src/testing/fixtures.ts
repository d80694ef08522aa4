/**
 * Request pieces the suites share (gateway, services, e2e). The sandbox accepts this account (ACH, savings, a CC
 * holder): a send to it completes after SANDBOX_ACH_CONFIRM_MS unless its amount ends in 13 centavos.
 */
export const SANDBOX_ACH_ACCOUNT: Readonly<{
  bankId: number;
  accountTypeId: number;
  accountNumber: string;
  documentTypeId: number;
  documentNumber: string;
  holderFirstName: string;
  holderLastName: string;
}> = {
  bankId: 1,
  accountTypeId: 20,
  accountNumber: '12345678901',
  documentTypeId: 1,
  documentNumber: '1020304050',
  holderFirstName: 'Ana María',
  holderLastName: 'Pérez Gómez',
};

/** A PSE payer the sandbox's pay page accepts (the payer part of POST /deposits/pse; add `amountCents`). */
export const PSE_PAYER = {
  payerDocumentTypeId: 1,
  payerDocumentNumber: '1020304050',
  payerFirstName: 'Laura',
  payerLastName: 'Gómez Ruiz',
  payerEmail: 'laura@example.com',
  payerPhone: '3101234567',
} as const;
