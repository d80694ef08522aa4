import { z } from 'zod';
import { isoDate, centsNumber } from '../../../http/schemas.js';

export const FeeConfigSchema = z
  .object({
    operation: z.enum(['BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW']),
    companyId: z.string().nullable().meta({ description: 'null: the default for every company.' }),
    fixedFeeCents: centsNumber(),
    variableBps: z.int().min(0).max(10_000),
    updatedAt: isoDate(),
  })
  .meta({ id: 'FeeConfig' });
