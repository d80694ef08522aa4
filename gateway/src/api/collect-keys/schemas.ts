import { z } from 'zod';
import { isoDate } from '../../http/schemas.js';

export const CollectKeySchema = z.object({
  id: z.string().meta({ description: '`bkey_…`' }),
  externalId: z.string(),
  name: z.string(),
  key: z.object({ type: z.string(), value: z.string() }),
  state: z.enum(['ACTIVE', 'SUSPENDED', 'DELETED']),
  createdAt: isoDate(),
  deletedAt: isoDate().nullable(),
}).meta({ id: 'CollectKey' });

export const CollectKeyPageSchema = z.object({
  items: z.array(CollectKeySchema),
  nextCursor: z.string().nullable(),
}).meta({ id: 'CollectKeyPage' });

export const CollectKeyQrSchema = z.object({
  qr: z.object({ id: z.string(), type: z.literal('STATIC'), reference: z.string(), isPaid: z.boolean(), createdAt: isoDate() }),
  reused: z.boolean(),
}).meta({ id: 'CollectKeyQr' });
