import { z } from 'zod';
import type { DashboardAuth } from '../../auth/dashboard-auth.js';
import { batchItemPageToApi, batchToApi } from '../transfers/batches/presenters.js';
import type { TransferClient } from '../../clients/transfer-client.js';
import { BatchItemPageSchema, BatchPageSchema, BatchSchema, ListBatchesQuery, ListBatchItemsQuery } from '../transfers/batches/schemas.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { uuidSchema } from '../../http/validation.js';
import { LOCKOUT_NOTE, RejectBody, rejectWithTotp, SignBody, signWithTotp } from './signing.js';

const BatchParams = z.strictObject({ batchId: uuidSchema() });

const SIGN_ERRORS = [
  'INVALID_TOTP_CODE',
  'ACCOUNT_LOCKED',
  'INSUFFICIENT_ROLE',
  'APPROVAL_NOT_PENDING',
  'APPROVAL_EXPIRED',
  'BATCH_NOT_FOUND',
  'SERVICE_UNAVAILABLE',
] as const;

/**
 * The bulk payouts of the session's company in the dashboard (docs/batches.md, "Multi-signature"):
 * read them, and sign or reject a batch's one approval with a TOTP code, as a single transfer's.
 * Another company's batch reads as unknown (BATCH_NOT_FOUND), as does a malformed id.
 */
export function dashboardBatchRoutes(auth: DashboardAuth, transfers: TransferClient): AnyRoute[] {
  const notFound = { batchId: 'BATCH_NOT_FOUND' } as const;
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/batches',
      operationId: 'dashboardListBatches',
      tags: ['Dashboard'],
      summary: "The company's bulk payouts, newest first (`status=AWAITING_APPROVAL`: the ones to sign)",
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: ListBatchesQuery,
      responses: { 200: { description: 'A page of batches; `nextCursor` pages on.', schema: BatchPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await transfers.listBatches({ state: query.status, limit: query.limit, cursor: query.cursor }, call);
        return { status: 200, body: { items: r.items.map(batchToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/batches/{batchId}',
      operationId: 'dashboardGetBatch',
      tags: ['Dashboard'],
      summary: 'A batch: totals per wallet, counts, progress and its approval',
      auth: { kind: 'session' },
      rateClass: 'READS',
      params: BatchParams,
      paramErrors: notFound,
      responses: { 200: { description: 'The batch.', schema: BatchSchema } },
      errors: ['BATCH_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: batchToApi(await transfers.getBatch({ batchId: params.batchId }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/batches/{batchId}/items',
      operationId: 'dashboardListBatchItems',
      tags: ['Dashboard'],
      summary: "A batch's items, in order",
      auth: { kind: 'session' },
      rateClass: 'READS',
      params: BatchParams,
      paramErrors: notFound,
      query: ListBatchItemsQuery,
      responses: { 200: { description: 'A page of items.', schema: BatchItemPageSchema } },
      errors: ['BATCH_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, query, call }) => {
        const r = await transfers.listBatchItems({ batchId: params.batchId, status: query.status, limit: query.limit, cursor: query.cursor }, call);
        return { status: 200, body: batchItemPageToApi(r) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/batches/{batchId}/sign',
      operationId: 'signBatchApproval',
      tags: ['Dashboard'],
      summary: "Sign a batch's approval with a TOTP code; the signature that reaches the threshold dispatches every item",
      description:
        "Signed by ADMIN or OPERATOR users, each once; ALREADY_SIGNED and the approval's state are checked before the code is spent. " +
        'At quorum the approval is APPROVED and the batch EXECUTING: each item is dispatched as an ordinary transfer. A batch without an approval ' +
        '(not executed yet, or a company without multi-signature) or already decided → 409 APPROVAL_NOT_PENDING. ' +
        LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: BatchParams,
      paramErrors: notFound,
      body: SignBody,
      responses: { 200: { description: 'The batch after the signature.', schema: BatchSchema } },
      errors: [...SIGN_ERRORS, 'ALREADY_SIGNED'],
      handler: async ({ params, body, session, call }) => {
        const b = await signWithTotp(auth, session!, body.totpCode, {
          precheck: () => transfers.signBatchApproval({ batchId: params.batchId, precheck: true }, call),
          sign: () => transfers.signBatchApproval({ batchId: params.batchId, precheck: false }, call),
        });
        return { status: 200, body: batchToApi(b) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/dashboard/batches/{batchId}/reject',
      operationId: 'rejectBatchApproval',
      tags: ['Dashboard'],
      summary: "Reject a batch's approval: every item FAILS with the reason and the batch's funds are released",
      description: 'By an ADMIN or OPERATOR user with a TOTP code. The batch ends FAILED. ' + LOCKOUT_NOTE,
      auth: { kind: 'session' },
      rateClass: 'FINANCIAL',
      params: BatchParams,
      paramErrors: notFound,
      body: RejectBody,
      responses: {
        200: {
          description:
            'The batch after the rejection: FAILED, every item FAILED and its funds released, the approval REJECTED. Only if the ledger ' +
            'could not take a release at once does it still show AWAITING_APPROVAL (approval REJECTED) until the sweepers finish it.',
          schema: BatchSchema,
        },
      },
      errors: [...SIGN_ERRORS],
      handler: async ({ params, body, session, call }) => {
        const b = await rejectWithTotp(auth, session!, body.totpCode, () =>
          transfers.rejectBatchApproval({ batchId: params.batchId, ...(body.reason ? { reason: body.reason } : {}) }, call),
        );
        return { status: 200, body: batchToApi(b) };
      },
    }),
  ];
}
