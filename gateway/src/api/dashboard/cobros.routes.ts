import { z } from 'zod';
import { AppError } from '@wallet/platform';
import type { DashboardAuth } from '../../auth/dashboard-auth.js';
import type { DepositClient } from '../../clients/deposit-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { COBRO_ID, CobroPageSchema, CobroSchema, CobrosQuery, listCobrosRequest, UnmatchedPageSchema, UnmatchedQuery } from '../cobros/schemas.js';
import { dashboardCobroToApi, unmatchedPaymentToApi } from './presenters.js';
import { LOCKOUT_NOTE, signWithTotp, TotpCode } from './signing.js';

const CobroParams = z.object({ id: COBRO_ID });

/** Attaching by hand: the payment, and the signer's TOTP code (as signing an approval). */
const AttachWithTotpBody = z
  .strictObject({
    depositId: z
      .string()
      .regex(/^dep_[a-z0-9]{24}$/)
      .meta({ description: 'A credited (ASSIGNED) payment of the company: `dep_…`, from GET /dashboard/cobros/unmatched-payments.' }),
    totpCode: TotpCode,
  })
  .meta({ id: 'DashboardAttachCobroPaymentRequest' });

/** A payment is attached by hand only to a cobro that still takes one (pse-deposit's rule, cobro.store.ts `attach`). */
const TAKES_PAYMENTS = new Set(['OPEN', 'PARTIALLY_PAID', 'PAID']);
const CLOSED_AS: Record<string, string> = { EXPIRED: 'vencido', CANCELLED: 'cancelado' };

/**
 * The cobros of the session's company in the dashboard (docs/cobros.md): read them, their QR and the
 * payments that matched none, and attach such a payment to a cobro by hand with a signer's TOTP
 * code. Another company's cobro reads as unknown (COBRO_NOT_FOUND), as does a malformed id.
 */
export function dashboardCobroRoutes(auth: DashboardAuth, deposits: DepositClient): AnyRoute[] {
  const notFound = { id: 'COBRO_NOT_FOUND' } as const;
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/cobros',
      operationId: 'dashboardListCobros',
      tags: ['Dashboard'],
      summary: "The company's cobros, newest first, with their payments (filters: status, reference, dates; cursor)",
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: CobrosQuery,
      responses: { 200: { description: "A page of cobros; `nextCursor` pages on. `breb.qrPngUrl` is the dashboard's QR route.", schema: CobroPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await deposits.listCobros(listCobrosRequest(query), call);
        return { status: 200, body: { items: r.items.map(dashboardCobroToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/cobros/unmatched-payments',
      operationId: 'dashboardListUnmatchedPayments',
      tags: ['Dashboard'],
      summary: "The company's payments that matched no cobro, newest first (attach one with POST /dashboard/cobros/{id}/payments)",
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: UnmatchedQuery,
      responses: { 200: { description: 'A page of unmatched payments.', schema: UnmatchedPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await deposits.listUnmatchedPayments({ limit: query.limit, cursor: query.cursor }, call);
        return { status: 200, body: { items: r.items.map(unmatchedPaymentToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/cobros/{id}',
      operationId: 'dashboardGetCobro',
      tags: ['Dashboard'],
      summary: 'A cobro with the payments matched to it, and how each was matched',
      auth: { kind: 'session' },
      rateClass: 'READS',
      params: CobroParams,
      paramErrors: notFound,
      responses: { 200: { description: 'The cobro.', schema: CobroSchema } },
      errors: ['COBRO_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: dashboardCobroToApi(await deposits.getCobro({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/cobros/{id}/qr.png',
      operationId: 'dashboardGetCobroQrPng',
      tags: ['Dashboard'],
      summary: "A cobro's dynamic QR (PNG)",
      auth: { kind: 'session' },
      rateClass: 'READS',
      params: CobroParams,
      paramErrors: notFound,
      responses: { 200: { description: 'The PNG of `breb.qrPayload`.', contentType: 'image/png' } },
      errors: ['COBRO_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const r = await deposits.getCobroQrPng({ id: params.id }, call);
        return { status: 200, body: Buffer.from(r.png), headers: { 'Content-Type': 'image/png', 'Cache-Control': 'private, max-age=300' } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/cobros/{id}/payments',
      operationId: 'dashboardAttachCobroPayment',
      tags: ['Dashboard'],
      summary: 'Attach a credited payment of the company to a cobro by hand, with a TOTP code',
      description:
        'By an ADMIN or OPERATOR user (a VIEWER: 403 INSUFFICIENT_ROLE). The cobro and the payment are looked up before the code is spent: ' +
        "an unknown cobro (or another company's) is 404 COBRO_NOT_FOUND, an unknown payment 404 DEPOSIT_NOT_FOUND, an EXPIRED or CANCELLED cobro " +
        '409 INVALID_STATE_TRANSITION. Then the code, then the attachment as POST /cobros/{id}/payments makes it (`matchedBy: MANUAL`): ' +
        'the same payment again answers the cobro as it is; a payment matched to another cobro, or not credited, is 409 INVALID_STATE_TRANSITION. ' +
        LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: CobroParams,
      paramErrors: notFound,
      body: AttachWithTotpBody,
      responses: { 200: { description: 'The cobro with the payment.', schema: CobroSchema } },
      errors: [
        'INVALID_TOTP_CODE',
        'ACCOUNT_LOCKED',
        'INSUFFICIENT_ROLE',
        'COBRO_NOT_FOUND',
        'DEPOSIT_NOT_FOUND',
        'INVALID_STATE_TRANSITION',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ params, body, session, call }) => {
        const c = await signWithTotp(auth, session!, body.totpCode, {
          // What can be told without the code (CONTRACT §9: a refusal spends none): the cobro, its state, the payment.
          precheck: async () => {
            const cobro = await deposits.getCobro({ id: params.id }, call);
            if (!TAKES_PAYMENTS.has(cobro.status)) {
              const state = CLOSED_AS[cobro.status] ?? cobro.status;
              throw new AppError('INVALID_STATE_TRANSITION', `El cobro está ${state}: solo se le concilia un pago mientras está abierto o pagado.`);
            }
            await deposits.getDeposit({ id: body.depositId }, call);
          },
          sign: () => deposits.attachCobroPayment({ cobroId: params.id, depositId: body.depositId }, call),
        });
        return { status: 200, body: dashboardCobroToApi(c) };
      },
    }),
  ];
}
