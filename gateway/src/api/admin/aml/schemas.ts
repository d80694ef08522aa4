import { z } from 'zod';
import { isoDate } from '../../../http/schemas.js';

export const AmlEntrySchema = z
  .object({
    id: z.string(),
    kind: z
      .enum(['DOCUMENT', 'BANK_ACCOUNT'])
      .meta({ description: 'What is listed: a document, or a bank account (its fingerprint; a send to it is refused like one to a listed document).' }),
    documentNumber: z.string().nullable().meta({ description: 'DOCUMENT entries; null for a bank account.' }),
    bankAccount: z
      .object({
        bankCode: z.string().meta({ description: 'ACH compensation code.', example: '1007' }),
        accountNumberMasked: z.string().meta({ example: '****8901' }),
      })
      .nullable()
      .meta({ description: 'BANK_ACCOUNT entries, the number masked (never stored in full); null for a document.' }),
    name: z.string().nullable(),
    reason: z.string(),
    createdAt: isoDate(),
  })
  .meta({ id: 'AmlEntry' });
