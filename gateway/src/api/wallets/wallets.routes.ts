import { z } from 'zod';
import { AppError, compareInstants, instantFromDate } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { BalanceQuery } from './balance-query.js';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { BalanceAtSchema, BalanceSchema } from './schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { instantParam } from '../../http/validation.js';

const RAILS = { BREB: ledgerV1.Rail.BREB, ACH: ledgerV1.Rail.ACH } as const;

export const BalanceHistoryQuery = z.strictObject({
  rail: z.enum(Object.keys(RAILS) as [keyof typeof RAILS]).meta({ description: 'The wallet: BREB or ACH.' }),
  at: instantParam().meta({
    description: "RFC 3339 instant with offset, up to 6 fraction digits kept (a line's `postedAt` counts that line); not in the future.",
    example: '2026-11-28T16:39:52.123456Z',
  }),
});

export function walletRoutes(balances: BalanceQuery, ledger: LedgerClient, now: () => Date = () => new Date()): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/wallets/balance',
      operationId: 'getBalance',
      tags: ['Wallets'],
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
    defineRoute({
      method: 'GET',
      path: '/wallets/balance/history',
      operationId: 'getBalanceAt',
      tags: ['Wallets'],
      summary: "One wallet's balance at a past instant",
      description: [
        "The wallet's `availableCents` and `pendingOutCents` at `at`, computed from the ledger's journal: every posting",
        'on the wallet made at or before `at` (a send reserves into `pendingOutCents`, then completes out of it or returns',
        "to `availableCents` when it fails). Before the wallet's first posting, zeros. `at` in the future: 422",
        'VALIDATION_ERROR. A bare date or a time without offset: 400 INVALID_REQUEST. An instant within the last seconds',
        'may still gain postings being committed; ask for instants a minute or more in the past for a final answer.',
      ].join(' '),
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: BalanceHistoryQuery,
      responses: { 200: { description: 'The balance at `at` (amounts as strings).', schema: BalanceAtSchema } },
      errors: ['VALIDATION_ERROR', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        if (compareInstants(query.at, instantFromDate(now())) > 0) {
          throw new AppError('VALIDATION_ERROR', 'El instante `at` no puede estar en el futuro.', {
            fields: [{ path: 'query.at', message: 'no puede estar en el futuro' }],
          });
        }
        const b = await ledger.getBalanceAt({ rail: RAILS[query.rail], at: query.at }, call);
        return {
          status: 200,
          body: {
            rail: query.rail,
            at: query.at,
            currency: 'COP' as const,
            availableCents: b.availableCents.toString(),
            pendingOutCents: b.pendingOutCents.toString(),
            totalCents: (b.availableCents + b.pendingOutCents).toString(),
            version: Number(b.postings),
          },
        };
      },
    }),
  ];
}
