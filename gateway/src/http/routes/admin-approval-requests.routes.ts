import { z } from 'zod';
import { APPROVAL_ACTION_NAMES, APPROVAL_STATUSES, type ApprovalRequest, type ApprovalRequests } from '../../app/approval-requests.js';
import { isoDate } from '../api-schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { textSchema, uuidSchema } from '../validation.js';

const Status = z.enum(APPROVAL_STATUSES as unknown as ['PENDING_APPROVAL', 'APPROVED', 'APPLIED', 'FAILED', 'REJECTED', 'EXPIRED']);
const Action = z.enum(APPROVAL_ACTION_NAMES as unknown as ['COMPANY_UPDATE', 'API_KEY_ISSUE', 'DASHBOARD_USER_ADD', 'OPERATOR_INVITE', 'OPERATOR_DISABLE', 'FEE_SET', 'AML_REMOVE']);

export const ApprovalRequestSchema = z.object({
  id: z.string().meta({ description: '`apr_` + 32 hex digits.', pattern: '^apr_[0-9a-f]{32}$', example: 'apr_3ff49a3c96cb5ddd34439167541c51c3' }),
  action: Action.meta({
    description: 'COMPANY_UPDATE (a lower multi-signature threshold or a looser counterparty limit), API_KEY_ISSUE (a WRITE key), DASHBOARD_USER_ADD, OPERATOR_INVITE, OPERATOR_DISABLE, FEE_SET, AML_REMOVE.',
  }),
  companyId: z.string().nullable().meta({ format: 'uuid', example: '54d93216-33a0-46e9-b5ce-766257f40114' }),
  targetId: z.string().nullable().meta({ description: 'The operator or AML entry the change is about.' }),
  payload: z.record(z.string(), z.unknown()).meta({ description: 'The change asked for, as validated (never a credential).', example: { multiSigThreshold: 0 } }),
  status: Status.meta({
    description: 'PENDING_APPROVAL (nothing changed) → APPROVED (a second operator approved; another service is applying it) → APPLIED; or REJECTED, EXPIRED (not decided before `expiresAt`), FAILED (the change was refused when applied; `errorCode` says why).',
  }),
  requestedBy: z.string().meta({ description: 'Operator id of the maker.', format: 'uuid', example: '1e07352e-5a21-4f33-8f1f-39e6405ee9e9' }),
  requestedAt: isoDate(),
  notBefore: isoDate().meta({ description: 'A change that weakens a control cannot be approved before this (the company was told at `requestedAt` and may object).' }),
  expiresAt: isoDate(),
  decidedBy: z.string().nullable().meta({ format: 'uuid', example: '6c1d2f0a-8b7e-4c3d-9a5f-0e1b2c3d4e5f' }),
  decidedAt: isoDate().nullable(),
  reason: z.string().nullable().meta({ description: 'Why it was rejected.', example: 'Sin soporte' }),
  result: z.unknown().nullable().meta({ description: 'What was applied (the company, the key record, the user, the operator, the fee, the entry); never a credential.' }),
  errorCode: z.string().nullable().meta({ example: 'AML_ENTRY_NOT_FOUND' }),
  completedAt: isoDate().nullable(),
}).meta({ id: 'ApprovalRequest' });

export function approvalRequestToApi(r: ApprovalRequest) {
  return {
    id: r.id, action: r.action, companyId: r.companyId, targetId: r.targetId, payload: r.payload, status: r.status, requestedBy: r.requestedBy,
    requestedAt: r.requestedAt, notBefore: r.notBefore, expiresAt: r.expiresAt, decidedBy: r.decidedBy, decidedAt: r.decidedAt, reason: r.reason,
    result: r.result ?? null, errorCode: r.errorCode, completedAt: r.completedAt,
  };
}

/** The 202 of a route whose change waits for a second operator. */
export const PENDING_APPROVAL_RESPONSE = {
  description: 'Sensitive change by a named operator: nothing changed yet; the approval request (PENDING_APPROVAL) that a second, independent operator approves at POST /admin/approval-requests/{id}/approve.',
  schema: ApprovalRequestSchema,
} as const;

const ApprovedSchema = ApprovalRequestSchema.extend({
  credentials: z.record(z.string(), z.string()).optional().meta({
    example: { key: 'wk_test_Stl9505XpZTKkusLLYnOFGxuXM2kS4drmp23k0x5' },
    description: 'Development only: the credential the change created (`key`, `invitationUrl`, `enrollmentToken`), shown once. In production it goes only to its owner by e-mail and never appears here.',
  }),
}).meta({ id: 'ApprovedRequest' });

const IdParams = z.object({ id: z.string().regex(/^apr_[0-9a-f]{32}$/) });
const ListQuery = z.strictObject({
  status: Status.optional().meta({ description: 'Default: every status.' }),
  action: Action.optional(),
  companyId: uuidSchema().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(300).optional(),
});
const RejectBody = z.strictObject({ reason: textSchema(1, 500).optional() }).meta({ id: 'RejectApprovalRequest' });

/** What an applied change may answer (the action's own refusals). */
const APPLY_ERRORS = ['COMPANY_NOT_FOUND', 'OPERATOR_NOT_FOUND', 'AML_ENTRY_NOT_FOUND', 'COMPANY_ADMIN_REQUIRED', 'INVALID_REQUEST', 'SERVICE_UNAVAILABLE'] as const;

/** Two people for every sensitive change (issue 36): listing, approval by a second operator, rejection. */
export function adminApprovalRequestRoutes(approvals: ApprovalRequests): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/admin/approval-requests', operationId: 'adminListApprovalRequests', tags: ['Admin'],
      summary: 'Sensitive changes awaiting (or past) a second operator, newest first',
      auth: { kind: 'admin' },
      query: ListQuery,
      responses: { 200: { description: 'Requests; `nextCursor` pages on.', schema: z.object({ items: z.array(ApprovalRequestSchema), nextCursor: z.string().nullable() }) } },
      handler: async ({ query }) => {
        const page = await approvals.list(query);
        return { status: 200, body: { items: page.items.map(approvalRequestToApi), nextCursor: page.nextCursor } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/admin/approval-requests/{id}', operationId: 'adminGetApprovalRequest', tags: ['Admin'],
      summary: 'Read an approval request',
      auth: { kind: 'admin' },
      params: IdParams, paramErrors: { id: 'APPROVAL_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request.', schema: ApprovalRequestSchema } },
      errors: ['APPROVAL_REQUEST_NOT_FOUND'],
      handler: async ({ params }) => ({ status: 200, body: approvalRequestToApi(await approvals.get(params.id)) }),
    }),
    defineRoute({
      method: 'POST', path: '/admin/approval-requests/{id}/approve', operationId: 'adminApproveApprovalRequest', tags: ['Admin'],
      summary: 'Approve a sensitive change: it is applied, once',
      description: [
        'Only a named operator independent of the requester may approve (403 SAME_OPERATOR: the requester, or an operator sharing an inviter chain with them — who invited them, whom they invited, or invited by the same operator); never the shared admin token.',
        'A change that weakens a control cannot be approved before `notBefore` (409 APPROVAL_DELAY_PENDING with `notBefore`). Of concurrent approvals one wins; the others get 409 APPROVAL_REQUEST_NOT_PENDING.',
        'A change another service applies (fees, AML) that could not reach it stays APPROVED: the same operator approves again to finish it.',
      ].join('\n\n'),
      auth: { kind: 'admin', sharedToken: 'never' },
      audit: { change: 'gateway' },
      params: IdParams, paramErrors: { id: 'APPROVAL_REQUEST_NOT_FOUND' },
      responses: { 200: { description: 'The request, APPLIED (`result` set).', schema: ApprovedSchema } },
      errors: ['APPROVAL_REQUEST_NOT_FOUND', 'SAME_OPERATOR', 'APPROVAL_REQUEST_NOT_PENDING', 'APPROVAL_DELAY_PENDING', ...APPLY_ERRORS],
      handler: async ({ params, admin, call, audit }) => {
        if (admin?.kind !== 'operator') throw new Error('approve without an operator');
        const out = await approvals.approve(params.id, admin, call, audit!);
        return { status: 200, body: { ...approvalRequestToApi(out.request), ...(out.credentials ? { credentials: out.credentials } : {}) } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/admin/approval-requests/{id}/reject', operationId: 'adminRejectApprovalRequest', tags: ['Admin'],
      summary: 'Reject a pending change (nothing is changed); the company is told',
      description: 'Any named operator, the requester included (a withdrawal); never the shared admin token.',
      auth: { kind: 'admin', sharedToken: 'never' },
      params: IdParams, paramErrors: { id: 'APPROVAL_REQUEST_NOT_FOUND' },
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
