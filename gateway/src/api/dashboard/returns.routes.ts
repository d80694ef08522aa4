import { z } from 'zod';
import { AppError, MAX_RETURNS_PER_PAYMENT, depositReturnView } from '@wallet/platform';
import type { DashboardAuth } from '../../auth/dashboard-auth.js';
import type { CollectKeyClient } from '../../clients/collect-key-client.js';
import type { DepositClient } from '../../clients/deposit-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { depositReturnsByOwner } from '../deposits/return-owner.js';
import { CreateDepositReturnBody, DepositReturnListSchema, DepositReturnSchema } from '../deposits/schemas.js';
import { LOCKOUT_NOTE, signWithTotp, TotpCode } from './signing.js';

const DepositParams = z.object({ id: z.string().regex(/^dep_[a-z0-9]{8,64}$/) });

/** The API's return (amount, reason, note) and the signer's TOTP code, as signing an approval. */
const ReturnWithTotpBody = CreateDepositReturnBody.extend({ totpCode: TotpCode }).meta({ id: 'DashboardCreateDepositReturnRequest' });

/**
 * Returns (devoluciones, docs/returns.md) from the dashboard: a signer of the session's company gives
 * a credited payment back to its payer, all or part, with a TOTP code. The return is the API's
 * (POST /deposits/{id}/returns): the same gRPC call to the payment's owner, so the same saga, ledger
 * postings, events, webhooks and receipt; it records the user who asked (`requested_by` = `user:<id>`).
 * Another company's deposit reads as unknown (DEPOSIT_NOT_FOUND), as does a malformed id.
 */
export function dashboardDepositReturnRoutes(auth: DashboardAuth, keys: CollectKeyClient, deposits: DepositClient): AnyRoute[] {
  const owner = depositReturnsByOwner(keys, deposits);
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/deposits/{id}/returns',
      operationId: 'dashboardListDepositReturns',
      tags: ['Dashboard'],
      summary: "A payment's returns, oldest first (as GET /deposits/{id}/returns)",
      auth: { kind: 'session' },
      rateClass: 'READS',
      params: DepositParams,
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      responses: { 200: { description: 'Every return of the payment (at most 20).', schema: DepositReturnListSchema } },
      errors: ['DEPOSIT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: { items: (await owner.list(params.id, call)).items.map(depositReturnView) } }),
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/deposits/{id}/returns',
      operationId: 'dashboardCreateDepositReturn',
      tags: ['Dashboard'],
      summary: 'Return all or part of a credited payment to its payer (devolución), with a TOTP code',
      description:
        'By an ADMIN or OPERATOR user (a VIEWER: 403 INSUFFICIENT_ROLE), alone, as POST /deposits/{id}/returns by a WRITE key (docs/returns.md "From the dashboard"). ' +
        "The payment and its returns are looked up before the code is spent: an unknown payment (or another company's) is 404 DEPOSIT_NOT_FOUND, " +
        'one not credited (or with 20 returns) 409 INVALID_STATE_TRANSITION, an amount above what is left to return 422 RETURN_EXCEEDS_PAYMENT ' +
        '(`details`: `grossCents`, `returnedCents`, `returnableCents`). Then the code, then the return as the API makes it (the same saga, ' +
        'events, webhooks and receipt), recorded as asked by the user. A code is accepted once: the same request again is refused, ' +
        'so a double submission makes no second return. ' +
        LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: DepositParams,
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      body: ReturnWithTotpBody,
      responses: {
        201: {
          description: 'The return: RETURNED, PENDING (the network has not answered yet) or FAILED (refused by the network).',
          schema: DepositReturnSchema,
        },
      },
      errors: [
        'INVALID_TOTP_CODE',
        'ACCOUNT_LOCKED',
        'INSUFFICIENT_ROLE',
        'DEPOSIT_NOT_FOUND',
        'INVALID_STATE_TRANSITION',
        'RETURN_EXCEEDS_PAYMENT',
        'INSUFFICIENT_BALANCE',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ params, body, session, call }) => {
        // The payment's source, read by the precheck: its owner is then asked directly.
        let source: string | undefined;
        const r = await signWithTotp(auth, session!, body.totpCode, {
          // What can be told without the code (CONTRACT §9: a refusal spends none); the owner checks it all again under the payment's lock.
          precheck: async () => {
            const d = await deposits.getDeposit({ id: params.id }, call);
            source = d.source;
            if (d.status !== 'ASSIGNED') {
              throw new AppError('INVALID_STATE_TRANSITION', `Solo un pago acreditado (ASSIGNED) puede devolverse; este está en ${d.status}.`);
            }
            const { items } = await owner.list(params.id, call, source);
            if (items.length >= MAX_RETURNS_PER_PAYMENT) {
              throw new AppError('INVALID_STATE_TRANSITION', `Un pago admite hasta ${MAX_RETURNS_PER_PAYMENT} devoluciones.`);
            }
            const gross = BigInt(d.amountCents);
            const returned = items.filter((x) => x.status !== 'FAILED').reduce((sum, x) => sum + BigInt(x.amountCents), 0n);
            const amount = body.amountCents !== undefined ? BigInt(body.amountCents) : gross - returned;
            if (amount <= 0n || returned + amount > gross) {
              throw new AppError('RETURN_EXCEEDS_PAYMENT', undefined, {
                grossCents: gross.toString(),
                returnedCents: returned.toString(),
                returnableCents: (gross - returned).toString(),
              });
            }
          },
          sign: () =>
            owner.create(
              {
                depositId: params.id,
                ...(body.amountCents !== undefined ? { amountCents: BigInt(body.amountCents) } : {}),
                reason: body.reason,
                ...(body.description !== undefined ? { description: body.description } : {}),
                // The user, not the session: the return's history names who asked (the API's records its key).
                requestedBy: `user:${session!.userId}`,
              },
              call,
              source,
            ),
        });
        return { status: 201, body: depositReturnView(r) };
      },
    }),
  ];
}
