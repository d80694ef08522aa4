import { z } from 'zod';
import { walletMoveOfResult, walletMoveView } from '@wallet/platform';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../../http/idempotency-key.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { uuidSchema } from '../../http/validation.js';
import { inMoveTerms, moveRequestOf } from './move-request.js';
import { CreateWalletMoveBody, WalletMoveSchema } from './schemas.js';

const MOVE_DESCRIPTION =
  'Moves money between your own two wallets (docs/wallet-moves.md): BREB → ACH or ACH → BREB, at once and without fee. ' +
  'One ledger posting holds both legs, a `TRANSFER_OUT` on `from` and a `TRANSFER_IN` on `to`, each with `walletMoveId` (GET /wallets/transactions): ' +
  "both are made, `COMPLETED`, or neither. The `from` wallet's available balance must cover the amount (else 422 `INSUFFICIENT_BALANCE`, nothing moves). " +
  'Webhook `wallet.moved`.\n\n' +
  '**Idempotency-Key** is bound to the move it makes, in the ledger, for good: the same key and body answer that move again (201, `Idempotent-Replayed: true`), ' +
  'another body 409 `IDEMPOTENCY_KEY_REUSED`; after an unknown outcome (a 5xx, a time-out) retry at once with the same key and body: never a second move.';

/** Moves between a company's own wallets: the ledger's Move and GetMove, for the caller's company. */
export function walletMoveRoutes(ledger: LedgerClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/wallets/moves',
      operationId: 'createWalletMove',
      tags: ['Wallets'],
      summary: 'Move money between your BREB and ACH wallets (instant, no fee)',
      description: MOVE_DESCRIPTION,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      // The ledger is idempotent by the key (it binds it to the move it makes).
      idempotent: 'bound',
      body: CreateWalletMoveBody,
      responses: { 201: { description: 'The move, COMPLETED: both legs posted.', schema: WalletMoveSchema } },
      errors: ['INSUFFICIENT_BALANCE', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call, idempotencyKey }) => {
        const r = await ledger.move({ ...moveRequestOf(body, idempotencyKey), apiKeyId: call.apiKeyId }, call).catch((err: unknown) => {
          throw inMoveTerms(err);
        });
        // The ledger had made this move for the key already (a retry whose first answer was not stored here): a replay.
        return { status: 201, body: walletMoveView(walletMoveOfResult(r)), ...(r.replayed ? { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } : {}) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/wallets/moves/{id}',
      operationId: 'getWalletMove',
      tags: ['Wallets'],
      summary: 'One move between your wallets',
      description: "Unknown ids, malformed ones and other companies' moves answer the same 404 `WALLET_MOVE_NOT_FOUND`.",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: uuidSchema() }),
      paramErrors: { id: 'WALLET_MOVE_NOT_FOUND' },
      responses: { 200: { description: 'The move.', schema: WalletMoveSchema } },
      errors: ['WALLET_MOVE_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: walletMoveView(walletMoveOfResult(await ledger.getMove({ moveId: params.id }, call))) }),
    }),
  ];
}
