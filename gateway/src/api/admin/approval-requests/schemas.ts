import { z } from 'zod';
import { isoDate } from '../../../http/schemas.js';
import { APPROVAL_ACTION_NAMES, APPROVAL_STATUSES } from '../../../app/approval-requests.js';

export const ApprovalStatusSchema = z.enum(APPROVAL_STATUSES as unknown as ['PENDING_APPROVAL', 'APPROVED', 'APPLIED', 'FAILED', 'REJECTED', 'EXPIRED']);
export const ApprovalActionSchema = z.enum(
  APPROVAL_ACTION_NAMES as unknown as [
    'COMPANY_UPDATE',
    'API_KEY_ISSUE',
    'DASHBOARD_USER_ADD',
    'OPERATOR_INVITE',
    'OPERATOR_DISABLE',
    'FEE_SET',
    'AML_REMOVE',
    'EXCEPTION_RESOLVE',
  ],
);

export const ApprovalRequestSchema = z
  .object({
    id: z.string().meta({ description: '`apr_` + 32 hex digits.', pattern: '^apr_[0-9a-f]{32}$', example: 'apr_3ff49a3c96cb5ddd34439167541c51c3' }),
    action: ApprovalActionSchema.meta({
      description:
        'COMPANY_UPDATE (a lower multi-signature threshold or a looser counterparty limit), API_KEY_ISSUE (a WRITE key), DASHBOARD_USER_ADD, OPERATOR_INVITE, OPERATOR_DISABLE, FEE_SET, AML_REMOVE, EXCEPTION_RESOLVE (a money exception resolved by judgement: `{ exceptionId, action, note }`).',
    }),
    companyId: z.string().nullable().meta({ format: 'uuid', example: '54d93216-33a0-46e9-b5ce-766257f40114' }),
    targetId: z.string().nullable().meta({ description: 'The operator, AML entry or money exception (`exc_…`) the change is about.' }),
    payload: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The change asked for, as validated (never a credential).', example: { multiSigThreshold: 0 } }),
    status: ApprovalStatusSchema.meta({
      description:
        'PENDING_APPROVAL (nothing changed) → APPROVED (a second operator approved; another service is applying it) → APPLIED; or REJECTED, EXPIRED (not decided before `expiresAt`), FAILED (the change was refused when applied; `errorCode` says why).',
    }),
    requestedBy: z.string().meta({ description: 'Operator id of the maker.', format: 'uuid', example: '1e07352e-5a21-4f33-8f1f-39e6405ee9e9' }),
    requestedAt: isoDate(),
    notBefore: isoDate().meta({
      description: 'A change that weakens a control cannot be approved before this (the company was told at `requestedAt` and may object).',
    }),
    expiresAt: isoDate(),
    decidedBy: z.string().nullable().meta({ format: 'uuid', example: '6c1d2f0a-8b7e-4c3d-9a5f-0e1b2c3d4e5f' }),
    decidedAt: isoDate().nullable(),
    reason: z.string().nullable().meta({ description: 'Why it was rejected.', example: 'Sin soporte' }),
    result: z.unknown().nullable().meta({
      description: 'What was applied (the company, the key record, the user, the operator, the fee, the entry, the resolved exception); never a credential.',
    }),
    errorCode: z.string().nullable().meta({ example: 'EXCEPTION_NOT_OPEN' }),
    completedAt: isoDate().nullable(),
  })
  .meta({ id: 'ApprovalRequest' });

/** The 202 of a route whose change waits for a second operator. */
export const PENDING_APPROVAL_RESPONSE = {
  description:
    'Sensitive change by a named operator: nothing changed yet; the approval request (PENDING_APPROVAL) that a second, independent operator approves at POST /admin/approval-requests/{id}/approve.',
  schema: ApprovalRequestSchema,
} as const;
