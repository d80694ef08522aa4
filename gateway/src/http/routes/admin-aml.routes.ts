import { z } from 'zod';
import { amlEntryToApi } from '../../transfer/presenters.js';
import type { TransferClient } from '../../transfer/transfer-client.js';
import { AmlEntrySchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { textSchema, uuidSchema } from '../validation.js';

export const AmlEntryBody = z.strictObject({
  documentNumber: z.string().regex(/^[0-9A-Za-z-]{5,20}$/, { message: 'Debe tener de 5 a 20 caracteres alfanuméricos.' }),
  name: textSchema(1, 200).optional(),
  reason: textSchema(1, 500),
}).meta({ id: 'AmlEntryRequest' });

/** The AML (SARLAFT) list: a send is refused when the payer company's NIT or the destination document is on it. */
export function adminAmlRoutes(transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/admin/aml/blacklist', operationId: 'adminAddAmlEntry', tags: ['Admin'],
      summary: 'Add a document to the AML list',
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      body: AmlEntryBody,
      responses: { 201: { description: 'The entry.', schema: AmlEntrySchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const e = await transfers.addAmlEntry({ documentNumber: body.documentNumber, name: body.name, reason: body.reason }, call);
        return { status: 201, body: amlEntryToApi(e) };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/admin/aml/blacklist/{id}', operationId: 'adminRemoveAmlEntry', tags: ['Admin'],
      summary: 'Remove an entry from the AML list',
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: z.object({ id: uuidSchema() }), paramErrors: { id: 'AML_ENTRY_NOT_FOUND' },
      responses: { 200: { description: 'The removed entry.', schema: AmlEntrySchema } },
      errors: ['AML_ENTRY_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const e = await transfers.removeAmlEntry({ id: params.id }, call);
        return { status: 200, body: amlEntryToApi(e) };
      },
    }),
  ];
}
