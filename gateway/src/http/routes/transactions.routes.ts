import { z } from 'zod';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import { movementDetailToApi, movementToApi } from '../../ledger/presenters.js';
import { MovementDetailSchema, MovementPageSchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { uuidSchema } from '../validation.js';

const TYPES = { TRANSFER_OUT: ledgerV1.MovementType.TRANSFER_OUT, TRANSFER_IN: ledgerV1.MovementType.TRANSFER_IN, FEE_CHARGE: ledgerV1.MovementType.FEE_CHARGE, BALANCE_ADD: ledgerV1.MovementType.BALANCE_ADD } as const;
const RAILS = { BREB: ledgerV1.Rail.BREB, ACH: ledgerV1.Rail.ACH, PSE: ledgerV1.Rail.PSE } as const;

const intParam = (min: number, max: number, def: number) =>
  z.string().regex(/^\d{1,9}$/, { message: 'Debe ser un número entero.' }).transform(Number)
    .pipe(z.int().min(min).max(max)).optional().transform((v) => v ?? def);

/** A date or date-time in ISO 8601 (`2026-11-21` or `2026-11-21T10:00:00Z`). */
const ISO = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** `endOfDay`: a bare date as an upper bound means "through that whole day". */
const isoDateParam = (endOfDay = false) => z.string()
  .refine((s) => ISO.test(s) && !Number.isNaN(Date.parse(s)), { message: 'Debe ser una fecha ISO 8601.' })
  .transform((s) => new Date(Date.parse(s) + (endOfDay && BARE_DATE.test(s) ? 86_400_000 : 0)));

export const TransactionsQuery = z.strictObject({
  page: intParam(0, 1_000_000, 0).meta({ description: 'Zero-based page (ignored when `cursor` is given).' }),
  limit: intParam(1, 100, 20).meta({ description: '1-100, default 20.' }),
  type: z.enum(Object.keys(TYPES) as [keyof typeof TYPES]).optional(),
  rail: z.enum(Object.keys(RAILS) as [keyof typeof RAILS]).optional(),
  from: isoDateParam().optional().meta({ description: 'ISO 8601; movements created at or after.' }),
  to: isoDateParam(true).optional().meta({ description: 'ISO 8601; movements created before (a bare date includes that whole day).' }),
  cursor: z.string().min(1).max(512).optional().meta({ description: 'The `nextCursor` of the previous page; wins over `page`.' }),
});

export function transactionRoutes(ledger: LedgerClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/wallets/transactions', operationId: 'listTransactions', tags: ['Transactions'],
      summary: "The company's movements, newest first",
      description: 'Page (`page`, `limit`) or cursor (`cursor` = the previous `nextCursor`) pagination; the answer is always `items`, `nextCursor`, `hasMore`. Amounts are strings.',
      auth: { kind: 'apiKey', scope: 'READ' }, rateClass: 'READS',
      query: TransactionsQuery,
      responses: { 200: { description: 'A page of movements.', schema: MovementPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const res = await ledger.listMovements({
          type: query.type ? TYPES[query.type] : undefined,
          rail: query.rail ? RAILS[query.rail] : undefined,
          from: query.from, to: query.to,
          page: query.page, limit: query.limit, cursor: query.cursor,
        }, call);
        return { status: 200, body: { items: res.items.map(movementToApi), nextCursor: res.nextCursor ?? null, hasMore: res.hasMore } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/wallets/transactions/{id}', operationId: 'getTransaction', tags: ['Transactions'],
      summary: 'One movement with its details (poll it for a send\'s status)',
      description: 'Unknown ids and other companies\' ids answer the same 404 TRANSACTION_NOT_FOUND.',
      auth: { kind: 'apiKey', scope: 'READ' }, rateClass: 'READS',
      params: z.object({ id: uuidSchema() }), paramErrors: { id: 'TRANSACTION_NOT_FOUND' },
      responses: { 200: { description: 'The movement with bank, masked account, memo and error.', schema: MovementDetailSchema } },
      errors: ['TRANSACTION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const m = await ledger.getMovement({ id: params.id }, call);
        return { status: 200, body: movementDetailToApi(m) };
      },
    }),
  ];
}
