import { z } from 'zod';
import { type CreditRequestAdmin } from '../../../app/credit-request-admin.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { textSchema, uuidSchema, queryInt } from '../../../http/validation.js';
import { CreditRequestSchema, CreditRequestStatusSchema } from './schemas.js';
import { creditRequestToApi } from './presenters.js';

const IdParams = z.object({ id: z.string().regex(/^crq_[0-9a-f]{32}$/) });
const ListQuery = z.strictObject({
  status: CreditRequestStatusSchema.optional().meta({ description: 'Default: every status.' }),
  companyId: uuidSchema().optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().max(300).optional(),
});
const RejectBody = z.strictObject({ reason: textSchema(1, 500).optional() }).meta({ id: 'RejectCreditRequest' });

/** Maker-checker credits (CONTRACT §10): listing, approval by a second operator, rejection. */
export function adminCreditRequestRoutes(requests: CreditRequestAdmin): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/admin/credit-requests',
      operationId: 'adminListCreditRequests',
      tags: ['Admin'],
      summary: 'Credit requests awaiting (or past) a second operator, newest first',
      auth: { kind: 'admin' },
      query: ListQuery,
      responses: {
        200: { description: 'Requests; `nextCursor` pages on.', schema: z.object({ items: z.array(CreditRequestSchema), nextCursor: z.string().nullable() }) },
      },
      handler: async ({ query }) => {
        const page = await requests.list(query);
        return { status: 200, body: { items: page.items.map(creditRequestToApi), nextCursor: page.nextCursor } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/credit-requests/{id}',
      operationId: 'adminGetCreditRequest',
      tags: ['Admin'],
      summary: 'Read a credit request',
      auth: { kind: 'admin' },
      params: IdParams,
      paramErrors: { id: 'CREDIT_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request.', schema: CreditRequestSchema } },
      errors: ['CREDIT_REQUEST_NOT_FOUND'],
      handler: async ({ params }) => ({ status: 200, body: creditRequestToApi(await requests.get(params.id)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/credit-requests/{id}/approve',
      operationId: 'adminApproveCreditRequest',
      tags: ['Admin'],
      summary: 'Approve a credit request: the ledger credits it, once',
      description:
        'Only a named operator other than the requester — and neither invited by the requester nor the one who invited them — may approve (403 SAME_OPERATOR); never the shared admin token. Of two concurrent approvals one wins, the other gets 409 CREDIT_REQUEST_NOT_PENDING. If the ledger could not be reached the request stays APPROVED and the same operator approves again to finish it (the ledger credit is idempotent).',
      auth: { kind: 'admin', sharedToken: 'never' },
      params: IdParams,
      paramErrors: { id: 'CREDIT_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request, CREDITED (`movementId` set).', schema: CreditRequestSchema } },
      errors: [
        'CREDIT_REQUEST_NOT_FOUND',
        'SAME_OPERATOR',
        'CREDIT_REQUEST_NOT_PENDING',
        'COMPANY_NOT_FOUND',
        'WALLET_NOT_PROVISIONED',
        'REFERENCE_CONFLICT',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ params, admin, call, audit }) => {
        if (admin?.kind !== 'operator') throw new Error('approve without an operator');
        return { status: 200, body: creditRequestToApi(await requests.approve(params.id, admin, call, audit!)) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/credit-requests/{id}/reject',
      operationId: 'adminRejectCreditRequest',
      tags: ['Admin'],
      summary: 'Reject a pending credit request (nothing is credited)',
      description: 'Any named operator, the requester included (a withdrawal); never the shared admin token.',
      auth: { kind: 'admin', sharedToken: 'never' },
      params: IdParams,
      paramErrors: { id: 'CREDIT_REQUEST_NOT_FOUND' },
      body: RejectBody,
      responses: { 200: { description: 'The request, REJECTED.', schema: CreditRequestSchema } },
      errors: ['CREDIT_REQUEST_NOT_FOUND', 'CREDIT_REQUEST_NOT_PENDING'],
      handler: async ({ params, body, admin, audit }) => {
        if (admin?.kind !== 'operator') throw new Error('reject without an operator');
        return { status: 200, body: creditRequestToApi(await requests.reject(params.id, admin, body.reason, audit!)) };
      },
    }),
  ];
}
