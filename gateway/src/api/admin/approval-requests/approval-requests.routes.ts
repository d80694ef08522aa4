import { z } from 'zod';
import { type ApprovalRequests } from '../../../app/approval-requests.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { textSchema, uuidSchema, queryInt } from '../../../http/validation.js';
import { ApprovalActionSchema, ApprovalRequestSchema, ApprovalStatusSchema } from './schemas.js';
import { approvalRequestToApi } from './presenters.js';

const ApprovedSchema = ApprovalRequestSchema.extend({
  credentials: z
    .record(z.string(), z.string())
    .optional()
    .meta({
      example: { key: 'wk_test_Stl9505XpZTKkusLLYnOFGxuXM2kS4drmp23k0x5' },
      description:
        'Development only: the credential the change created (`key`, `invitationUrl`, `enrollmentToken`), shown once. In production it goes only to its owner by e-mail and never appears here.',
    }),
}).meta({ id: 'ApprovedRequest' });

const IdParams = z.object({ id: z.string().regex(/^apr_[0-9a-f]{32}$/) });
const ListQuery = z.strictObject({
  status: ApprovalStatusSchema.optional().meta({ description: 'Default: every status.' }),
  action: ApprovalActionSchema.optional(),
  companyId: uuidSchema().optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().max(300).optional(),
});
const RejectBody = z.strictObject({ reason: textSchema(1, 500).optional() }).meta({ id: 'AdminRejectApprovalRequest' });

/** What an applied change may answer (the action's own refusals). */
const APPLY_ERRORS = [
  'COMPANY_NOT_FOUND',
  'OPERATOR_NOT_FOUND',
  'AML_ENTRY_NOT_FOUND',
  'COMPANY_ADMIN_REQUIRED',
  'EXCEPTION_NOT_FOUND',
  'EXCEPTION_NOT_OPEN',
  'MOVEMENT_ALREADY_CORRECTED',
  'CASE_NOT_FINAL',
  'INVALID_REQUEST',
  'SERVICE_UNAVAILABLE',
] as const;

/** Two people for every sensitive change (docs/security.md, insider threat model): listing, approval by a second operator, rejection. */
export function adminApprovalRequestRoutes(approvals: ApprovalRequests): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/admin/approval-requests',
      operationId: 'adminListApprovalRequests',
      tags: ['Admin'],
      summary: 'Sensitive changes awaiting (or past) a second operator, newest first',
      auth: { kind: 'admin' },
      query: ListQuery,
      responses: {
        200: {
          description: 'Requests; `nextCursor` pages on.',
          schema: z.object({ items: z.array(ApprovalRequestSchema), nextCursor: z.string().nullable() }),
        },
      },
      handler: async ({ query }) => {
        const page = await approvals.list(query);
        return { status: 200, body: { items: page.items.map(approvalRequestToApi), nextCursor: page.nextCursor } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/approval-requests/{id}',
      operationId: 'adminGetApprovalRequest',
      tags: ['Admin'],
      summary: 'Read an approval request',
      auth: { kind: 'admin' },
      params: IdParams,
      paramErrors: { id: 'APPROVAL_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request.', schema: ApprovalRequestSchema } },
      errors: ['APPROVAL_REQUEST_NOT_FOUND'],
      handler: async ({ params }) => ({ status: 200, body: approvalRequestToApi(await approvals.get(params.id)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/approval-requests/{id}/approve',
      operationId: 'adminApproveApprovalRequest',
      tags: ['Admin'],
      summary: 'Approve a sensitive change: it is applied, once',
      description: [
        'Only a named operator independent of the requester may approve (403 SAME_OPERATOR: the requester, or an operator sharing an inviter chain with them — who invited them, whom they invited, or invited by the same operator); never the shared admin token.',
        'A change that weakens a control cannot be approved before `notBefore` (409 APPROVAL_DELAY_PENDING with `notBefore`). Of concurrent approvals one wins; the others get 409 APPROVAL_REQUEST_NOT_PENDING.',
        'A change another service applies (fees, AML, a money exception) that could not reach it stays APPROVED: the same operator approves again to finish it. A refusal that will not change (e.g. the exception no longer OPEN) ends it FAILED with that `errorCode`.',
      ].join('\n\n'),
      auth: { kind: 'admin', sharedToken: 'never' },
      audit: { change: 'gateway' },
      params: IdParams,
      paramErrors: { id: 'APPROVAL_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request, APPLIED (`result` set).', schema: ApprovedSchema } },
      errors: ['APPROVAL_REQUEST_NOT_FOUND', 'SAME_OPERATOR', 'APPROVAL_REQUEST_NOT_PENDING', 'APPROVAL_DELAY_PENDING', ...APPLY_ERRORS],
      handler: async ({ params, admin, call, audit }) => {
        if (admin?.kind !== 'operator') throw new Error('approve without an operator');
        const out = await approvals.approve(params.id, admin, call, audit!);
        return { status: 200, body: { ...approvalRequestToApi(out.request), ...(out.credentials ? { credentials: out.credentials } : {}) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/approval-requests/{id}/reject',
      operationId: 'adminRejectApprovalRequest',
      tags: ['Admin'],
      summary: 'Reject a pending change (nothing is changed); the company is told',
      description: 'Any named operator, the requester included (a withdrawal); never the shared admin token.',
      auth: { kind: 'admin', sharedToken: 'never' },
      params: IdParams,
      paramErrors: { id: 'APPROVAL_REQUEST_NOT_FOUND' },
      body: RejectBody,
      responses: { 200: { description: 'The request, REJECTED.', schema: ApprovalRequestSchema } },
      errors: ['APPROVAL_REQUEST_NOT_FOUND', 'APPROVAL_REQUEST_NOT_PENDING'],
      handler: async ({ params, body, admin, audit }) => {
        if (admin?.kind !== 'operator') throw new Error('reject without an operator');
        return { status: 200, body: approvalRequestToApi(await approvals.reject(params.id, admin, body.reason, audit!)) };
      },
    }),
  ];
}
