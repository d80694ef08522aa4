import { z } from 'zod';
import { isoDate } from '../../../http/schemas.js';

export const FeeConfigSchema = z
  .object({
    operation: z.enum(['BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW']),
    companyId: z.string().nullable().meta({ description: 'null: the default for every company.' }),
    fixedFeeCents: z.int(),
    variableBps: z.int(),
    updatedAt: isoDate(),
  })
  .meta({ id: 'FeeConfig' });
