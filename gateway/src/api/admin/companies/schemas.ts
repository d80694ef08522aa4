import { z } from 'zod';
import { isoDate, centsNumber } from '../../../http/schemas.js';

export const CompanySchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    name: z.string(),
    nit: z.string(),
    taxRegime: z.enum(['COMMON', 'SIMPLE']),
    status: z.enum(['ACTIVE', 'SUSPENDED']),
    multiSigThreshold: z.int().min(0).max(10),
    counterpartyDailyLimitCents: centsNumber(),
    counterpartyMonthlyLimitCents: centsNumber(),
    rateLimitMultiplier: z.number().positive().max(1_000_000),
    createdAt: isoDate(),
    updatedAt: isoDate(),
  })
  .meta({ id: 'Company' });
