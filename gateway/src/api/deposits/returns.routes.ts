import { z } from 'zod';
import { depositReturnView } from '@wallet/platform';
import { AppError, type CallContext } from '@wallet/platform';
import type { CollectKeyClient } from '../../clients/collect-key-client.js';
import type { DepositClient } from '../../clients/deposit-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { centsString, isoDate } from '../../http/schemas.js';
import { centsSchema, textSchema } from '../../http/validation.js';
import { MAX_TRANSFER_CENTS } from '../../http/schemas.js';

const DEPOSIT_ID = z.string().regex(/^dep_[a-z0-9]{8,64}$/);
const REASONS = ['CUSTOMER_REQUEST', 'DUPLICATE', 'OVERPAYMENT', 'FRAUD', 'OTHER'] as const;

export const CreateDepositReturnBody = z
  .strictObject({
    amountCents: centsSchema(1, MAX_TRANSFER_CENTS)
      .optional()
      .meta({ description: 'Centavos to return (JSON integer). Omitted: everything not yet returned of the payment.' }),
    reason: z.enum(REASONS).meta({ description: 'Why the money goes back to the payer.' }),
    description: textSchema(1, 140).optional().meta({ description: 'Your note; shown with the return and on its wallet movement.' }),
  })
  .meta({ id: 'CreateDepositReturnRequest' });

export const DepositReturnSchema = z
  .object({
    id: z.string().meta({ description: '`ret_…`' }),
    depositId: z.string(),
    rail: z.enum(['BREB', 'PSE']),
    amountCents: centsString(),
    currency: z.literal('COP'),
    reason: z.enum(REASONS),
    description: z.string().nullable(),
    status: z.enum(['PENDING', 'RETURNED', 'FAILED']).meta({
      description:
        '`PENDING`: the amount is held in your wallet and the rail is returning it; `RETURNED`: the payer has it (final); `FAILED`: nothing left your wallet (`failureCode` says why).',
    }),
    failureCode: z.string().nullable(),
    failureMessage: z.string().nullable(),
    transactionId: z.string().meta({ description: 'The wallet movement of the return (`GET /wallets/transactions/{id}`): a `TRANSFER_OUT`.' }),
    depositAmountCents: centsString().meta({ description: "The payment's gross." }),
    returnedAmountCents: centsString().meta({ description: 'Returned or being returned of the payment so far, this return included unless it FAILED.' }),
    createdAt: isoDate(),
    returnedAt: isoDate().nullable(),
  })
  .meta({ id: 'DepositReturn' });

export const DepositReturnListSchema = z.object({ items: z.array(DepositReturnSchema) }).meta({ id: 'DepositReturnList' });

const RETURNS_DESCRIPTION =
  'Returns all or part of a credited (`ASSIGNED`) payment to its payer through the rail it came by, without fee (docs/returns.md): ' +
  'a Bre-B payment through the Bre-B network, from your BREB wallet; a PSE payment as a refund by the PSE provider, from your ACH wallet. ' +
  'A payment can be returned several times while the returns add up to at most its gross. The amount is held in your wallet at once; ' +
  'the answer is the return `RETURNED` when the rail answered, or `PENDING` when it has not yet (it finishes on its own: webhook `deposit.returned`). ' +
  'A refusal by the rail ends it `FAILED` with the funds back (webhook `deposit.return_failed`).';

/**
 * A deposit's returns are served by the payment's owner: collect-key for a Bre-B payment, pse-deposit
 * for a PSE one. Each answers DEPOSIT_NOT_FOUND for a deposit it does not own (or another company's),
 * so the call goes to collect-key and, when it does not know the deposit, to pse-deposit.
 */
async function byOwner<T>(bre: () => Promise<T>, pse: () => Promise<T>): Promise<T> {
  try {
    return await bre();
  } catch (err) {
    if (err instanceof AppError && err.code === 'DEPOSIT_NOT_FOUND') return pse();
    throw err;
  }
}

export function depositReturnRoutes(keys: CollectKeyClient, deposits: DepositClient): AnyRoute[] {
  const create = (req: Parameters<CollectKeyClient['createDepositReturn']>[0], call: CallContext) =>
    byOwner(
      () => keys.createDepositReturn(req, call),
      () => deposits.createDepositReturn(req, call),
    );
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
        const r = await create(
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
        const r = await byOwner(
          () => keys.listDepositReturns({ depositId: params.id }, call),
          () => deposits.listDepositReturns({ depositId: params.id }, call),
        );
        return { status: 200, body: { items: r.items.map(depositReturnView) } };
      },
    }),
  ];
}
