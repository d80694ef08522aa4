import { z } from 'zod';
import { centsToNumber } from '@wallet/platform';
import { CREDIT_REQUEST_STATUSES, type CreditRequest, type CreditRequestAdmin } from '../../app/credit-request-admin.js';
import { isoDate } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { textSchema, uuidSchema } from '../validation.js';

const Status = z.enum(CREDIT_REQUEST_STATUSES as unknown as ['PENDING_APPROVAL', 'APPROVED', 'CREDITED', 'REJECTED', 'FAILED']);

export const CreditRequestSchema = z.object({
  id: z.string().meta({ description: '`crq_…`' }),
  companyId: z.string(),
  rail: z.enum(['BREB', 'ACH']),
  amountCents: z.int(),
  reference: z.string(),
  status: Status.meta({
    description: 'PENDING_APPROVAL (nothing credited) → APPROVED (a second operator approved; the ledger credit is running) → CREDITED; or REJECTED; or FAILED (the ledger refused the credit, `errorCode` says why).',
  }),
  requestedBy: z.string().meta({ description: 'Operator id of the maker.' }),
  requestedAt: isoDate(),
  decidedBy: z.string().nullable().meta({ description: 'Operator id of the checker (approval or rejection).' }),
  decidedAt: isoDate().nullable(),
  reason: z.string().nullable().meta({ description: 'Why it was rejected.' }),
  movementId: z.string().nullable().meta({ description: 'The BALANCE_ADD movement once CREDITED.' }),
  errorCode: z.string().nullable(),
  completedAt: isoDate().nullable(),
}).meta({ id: 'CreditRequest' });

export function creditRequestToApi(r: CreditRequest) {
  return {
    id: r.id, companyId: r.companyId, rail: r.rail, amountCents: centsToNumber(r.amountCents), reference: r.reference, status: r.status,
    requestedBy: r.requestedBy, requestedAt: r.requestedAt, decidedBy: r.decidedBy, decidedAt: r.decidedAt, reason: r.reason,
    movementId: r.movementId, errorCode: r.errorCode, completedAt: r.completedAt,
  };
}

const IdParams = z.object({ id: z.string().regex(/^crq_[0-9a-f]{32}$/) });
const ListQuery = z.strictObject({
  status: Status.optional().meta({ description: 'Default: every status.' }),
  companyId: uuidSchema().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(300).optional(),
});
const RejectBody = z.strictObject({ reason: textSchema(1, 500).optional() }).meta({ id: 'RejectCreditRequest' });

/** Maker-checker credits (CONTRACT §10): listing, approval by a second operator, rejection. */
export function adminCreditRequestRoutes(requests: CreditRequestAdmin): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/admin/credit-requests', operationId: 'adminListCreditRequests', tags: ['Admin'],
      summary: 'Credit requests awaiting (or past) a second operator, newest first',
      auth: { kind: 'admin' },
      query: ListQuery,
      responses: { 200: { description: 'Requests; `nextCursor` pages on.', schema: z.object({ items: z.array(CreditRequestSchema), nextCursor: z.string().nullable() }) } },
      handler: async ({ query }) => {
        const page = await requests.list(query);
        return { status: 200, body: { items: page.items.map(creditRequestToApi), nextCursor: page.nextCursor } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/admin/credit-requests/{id}', operationId: 'adminGetCreditRequest', tags: ['Admin'],
      summary: 'Read a credit request',
      auth: { kind: 'admin' },
      params: IdParams, paramErrors: { id: 'CREDIT_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request.', schema: CreditRequestSchema } },
      errors: ['CREDIT_REQUEST_NOT_FOUND'],
      handler: async ({ params }) => ({ status: 200, body: creditRequestToApi(await requests.get(params.id)) }),
    }),
    defineRoute({
      method: 'POST', path: '/admin/credit-requests/{id}/approve', operationId: 'adminApproveCreditRequest', tags: ['Admin'],
      summary: 'Approve a credit request: the ledger credits it, once',
      description: 'Only a named operator other than the requester — and neither invited by the requester nor the one who invited them — may approve (403 SAME_OPERATOR); never the shared admin token. Of two concurrent approvals one wins, the other gets 409 CREDIT_REQUEST_NOT_PENDING. If the ledger could not be reached the request stays APPROVED and the same operator approves again to finish it (the ledger credit is idempotent).',
      auth: { kind: 'admin', sharedToken: 'never' },
      params: IdParams, paramErrors: { id: 'CREDIT_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request, CREDITED (`movementId` set).', schema: CreditRequestSchema } },
      errors: ['CREDIT_REQUEST_NOT_FOUND', 'SAME_OPERATOR', 'CREDIT_REQUEST_NOT_PENDING', 'COMPANY_NOT_FOUND', 'WALLET_NOT_PROVISIONED', 'REFERENCE_CONFLICT', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, admin, call, audit }) => {
        if (admin?.kind !== 'operator') throw new Error('approve without an operator');
        return { status: 200, body: creditRequestToApi(await requests.approve(params.id, admin, call, audit!)) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/admin/credit-requests/{id}/reject', operationId: 'adminRejectCreditRequest', tags: ['Admin'],
      summary: 'Reject a pending credit request (nothing is credited)',
      description: 'Any named operator, the requester included (a withdrawal); never the shared admin token.',
      auth: { kind: 'admin', sharedToken: 'never' },
      params: IdParams, paramErrors: { id: 'CREDIT_REQUEST_NOT_FOUND' },
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
