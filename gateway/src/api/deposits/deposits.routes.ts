import { z } from 'zod';
import { createdDepositToApi, depositToApi } from './presenters.js';
import type { DepositClient } from '../../clients/deposit-client.js';
import { CreatedDepositSchema, DepositCursorPageSchema, DepositPageSchema } from './schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { centsSchema, textSchema, queryInt } from '../../http/validation.js';
import { MAX_TRANSFER_CENTS } from '../../http/schemas.js';

const digits = (min: number, max: number) => z.string().regex(new RegExp(`^\\d{${min},${max}}$`), { message: `Debe tener entre ${min} y ${max} dígitos.` });

export const CreatePseDepositBody = z
  .strictObject({
    amountCents: centsSchema(100, MAX_TRANSFER_CENTS).meta({
      description: 'Centavos the payer must pay (JSON integer), 100 to 200,000,000,000 (2,000 million COP, the largest transfer the platform moves).',
    }),
    payerDocumentTypeId: z.union([z.literal(1), z.literal(4), z.literal(5), z.literal(8)]).meta({ description: '1 CC, 4 CE, 5 Pasaporte, 8 NIT.' }),
    payerDocumentNumber: digits(5, 15),
    payerFirstName: textSchema(1, 100),
    payerLastName: textSchema(1, 100),
    payerEmail: z.email({ message: 'Debe ser un correo electrónico válido.' }).max(254),
    payerPhone: z
      .string()
      .regex(/^3\d{9}$/, { message: 'Debe ser un celular colombiano de 10 dígitos que empiece por 3.' })
      .optional(),
    internalRef: textSchema(1, 100).optional().meta({ description: 'Your identifier; appears in the listing and the receipt.' }),
  })
  .meta({ id: 'CreatePseDepositRequest' });

export const ShareEmailBody = z
  .strictObject({
    recipientEmail: z.email({ message: 'Debe ser un correo electrónico válido.' }).max(254),
    recipientName: textSchema(1, 100).optional(),
    customMessage: textSchema(0, 500).optional().meta({ description: 'Included in the e-mail body (escaped).' }),
  })
  .meta({ id: 'ShareDepositEmailRequest' });

const intParam = (min: number, max: number, def: number) => queryInt(min, max, def);

export const DepositsQuery = z.strictObject({
  status: z
    .enum(['PENDING_CONFIRM', 'ASSIGNED', 'PAID', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED'])
    .optional()
    .meta({ description: '`PAID` is an alias of `ASSIGNED`.' }),
  rail: z.enum(['PSE', 'BREB']).optional(),
  externalId: z.string().min(1).max(64).optional(),
  brebKeyId: z.string().min(1).max(64).optional(),
  page: intParam(0, 1_000_000, 0),
  limit: intParam(1, 100, 20),
  cursor: z.string().max(512).optional().meta({ description: 'Present (even empty) → cursor style: `items` + `nextCursor`.' }),
});

const DEPOSIT_ID = z.string().regex(/^dep_[a-z0-9]{8,64}$/);

export function depositRoutes(deposits: DepositClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/deposits/pse',
      operationId: 'createPseDeposit',
      tags: ['Deposits'],
      summary: 'Create a PSE payment link',
      description: 'The payer pays at `paygatewayUrl`; the net (gross − fee − IVA) is credited to the ACH wallet when the provider confirms.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      idempotent: true,
      body: CreatePseDepositBody,
      responses: { 201: { description: 'The deposit, PENDING_CONFIRM.', schema: CreatedDepositSchema } },
      errors: [
        'FEE_EXCEEDS_AMOUNT',
        'PSE_PROVIDER_ERROR',
        'PSE_PROVIDER_NOT_CONFIGURED',
        'PSE_INFLOW_DISABLED',
        'WALLET_NOT_PROVISIONED',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ body, call }) => {
        // The company's name and tax regime travel in the signed caller context (callContext), not here.
        const d = await deposits.createPseDeposit({ ...body, amountCents: BigInt(body.amountCents) }, call);
        return { status: 201, body: createdDepositToApi(d) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/deposits/{id}/share-email',
      operationId: 'shareDepositByEmail',
      tags: ['Deposits'],
      summary: 'E-mail the payment link (standard template)',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      params: z.object({ id: DEPOSIT_ID }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      body: ShareEmailBody,
      responses: { 200: { description: 'Sent.', schema: z.object({ success: z.boolean(), messageId: z.string() }) } },
      errors: ['DEPOSIT_NOT_FOUND', 'DEPOSIT_NOT_PENDING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => {
        const r = await deposits.shareByEmail({ depositId: params.id, ...body }, call);
        return { status: 200, body: { success: r.success, messageId: r.messageId } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/deposits',
      operationId: 'listDeposits',
      tags: ['Deposits'],
      summary: "The company's deposits (PSE and Bre-B collections), newest first",
      description: 'Page style by default (`deposits`, `pagination`); with a `cursor` query parameter (empty = first page), `items` + `nextCursor`.',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: DepositsQuery,
      responses: { 200: { description: 'A page of deposits (amounts as strings).', schema: z.union([DepositPageSchema, DepositCursorPageSchema]) } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const cursorMode = query.cursor !== undefined;
        const r = await deposits.listDeposits(
          {
            status: query.status === 'PAID' ? 'ASSIGNED' : query.status,
            rail: query.rail,
            externalId: query.externalId,
            brebKeyId: query.brebKeyId,
            page: query.page,
            limit: query.limit,
            cursorMode,
            cursor: query.cursor ? query.cursor : undefined,
          },
          call,
        );
        const items = r.deposits.map(depositToApi);
        if (cursorMode) return { status: 200, body: { items, nextCursor: r.nextCursor ?? null } };
        return { status: 200, body: { deposits: items, pagination: { total: r.total, page: r.page, limit: r.limit, totalPages: r.totalPages } } };
      },
    }),
  ];
}
