import { z } from 'zod';

export const AchBankSchema = z
  .object({
    id: z.int().min(1).max(1_000_000).meta({ description: 'Stable id; the `bankId` of an ACH send.' }),
    name: z.string(),
    achCode: z.string().meta({ description: 'ACH Colombia compensation code.', example: '1007' }),
  })
  .meta({ id: 'AchBank' });
