import { z } from 'zod';
import type { DepositClient } from '../../clients/deposit-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { cobroView as cobroToApi, formatInstant, unmatchedPaymentView } from '@wallet/platform';
import type { cobroV1 } from '@wallet/proto';
import {
  AttachPaymentBody,
  COBRO_ID,
  CobroPageSchema,
  CobroSchema,
  CobrosQuery,
  CreateCobroBody,
  listCobrosRequest,
  UnmatchedPageSchema,
  UnmatchedQuery,
  CobroSettingsSchema,
  SetCobroSettingsBody,
} from './schemas.js';

const big = (v: number | undefined) => (v === undefined ? undefined : BigInt(v));

/** Cobros (expected payments, docs/cobros.md): pse-deposit's, with their dynamic Bre-B key and QR from collect-key. */
export function cobroRoutes(deposits: DepositClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/cobros',
      operationId: 'createCobro',
      tags: ['Cobros'],
      summary: 'Create a cobro: an expected payment with its dynamic Bre-B QR and key',
      description:
        "201 with a new cobro, OPEN, its dynamic Bre-B key registered and its QR payload ready; 200 with the same cobro when its `reference` already names one made with the same request; 409 `REFERENCE_CONFLICT` when it names another. Every inbound payment is matched to it automatically: by the QR's transaction id, by the dynamic key it was paid to, or by the expected payer. The payments are credited to the company's BREB wallet as any Bre-B collection (BREB_INFLOW fees); the cobro itself moves no money. 503 when the Bre-B directory does not answer: retry with the same reference.",
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      idempotent: true,
      body: CreateCobroBody,
      responses: {
        201: { description: 'The new cobro (OPEN).', schema: CobroSchema },
        200: { description: 'The cobro this reference already names (same request).', schema: CobroSchema },
      },
      errors: [
        'REFERENCE_CONFLICT',
        'FAST_WALLET_MISSING',
        'FEE_EXCEEDS_AMOUNT',
        'BREB_DIRECTORY_LOOKUP_FAILED',
        'PSE_PROVIDER_ERROR',
        'PSE_PROVIDER_NOT_CONFIGURED',
        'PSE_INFLOW_DISABLED',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ body, call }) => {
        // The company's name (the QR's merchant name) and tax regime travel in the signed caller context.
        const c = await deposits.createCobro(
          {
            reference: body.reference,
            amountCents: big(body.amountCents),
            minAmountCents: big(body.minAmountCents),
            maxAmountCents: big(body.maxAmountCents),
            expiresAt: body.expiresAt === undefined ? undefined : new Date(body.expiresAt),
            description: body.description,
            expectedPayer: body.expectedPayer,
            metadata: body.metadata ?? {},
            methods: body.methods,
            overpaymentPolicy: body.overpaymentPolicy,
            psePayer: body.psePayer,
          },
          call,
        );
        return { status: c.created ? 201 : 200, body: cobroToApi(c) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/cobros',
      operationId: 'listCobros',
      tags: ['Cobros'],
      summary: 'Your cobros, newest first (cursor pagination), with their payments',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: CobrosQuery,
      responses: { 200: { description: 'A page of cobros.', schema: CobroPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await deposits.listCobros(listCobrosRequest(query), call);
        return { status: 200, body: { items: r.items.map(cobroToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/cobros/unmatched-payments',
      operationId: 'listUnmatchedPayments',
      tags: ['Cobros'],
      summary: 'Payments that matched no cobro, newest first (attach them with POST /cobros/{id}/payments)',
      description:
        'A credited payment is listed here when it named a cobro that was no longer open (`COBRO_EXPIRED`, `COBRO_CANCELLED`; `cobroId` says which) or when it matched none of your cobros (`NO_MATCH`: every credited payment is looked at once your company has made a cobro). It stays credited to your wallet; attaching it to a cobro removes it from this list.',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: UnmatchedQuery,
      responses: { 200: { description: 'A page of unmatched payments.', schema: UnmatchedPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await deposits.listUnmatchedPayments({ limit: query.limit, cursor: query.cursor }, call);
        return {
          status: 200,
          body: {
            items: r.items.map(unmatchedPaymentView),
            nextCursor: r.nextCursor ?? null,
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/cobros/settings',
      operationId: 'getCobroSettings',
      tags: ['Cobros'],
      summary: "Your cobros' matching rules (the amount tolerance)",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      responses: { 200: { description: 'The settings (zeros until you set them).', schema: CobroSettingsSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: settingsToApi(await deposits.getCobroSettings({}, call)) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/cobros/settings',
      operationId: 'setCobroSettings',
      tags: ['Cobros'],
      summary: "Set your cobros' amount tolerance",
      description:
        "A payment short of a cobro's amount (or of a range's minimum) by at most the tolerance completes it; one above its amount (or maximum) by at most the tolerance is not an overpayment. " +
        'The tolerance is the larger of `amountToleranceCents` and `amountToleranceBps` ten-thousandths of the amount. It applies to the cobros made from now on: each cobro keeps the tolerance it was made with (`toleranceBelowCents`, `toleranceAboveCents`).',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      body: SetCobroSettingsBody,
      responses: { 200: { description: 'The settings as they are now.', schema: CobroSettingsSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => ({
        status: 200,
        body: settingsToApi(
          await deposits.setCobroSettings({ amountToleranceCents: BigInt(body.amountToleranceCents), amountToleranceBps: body.amountToleranceBps }, call),
        ),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/cobros/{id}/payments',
      operationId: 'attachCobroPayment',
      tags: ['Cobros'],
      summary: 'Attach one of your credited payments to a cobro by hand',
      description:
        "The payment (`matchedBy: MANUAL`) counts toward the cobro as a matched one would, whenever it was received: the cobro must be OPEN or PARTIALLY_PAID (or PAID: then the overpayment policy decides). Idempotent: the same payment again answers the cobro as it is. 409 `INVALID_STATE_TRANSITION` when the payment is matched to another cobro, is not credited (ASSIGNED), or the cobro EXPIRED or was CANCELLED. Another company's cobro or payment answers 404.",
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      idempotent: true,
      params: z.object({ id: COBRO_ID }),
      paramErrors: { id: 'COBRO_NOT_FOUND' },
      body: AttachPaymentBody,
      responses: { 200: { description: 'The cobro with the payment.', schema: CobroSchema } },
      errors: ['COBRO_NOT_FOUND', 'DEPOSIT_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({
        status: 200,
        body: cobroToApi(await deposits.attachCobroPayment({ cobroId: params.id, depositId: body.depositId }, call)),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/cobros/{id}',
      operationId: 'getCobro',
      tags: ['Cobros'],
      summary: 'One cobro with the payments matched to it',
      description: "Another company's cobro answers 404 `COBRO_NOT_FOUND`.",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: COBRO_ID }),
      paramErrors: { id: 'COBRO_NOT_FOUND' },
      responses: { 200: { description: 'The cobro.', schema: CobroSchema } },
      errors: ['COBRO_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: cobroToApi(await deposits.getCobro({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/cobros/{id}/cancel',
      operationId: 'cancelCobro',
      tags: ['Cobros'],
      summary: 'Cancel an OPEN or PARTIALLY_PAID cobro (idempotent)',
      description:
        'The cobro becomes CANCELLED and its dynamic key is deleted: a later payment to it is held UNASSIGNED (assign it or return it with `/deposits/{id}/assign|return`). What was already paid stays credited. 409 `INVALID_STATE_TRANSITION` for a PAID or EXPIRED cobro.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      idempotent: true,
      params: z.object({ id: COBRO_ID }),
      paramErrors: { id: 'COBRO_NOT_FOUND' },
      body: z.strictObject({}).meta({ id: 'CancelCobroRequest' }),
      responses: { 200: { description: 'The cobro, CANCELLED.', schema: CobroSchema } },
      errors: ['COBRO_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: cobroToApi(await deposits.cancelCobro({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/cobros/{id}/qr.png',
      operationId: 'getCobroQrPng',
      tags: ['Cobros'],
      summary: "The cobro's dynamic QR (PNG)",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: COBRO_ID }),
      paramErrors: { id: 'COBRO_NOT_FOUND' },
      responses: { 200: { description: 'The PNG of `breb.qrPayload`.', contentType: 'image/png' } },
      errors: ['COBRO_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const r = await deposits.getCobroQrPng({ id: params.id }, call);
        return { status: 200, body: Buffer.from(r.png), headers: { 'Content-Type': 'image/png', 'Cache-Control': 'private, max-age=300' } };
      },
    }),
  ];
}

function settingsToApi(s: cobroV1.CobroSettings) {
  return {
    amountToleranceCents: Number(s.amountToleranceCents),
    amountToleranceBps: s.amountToleranceBps,
    updatedAt: s.updatedAt ? formatInstant(s.updatedAt) : null,
  };
}
