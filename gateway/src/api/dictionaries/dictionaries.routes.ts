import { z } from 'zod';
import { ACH_BANKS } from './ach-banks.js';
import { AchBankSchema } from './schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';

export function dictionaryRoutes(): AnyRoute[] {
  const body = { items: ACH_BANKS.map((b) => ({ id: b.id, name: b.name, achCode: b.achCode })) };
  return [
    defineRoute({
      method: 'GET',
      path: '/dictionaries/banks/ach',
      operationId: 'listAchBanks',
      tags: ['Dictionaries'],
      summary: 'Colombian ACH participants (source of `bankId` for ACH sends)',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      responses: { 200: { description: 'Banks with their ACH compensation codes.', schema: z.object({ items: z.array(AchBankSchema) }) } },
      handler: async () => ({ status: 200, body, headers: { 'Cache-Control': 'private, max-age=3600' } }),
    }),
  ];
}
