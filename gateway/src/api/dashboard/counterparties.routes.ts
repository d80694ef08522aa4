import { counterpartyView } from '@wallet/platform';
import type { TransferClient } from '../../clients/transfer-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { CounterpartiesQuery, CounterpartyPageSchema } from '../counterparties/schemas.js';

/** The company's counterparties in the dashboard, read only (any role): the same page as GET /counterparties. */
export function dashboardCounterpartyRoutes(transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/counterparties',
      operationId: 'dashboardListCounterparties',
      tags: ['Dashboard'],
      summary: "The company's counterparties, newest first (cursor pagination), by tag, verification status or rail",
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: CounterpartiesQuery,
      responses: { 200: { description: 'A page of counterparties.', schema: CounterpartyPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await transfers.listCounterparties(
          { tag: query.tag, status: query.status, rail: query.rail, limit: query.limit, cursor: query.cursor },
          call,
        );
        return { status: 200, body: { items: r.items.map(counterpartyView), nextCursor: r.nextCursor ?? null } };
      },
    }),
  ];
}
