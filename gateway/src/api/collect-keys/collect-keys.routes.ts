import { z } from 'zod';
import type { CollectKeyClient } from '../../clients/collect-key-client.js';
import { collectKeyToApi, qrToApi } from './presenters.js';
import { depositToApi } from '../deposits/presenters.js';
import { CollectKeyPageSchema, CollectKeyQrSchema, CollectKeySchema, DEPOSIT_ID, AssignBody, ASSIGN_DESCRIPTION, RETURN_DESCRIPTION } from './schemas.js';
import { DepositSchema } from '../deposits/schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { textSchema, queryInt } from '../../http/validation.js';

export const CreateCollectKeyBody = z
  .strictObject({
    externalId: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,64}$/, { message: 'Debe tener de 1 a 64 caracteres [A-Za-z0-9._:-].' })
      .meta({ description: 'Your identifier of the customer; one live key per externalId.' }),
    name: textSchema(1, 100),
    keyType: z.literal('ALPHANUM').optional(),
    keyValue: z
      .string()
      .regex(/^@[A-Za-z0-9]{3,40}$/, { message: 'Debe ser un alias: @ seguido de 3 a 40 letras o dígitos.' })
      .optional()
      .meta({ description: 'An alias: `@` followed by 3-40 letters or digits. Omitted: an alias `@` + 10 lowercase alphanumerics is generated.' }),
  })
  .meta({ id: 'CreateCollectKeyRequest' });

const KEY_REF = z.string().regex(/^(bkey_[A-Za-z0-9]{4,64}|ext:[A-Za-z0-9._:-]{1,64})$/);
const QR_ID = z.string().regex(/^qr_[A-Za-z0-9]{4,64}$/);

export const CollectKeysQuery = z.strictObject({
  limit: queryInt(1, 200, 100),
  cursor: z.string().min(1).max(512).optional(),
  state: z.enum(['ACTIVE', 'SUSPENDED', 'DELETED']).optional(),
  externalId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, { message: 'Debe tener de 1 a 64 caracteres [A-Za-z0-9._:-].' })
    .optional(),
});

export function collectKeyRoutes(keys: CollectKeyClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/breb/collect-keys',
      operationId: 'createCollectKey',
      tags: ['Collect keys'],
      summary: 'Issue a Bre-B collect key for one of your customers',
      description:
        "201 with a new key; 200 with the live key when that externalId already has one (ACTIVE or SUSPENDED). The payments to a key are credited to the company's BREB wallet: a company without one gets 404 `FAST_WALLET_MISSING` and no key.",
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      idempotent: true,
      body: CreateCollectKeyBody,
      responses: {
        201: { description: 'The new key (ACTIVE).', schema: CollectKeySchema },
        200: { description: 'The existing live key of that externalId.', schema: CollectKeySchema },
      },
      errors: ['FAST_WALLET_MISSING', 'KEY_ALREADY_REGISTERED', 'BREB_DIRECTORY_LOOKUP_FAILED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        // The company's tax regime travels in the signed caller context (callContext), not here.
        const r = await keys.createKey({ externalId: body.externalId, name: body.name, keyType: body.keyType, keyValue: body.keyValue }, call);
        return { status: r.created ? 201 : 200, body: collectKeyToApi(r.key!) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/breb/collect-keys',
      operationId: 'listCollectKeys',
      tags: ['Collect keys'],
      summary: 'Your collect keys, newest first (cursor pagination)',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: CollectKeysQuery,
      responses: { 200: { description: 'A page of keys.', schema: CollectKeyPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await keys.listKeys({ state: query.state, externalId: query.externalId, limit: query.limit, cursor: query.cursor }, call);
        return { status: 200, body: { items: r.items.map(collectKeyToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/breb/collect-keys/{id}',
      operationId: 'getCollectKey',
      tags: ['Collect keys'],
      summary: 'One collect key, by `bkey_…` id or `ext:<externalId>`',
      description: '`ext:<externalId>` answers the live key of that customer, or else its most recently deleted one.',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: KEY_REF }),
      paramErrors: { id: 'KEY_NOT_FOUND' },
      responses: { 200: { description: 'The key.', schema: CollectKeySchema } },
      errors: ['KEY_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: collectKeyToApi(await keys.getKey({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/breb/collect-keys/{id}',
      operationId: 'deleteCollectKey',
      tags: ['Collect keys'],
      summary: 'Delete a collect key (idempotent); it stops receiving payments at once',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      params: z.object({ id: KEY_REF }),
      paramErrors: { id: 'KEY_NOT_FOUND' },
      responses: { 200: { description: 'The key, DELETED, with deletedAt.', schema: CollectKeySchema } },
      errors: ['KEY_NOT_FOUND', 'BREB_DIRECTORY_LOOKUP_FAILED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: collectKeyToApi(await keys.deleteKey({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/breb/collect-keys/{id}/qr',
      operationId: 'issueCollectKeyQr',
      tags: ['Collect keys'],
      summary: 'Issue (or reuse) the static QR of a key',
      description:
        'One live QR per key: 201 for a new one, 200 with `reused: true` for the existing one. The QR carries an EMVCo merchant-presented payload with the key (CRC16 checked).',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      idempotent: true,
      params: z.object({ id: KEY_REF }),
      paramErrors: { id: 'KEY_NOT_FOUND' },
      responses: {
        201: { description: 'A new QR.', schema: CollectKeyQrSchema },
        200: { description: 'The existing live QR (reused).', schema: CollectKeyQrSchema },
      },
      errors: ['KEY_NOT_FOUND', 'KEY_NOT_ACTIVE', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const r = await keys.issueQr({ keyId: params.id }, call);
        return { status: r.reused ? 200 : 201, body: qrToApi(r.qr!, r.reused) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/breb/collect-keys/qr/{qrId}.png',
      operationId: 'getCollectKeyQrPng',
      tags: ['Collect keys'],
      summary: 'The QR image (PNG)',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ qrId: QR_ID }),
      paramErrors: { qrId: 'QR_NOT_FOUND' },
      responses: { 200: { description: 'The PNG.', contentType: 'image/png' } },
      errors: ['QR_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const r = await keys.getQrPng({ qrId: params.qrId }, call);
        return { status: 200, body: Buffer.from(r.png), headers: { 'Content-Type': 'image/png', 'Cache-Control': 'private, max-age=300' } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/deposits/{id}/assign',
      operationId: 'assignBrebDeposit',
      tags: ['Collect keys'],
      summary: 'Assign one of your UNASSIGNED Bre-B payments to your wallet',
      description: `${ASSIGN_DESCRIPTION} Another company's deposit answers 404 \`DEPOSIT_NOT_FOUND\`.`,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      idempotent: true,
      params: z.object({ id: DEPOSIT_ID }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      body: AssignBody,
      responses: { 200: { description: 'The deposit, ASSIGNED.', schema: DepositSchema } },
      errors: ['DEPOSIT_NOT_FOUND', 'KEY_NOT_FOUND', 'KEY_NOT_ACTIVE', 'INVALID_STATE_TRANSITION', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({
        status: 200,
        body: depositToApi(await keys.assignPayment({ depositId: params.id, ...(body.keyId ? { keyId: body.keyId } : {}), note: '', assignedBy: '' }, call)),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/deposits/{id}/return',
      operationId: 'returnBrebDeposit',
      tags: ['Collect keys'],
      summary: 'Return one of your UNASSIGNED Bre-B payments to the payer',
      description: `${RETURN_DESCRIPTION} Another company's deposit answers 404 \`DEPOSIT_NOT_FOUND\`.`,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'COLLECT_KEY_WRITES',
      idempotent: true,
      params: z.object({ id: DEPOSIT_ID }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      body: z.strictObject({}).meta({ id: 'ReturnDepositRequest' }),
      responses: { 200: { description: 'The deposit, REVERSED (returned to the payer).', schema: DepositSchema } },
      errors: ['DEPOSIT_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({
        status: 200,
        body: depositToApi(await keys.returnPayment({ depositId: params.id, note: '', returnedBy: '' }, call)),
      }),
    }),
  ];
}
