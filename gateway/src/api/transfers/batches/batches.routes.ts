import { z } from 'zod';
import type { CallContext, ErrorCode } from '@wallet/platform';
import { BATCH_CSV_DESCRIPTION, BATCH_CSV_EXAMPLE } from './batch-csv.js';
import { MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS } from './batch-items.js';
import { createBatchRequest, type BatchUpload } from './batch-upload.js';
import { BATCH_RESULTS_COLUMNS, batchResultsCsv } from './batch-results.js';
import { batchCreatedToApi, batchItemPageToApi, batchToApi } from './presenters.js';
import type { TransferClient } from '../../../clients/transfer-client.js';
import {
  BatchCreatedSchema,
  BatchItemPageSchema,
  BatchPageSchema,
  BatchSchema,
  CreateBatchBody,
  CreateBatchCsvQuery,
  CreateBatchQuery,
  ListBatchesQuery,
  ListBatchItemsQuery,
} from './schemas.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../../../http/idempotency-key.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { uuidSchema } from '../../../http/validation.js';

const BatchIdParams = z.strictObject({ id: uuidSchema() });

export interface BatchRouteSettings {
  /** CreateBatch validates every item (directory lookups included): longer than a send, shorter than the Idempotency-Key lock (60 s). */
  createDeadlineMs: number;
  /** ExecuteBatch reserves the funds of every item in one ledger transaction, then dispatches in the background. */
  executeDeadlineMs: number;
}

/** What both ways of creating a batch promise (JSON and CSV). */
const BATCH_CREATE_RULES = [
  'Item `reference`s must not repeat within the batch (422 VALIDATION_ERROR, nothing created). Execute it within 24 h (POST …/execute).',
  'A repeated batch `reference` with the same request, or the same `Idempotency-Key`, answers the batch already created.',
];

const createBatchCommon = {
  auth: { kind: 'apiKey', scope: 'WRITE' },
  rateClass: 'FINANCIAL',
  idempotent: 'bound',
  bodyLimitBytes: MAX_BATCH_BODY_BYTES,
  responses: { 201: { description: 'The batch, validated, with one result per item (also on a reference or key replay).', schema: BatchCreatedSchema } },
  errors: ['VALIDATION_ERROR', 'REFERENCE_CONFLICT', 'WALLET_NOT_PROVISIONED', 'BREB_DIRECTORY_LOOKUP_FAILED', 'SERVICE_UNAVAILABLE'] as ErrorCode[],
} as const;

/** The bulk payouts (docs/batches.md): create (JSON, or a CSV file at …/csv), execute, cancel, read, and the results file. */
export function batchRoutes(transfers: TransferClient, settings: BatchRouteSettings = { createDeadlineMs: 55_000, executeDeadlineMs: 20_000 }): AnyRoute[] {
  const notFound = { id: 'BATCH_NOT_FOUND' } as const;
  const createBatch = async (upload: BatchUpload, call: CallContext, idempotencyKey: string | undefined) => {
    const res = await transfers.createBatch(createBatchRequest(upload, idempotencyKey), call, { deadlineMs: settings.createDeadlineMs });
    return { status: 201, body: batchCreatedToApi(res), ...(res.idempotencyKeyReplayed ? { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } : {}) };
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/transfers/batches',
      operationId: 'createBatch',
      tags: ['Transfers'],
      summary: 'Create a bulk payout (JSON): validate every item, move no money',
      description: [
        `Up to ${MAX_BATCH_ITEMS.toLocaleString('en')} sends in one request (\`items\`: each exactly what POST /transfers/send takes);`,
        'a CSV file goes to POST /transfers/batches/csv. Every item gets every check a send gets,',
        'and nothing is reserved: the answer is the batch (VALIDATED, or REJECTED in mode `all` when an item is invalid) with one result per item.',
        'An item that is not a valid send is an invalid item (`valid: false`, `error`, `message`), not a request error.',
        ...BATCH_CREATE_RULES,
      ].join(' '),
      ...createBatchCommon,
      query: CreateBatchQuery,
      body: CreateBatchBody,
      handler: async ({ body, call, idempotencyKey }) => createBatch({ kind: 'json', body: body! }, call, idempotencyKey),
    }),
    defineRoute({
      method: 'POST',
      path: '/transfers/batches/csv',
      operationId: 'createBatchCsv',
      tags: ['Transfers'],
      summary: 'Create a bulk payout from a CSV file: validate every line, move no money',
      description: [
        `Up to ${MAX_BATCH_ITEMS.toLocaleString('en')} lines (\`Content-Type: text/csv\`, UTF-8; the columns below), the batch fields in the query string.`,
        'The same batch as POST /transfers/batches makes from JSON: every line gets every check a send gets, nothing is reserved, and a line',
        'that is not a valid send is an invalid item (`valid: false`, `error`, `message`, `line`), not a request error.',
        ...BATCH_CREATE_RULES,
      ].join(' '),
      ...createBatchCommon,
      query: CreateBatchCsvQuery,
      csv: { description: BATCH_CSV_DESCRIPTION, example: BATCH_CSV_EXAMPLE, only: true },
      handler: async ({ rawBody, query, call, idempotencyKey }) => createBatch({ kind: 'csv', rawBody, query: query! }, call, idempotencyKey),
    }),
    defineRoute({
      method: 'POST',
      path: '/transfers/batches/{id}/execute',
      operationId: 'executeBatch',
      tags: ['Transfers'],
      summary: 'Execute a validated batch: reserve every valid item at once, then dispatch them',
      description:
        'One reservation per rail wallet for all the valid items (all or nothing: 422 INSUFFICIENT_BALANCE with ' +
        '`details.wallets: [{ rail, requiredCents, availableCents, shortfallCents }]`), then each item is an ordinary transfer carrying the batch id. ' +
        '202 while it runs (EXECUTING). A multi-signature company (threshold ≥ 2): the funds are held the same way and the batch answers 202 ' +
        'AWAITING_APPROVAL with its one `approval`; dashboard signers (ADMIN/OPERATOR, TOTP) sign it at /dashboard/batches/{batchId}/sign and the ' +
        'signature that reaches the threshold dispatches every item; a rejection fails every item and an approval without quorum by `approval.expiresAt` ' +
        'expires the batch, both releasing the funds. Executing again is safe: 202 with the batch while it runs or awaits approval, 200 once it is final.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      params: BatchIdParams,
      paramErrors: notFound,
      responses: {
        202: { description: 'The batch, EXECUTING, or AWAITING_APPROVAL (multi-signature: funds held, its `approval` PENDING).', schema: BatchSchema },
        200: { description: 'The batch as it is: it was executed before and is final.', schema: BatchSchema },
      },
      errors: ['BATCH_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'INSUFFICIENT_BALANCE', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        const b = await transfers.executeBatch({ batchId: params.id }, call, { deadlineMs: settings.executeDeadlineMs });
        // Accepted and still under way (dispatching, or waiting for the signers): 202, on a retry too.
        return { status: b.state === 'EXECUTING' || b.state === 'AWAITING_APPROVAL' ? 202 : 200, body: batchToApi(b) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/transfers/batches/{id}/cancel',
      operationId: 'cancelBatch',
      tags: ['Transfers'],
      summary: 'Cancel a validated batch that was not executed',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      params: BatchIdParams,
      paramErrors: notFound,
      responses: { 200: { description: 'The batch, CANCELLED.', schema: BatchSchema } },
      errors: ['BATCH_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: batchToApi(await transfers.cancelBatch({ batchId: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/transfers/batches',
      operationId: 'listBatches',
      tags: ['Transfers'],
      summary: "The company's batches, newest first",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: ListBatchesQuery,
      responses: { 200: { description: 'A page of batches.', schema: BatchPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await transfers.listBatches({ state: query.status, limit: query.limit, cursor: query.cursor }, call);
        return { status: 200, body: { items: r.items.map(batchToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/transfers/batches/{id}',
      operationId: 'getBatch',
      tags: ['Transfers'],
      summary: 'A batch: its status, totals per wallet, counts per item status and progress',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: BatchIdParams,
      paramErrors: notFound,
      responses: { 200: { description: 'The batch.', schema: BatchSchema } },
      errors: ['BATCH_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: batchToApi(await transfers.getBatch({ batchId: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/transfers/batches/{id}/items',
      operationId: 'listBatchItems',
      tags: ['Transfers'],
      summary: "A batch's items, in order",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: BatchIdParams,
      paramErrors: notFound,
      query: ListBatchItemsQuery,
      responses: { 200: { description: 'A page of items.', schema: BatchItemPageSchema } },
      errors: ['BATCH_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, query, call }) => {
        const r = await transfers.listBatchItems({ batchId: params.id, status: query.status, limit: query.limit, cursor: query.cursor }, call);
        return { status: 200, body: batchItemPageToApi(r) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/transfers/batches/{id}/results.csv',
      operationId: 'getBatchResultsCsv',
      tags: ['Transfers'],
      summary: "A batch's items as a CSV file (streamed)",
      description: `UTF-8 with BOM, \`;\`-separated, CRLF, amounts in pesos with a decimal comma, dates in Bogotá time (as statements). Columns: \`${BATCH_RESULTS_COLUMNS.join(';')}\`.`,
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: BatchIdParams,
      paramErrors: notFound,
      responses: {
        200: {
          description: 'The CSV file.',
          contentType: 'text/csv',
          headers: { 'Content-Disposition': { description: '`attachment; filename="lote-<id>.csv"`.', schema: { type: 'string' } } },
        },
      },
      errors: ['BATCH_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({
        status: 200,
        body: await batchResultsCsv(transfers, params.id, call),
        headers: {
          'Content-Type': 'text/csv; charset=utf-8',
          'Content-Disposition': `attachment; filename="lote-${params.id}.csv"`,
          'Cache-Control': 'private, no-store',
        },
      }),
    }),
  ];
}
