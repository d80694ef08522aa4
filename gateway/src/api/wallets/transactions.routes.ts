import { z } from 'zod';
import { instantFromMicros, instantMicros, parseInstant } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { movementDetailToApi, movementToApi } from './presenters.js';
import { MovementDetailSchema, MovementPageSchema } from './schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { DATE_OR_INSTANT_JSON, uuidSchema, queryInt } from '../../http/validation.js';

const TYPES = {
  TRANSFER_OUT: ledgerV1.MovementType.TRANSFER_OUT,
  TRANSFER_IN: ledgerV1.MovementType.TRANSFER_IN,
  FEE_CHARGE: ledgerV1.MovementType.FEE_CHARGE,
  BALANCE_ADD: ledgerV1.MovementType.BALANCE_ADD,
} as const;
const RAILS = { BREB: ledgerV1.Rail.BREB, ACH: ledgerV1.Rail.ACH, PSE: ledgerV1.Rail.PSE } as const;

const intParam = (min: number, max: number, def: number) => queryInt(min, max, def);

/**
 * A bound: a bare date (`2026-11-21`, UTC) or an RFC 3339 instant with its offset
 * (`2026-11-28T16:39:52.123456Z`), kept at microsecond precision so that a movement's own
 * `createdAt` is a bound that holds it. `endOfDay`: a bare date as an upper bound means "through
 * that whole day" (its last microsecond).
 */
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
const bound = (s: string, endOfDay: boolean): string | null => {
  if (!BARE_DATE.test(s)) return parseInstant(s);
  const start = parseInstant(`${s}T00:00:00Z`);
  return start && endOfDay ? instantFromMicros(instantMicros(start) + 86_400_000_000n - 1n) : start;
};
const isoDateParam = (endOfDay = false) =>
  z
    .string()
    .refine((s) => bound(s, endOfDay) !== null, {
      message: 'Debe ser una fecha ISO 8601 (AAAA-MM-DD) o un instante con zona horaria (p. ej. 2026-11-28T16:39:52.123456Z).',
    })
    .transform((s) => bound(s, endOfDay)!)
    .meta(DATE_OR_INSTANT_JSON);

export const TransactionsQuery = z.strictObject({
  page: intParam(0, 1_000_000, 0).meta({ description: 'Zero-based page (ignored when `cursor` is given).' }),
  limit: intParam(1, 100, 20),
  type: z.enum(Object.keys(TYPES) as [keyof typeof TYPES]).optional(),
  rail: z.enum(Object.keys(RAILS) as [keyof typeof RAILS]).optional(),
  from: isoDateParam()
    .optional()
    .meta({ description: 'A date (UTC) or an RFC 3339 instant (microseconds kept); movements created at or after.', example: '2026-11-28T16:39:52.123456Z' }),
  to: isoDateParam(true).optional().meta({
    description: 'A date (UTC, the whole day) or an RFC 3339 instant (microseconds kept); movements created at or before.',
    example: '2026-11-28T16:39:52.123456Z',
  }),
  cursor: z.string().min(1).max(512).optional().meta({ description: 'The `nextCursor` of the previous page; wins over `page`.' }),
});

export function transactionRoutes(ledger: LedgerClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/wallets/transactions',
      operationId: 'listTransactions',
      tags: ['Transactions'],
      summary: "The company's movements, newest first",
      description:
        'Page (`page`, `limit`) or cursor (`cursor` = the previous `nextCursor`) pagination; the answer is always `items`, `nextCursor`, `hasMore`. Amounts are strings.',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: TransactionsQuery,
      responses: { 200: { description: 'A page of movements.', schema: MovementPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const res = await ledger.listMovements(
          {
            type: query.type ? TYPES[query.type] : undefined,
            rail: query.rail ? RAILS[query.rail] : undefined,
            from: query.from,
            to: query.to,
            page: query.page,
            limit: query.limit,
            cursor: query.cursor,
          },
          call,
        );
        return { status: 200, body: { items: res.items.map(movementToApi), nextCursor: res.nextCursor ?? null, hasMore: res.hasMore } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/wallets/transactions/{id}',
      operationId: 'getTransaction',
      tags: ['Transactions'],
      summary: "One movement with its details (poll it for a send's status)",
      description: "Unknown ids and other companies' ids answer the same 404 TRANSACTION_NOT_FOUND.",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: uuidSchema() }),
      paramErrors: { id: 'TRANSACTION_NOT_FOUND' },
      responses: { 200: { description: 'The movement with bank, masked account, memo and error.', schema: MovementDetailSchema } },
      errors: ['TRANSACTION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const m = await ledger.getMovement({ id: params.id }, call);
        return { status: 200, body: movementDetailToApi(m) };
      },
    }),
  ];
}
