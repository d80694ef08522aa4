import type { BalanceQuery } from '../../app/balance-query.js';
import { BalanceSchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';

export function walletRoutes(balances: BalanceQuery): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/wallets/balance', operationId: 'getBalance', tags: ['Wallets'],
      summary: "The company's wallets and consolidated balance",
      description: 'A snapshot of current balances; clients may cache it for 10 s (`Cache-Control: private, max-age=10`).',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      responses: {
        200: {
          description: 'Balances (amounts as strings; version and maxTransferAmount as numbers).',
          schema: BalanceSchema,
          headers: { 'Cache-Control': { description: '`private, max-age=10`', schema: { type: 'string' } } },
        },
      },
      errors: ['WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ principal, call }) => {
        const body = await balances.get(principal!.taxRegime, call);
        return { status: 200, body, headers: { 'Cache-Control': 'private, max-age=10' } };
      },
    }),
  ];
}
