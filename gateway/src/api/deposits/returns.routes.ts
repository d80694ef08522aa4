import { z } from 'zod';
import { depositReturnView } from '@wallet/platform';
import type { CollectKeyClient } from '../../clients/collect-key-client.js';
import type { DepositClient } from '../../clients/deposit-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { depositReturnsByOwner } from './return-owner.js';
import { CreateDepositReturnBody, DepositReturnListSchema, DepositReturnSchema } from './schemas.js';

const DEPOSIT_ID = z.string().regex(/^dep_[a-z0-9]{8,64}$/);
const RETURNS_DESCRIPTION =
  'Returns all or part of a credited (`ASSIGNED`) payment to its payer through the rail it came by, without fee (docs/returns.md): ' +
  'a Bre-B payment through the Bre-B network, from your BREB wallet; a PSE payment as a refund by the PSE provider, from your ACH wallet. ' +
  'A payment can be returned several times while the returns add up to at most its gross. The amount is held in your wallet at once; ' +
  'the answer is the return `RETURNED` when the rail answered, or `PENDING` when it has not yet (it finishes on its own: webhook `deposit.returned`). ' +
  'A refusal by the rail ends it `FAILED` with the funds back (webhook `deposit.return_failed`).';

export function depositReturnRoutes(keys: CollectKeyClient, deposits: DepositClient): AnyRoute[] {
  const owner = depositReturnsByOwner(keys, deposits);
  return [
    defineRoute({
      method: 'POST',
      path: '/deposits/{id}/returns',
      operationId: 'createDepositReturn',
      tags: ['Deposits'],
      summary: 'Return all or part of a payment to its payer (devolución)',
      description: `${RETURNS_DESCRIPTION} Another company's deposit answers 404 \`DEPOSIT_NOT_FOUND\`.`,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      idempotent: true,
      params: z.object({ id: DEPOSIT_ID }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      body: CreateDepositReturnBody,
      responses: {
        201: {
          description: 'The return: RETURNED, PENDING (the network has not answered yet) or FAILED (refused by the network).',
          schema: DepositReturnSchema,
        },
      },
      errors: ['DEPOSIT_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'RETURN_EXCEEDS_PAYMENT', 'INSUFFICIENT_BALANCE', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => {
        const r = await owner.create(
          {
            depositId: params.id,
            ...(body.amountCents !== undefined ? { amountCents: BigInt(body.amountCents) } : {}),
            reason: body.reason,
            ...(body.description !== undefined ? { description: body.description } : {}),
            requestedBy: '',
          },
          call,
        );
        return { status: 201, body: depositReturnView(r) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/deposits/{id}/returns',
      operationId: 'listDepositReturns',
      tags: ['Deposits'],
      summary: "A payment's returns, oldest first",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: DEPOSIT_ID }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      responses: { 200: { description: 'Every return of the payment (at most 20).', schema: DepositReturnListSchema } },
      errors: ['DEPOSIT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const r = await owner.list(params.id, call);
        return { status: 200, body: { items: r.items.map(depositReturnView) } };
      },
    }),
  ];
}
