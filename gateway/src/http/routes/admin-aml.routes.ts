import { z } from 'zod';
import type { AdminChanges } from '../../app/admin-changes.js';
import { amlEntryToApi } from '../../transfer/presenters.js';
import type { TransferClient } from '../../transfer/transfer-client.js';
import { AmlEntrySchema } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { textSchema, uuidSchema } from '../validation.js';
import { approvalRequestToApi, PENDING_APPROVAL_RESPONSE } from './admin-approval-requests.routes.js';

export const AmlEntryBody = z.strictObject({
  documentNumber: z.string().regex(/^[0-9A-Za-z-]{5,20}$/, { message: 'Debe tener de 5 a 20 caracteres alfanuméricos.' }),
  name: textSchema(1, 200).optional(),
  reason: textSchema(1, 500),
}).meta({ id: 'AmlEntryRequest' });

/** The AML (SARLAFT) list: a send is refused when the payer company's NIT or the destination document is on it. */
export function adminAmlRoutes(transfers: TransferClient, changes: AdminChanges): AnyRoute[] {
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
      summary: 'Remove an entry from the AML list (by an operator, once a second operator approves)',
      description: 'Removing an entry weakens a control: a named operator\'s removal answers 202 with an approval request that a second, independent operator approves after the notice delay. The shared development token removes directly.',
      auth: { kind: 'admin' },
      audit: { change: 'gateway' },
      params: z.object({ id: uuidSchema() }), paramErrors: { id: 'AML_ENTRY_NOT_FOUND' },
      responses: { 200: { description: 'The removed entry.', schema: AmlEntrySchema }, 202: PENDING_APPROVAL_RESPONSE },
      errors: ['AML_ENTRY_NOT_FOUND', 'APPROVAL_REQUEST_NOT_PENDING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, admin, call, audit }) => {
        const out = await changes.removeAmlEntry(params.id, admin!, call, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        return { status: 200, body: amlEntryToApi(out.done) };
      },
    }),
  ];
}
