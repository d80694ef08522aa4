import { z } from 'zod';
import { isoDate, centsNumber } from '../../../http/schemas.js';
import { CREDIT_REQUEST_STATUSES } from '../../../app/credit-request-admin.js';

export const CreditRequestStatusSchema = z.enum(CREDIT_REQUEST_STATUSES as unknown as ['PENDING_APPROVAL', 'APPROVED', 'CREDITED', 'REJECTED', 'FAILED']);

export const CreditRequestSchema = z
  .object({
    id: z.string().meta({ description: '`crq_…`' }),
    companyId: z.string(),
    rail: z.enum(['BREB', 'ACH']),
    amountCents: centsNumber(),
    reference: z.string(),
    status: CreditRequestStatusSchema.meta({
      description:
        'PENDING_APPROVAL (nothing credited) → APPROVED (a second operator approved; the ledger credit is running) → CREDITED; or REJECTED; or FAILED (the ledger refused the credit, `errorCode` says why).',
    }),
    requestedBy: z.string().meta({ description: 'Operator id of the maker.' }),
    requestedAt: isoDate(),
    decidedBy: z.string().nullable().meta({ description: 'Operator id of the checker (approval or rejection).' }),
    decidedAt: isoDate().nullable(),
    reason: z.string().nullable().meta({ description: 'Why it was rejected.' }),
    movementId: z.string().nullable().meta({ description: 'The BALANCE_ADD movement once CREDITED.' }),
    errorCode: z.string().nullable(),
    completedAt: isoDate().nullable(),
  })
  .meta({ id: 'CreditRequest' });
