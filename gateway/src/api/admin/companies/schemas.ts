import { z } from 'zod';
import { isoDate } from '../../../http/schemas.js';

export const CompanySchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    name: z.string(),
    nit: z.string(),
    taxRegime: z.enum(['COMMON', 'SIMPLE']),
    status: z.enum(['ACTIVE', 'SUSPENDED']),
    multiSigThreshold: z.int(),
    counterpartyDailyLimitCents: z.int(),
    counterpartyMonthlyLimitCents: z.int(),
    rateLimitMultiplier: z.number(),
    createdAt: isoDate(),
    updatedAt: isoDate(),
  })
  .meta({ id: 'Company' });
