import { z } from 'zod';
import type { DashboardAuth } from '../../auth/dashboard-auth.js';
import type { TransferClient } from '../../clients/transfer-client.js';
import { approvalToApi } from '../transfers/presenters.js';
import { ApprovalParams, ApprovalQuery } from './schemas.js';
import { ApprovalSchema } from '../transfers/schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { LOCKOUT_NOTE, RejectBody, rejectWithTotp, SignBody, signWithTotp } from './signing.js';

/** Multi-signature approvals of the session's company (CONTRACT §5). */
export function dashboardRoutes(auth: DashboardAuth, transfers: TransferClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/approvals',
      operationId: 'listApprovals',
      tags: ['Dashboard'],
      summary: "The company's approvals in one status (PENDING by default), newest first",
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: ApprovalQuery,
      responses: {
        200: { description: 'Approvals; `nextCursor` pages on.', schema: z.object({ items: z.array(ApprovalSchema), nextCursor: z.string().nullable() }) },
      },
      handler: async ({ query, call }) => {
        const r = await transfers.listApprovals({ status: query.status, limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}) }, call);
        return { status: 200, body: { items: r.items.map(approvalToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/approvals/{approvalId}/sign',
      operationId: 'signApproval',
      tags: ['Dashboard'],
      summary: 'Sign an approval with a TOTP code; the signature that reaches the threshold dispatches the transfer',
      description:
        'Signed by ADMIN or OPERATOR users, each once. At quorum the transaction becomes EXECUTING, is dispatched, then PENDING → COMPLETED/FAILED as any send. ' +
        LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: ApprovalParams,
      paramErrors: { approvalId: 'APPROVAL_NOT_FOUND' },
      body: SignBody,
      responses: { 200: { description: 'The approval after the signature.', schema: ApprovalSchema } },
      errors: ['INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INSUFFICIENT_ROLE', 'ALREADY_SIGNED', 'APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_FOUND'],
      handler: async ({ params, body, session, call }) => {
        const a = await signWithTotp(auth, session!, body.totpCode, {
          precheck: () => transfers.signApproval({ approvalId: params.approvalId, precheck: true }, call),
          sign: () => transfers.signApproval({ approvalId: params.approvalId, precheck: false }, call),
        });
        return { status: 200, body: approvalToApi(a) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/approvals/{approvalId}/reject',
      operationId: 'rejectApproval',
      tags: ['Dashboard'],
      summary: 'Reject an approval: the transaction FAILS with the reason and its funds are released',
      description: LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: ApprovalParams,
      paramErrors: { approvalId: 'APPROVAL_NOT_FOUND' },
      body: RejectBody,
      responses: { 200: { description: 'The approval, REJECTED.', schema: ApprovalSchema } },
      errors: ['INVALID_TOTP_CODE', 'ACCOUNT_LOCKED', 'INSUFFICIENT_ROLE', 'APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_FOUND'],
      handler: async ({ params, body, session, call }) => {
        const a = await rejectWithTotp(auth, session!, body.totpCode, () =>
          transfers.rejectApproval({ approvalId: params.approvalId, ...(body.reason ? { reason: body.reason } : {}) }, call),
        );
        return { status: 200, body: approvalToApi(a) };
      },
    }),
  ];
}
