import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { transferV1 } from '@wallet/proto';
import { parseBatchCsv } from './batch-csv.js';
import { assertUniqueReferences, MAX_BATCH_ITEMS, toBatchItemInput, tooManyItems, validateItems, type BatchItemDraft } from './batch-items.js';
import { requestHash } from '../presenters.js';
import type { CreateBatchBody, CreateBatchCsvQuery } from './schemas.js';

/**
 * What a create request carries: JSON (`POST /transfers/batches`, the batch fields in the body) or a
 * CSV file (`POST /transfers/batches/csv`, the lines in the body, the batch fields in the query).
 */
export type BatchUpload =
  { kind: 'json'; body: z.output<typeof CreateBatchBody> } | { kind: 'csv'; rawBody: Buffer | undefined; query: z.output<typeof CreateBatchCsvQuery> };

/**
 * Decodes an upload into the transfer service's CreateBatch request: the envelope, every item
 * validated as a send (an invalid item is a result of the batch, not a refusal of the request), and
 * the request hash that binds a reference to this exact upload (CSV: its bytes and envelope; JSON: the
 * canonical body). References repeated within the upload are refused before anything is sent.
 */
export function createBatchRequest(upload: BatchUpload, idempotencyKey: string | undefined): transferV1.CreateBatchRequest {
  let drafts: BatchItemDraft[];
  let batch: { reference: string | undefined; description: string | undefined; mode: string };
  let hash: string;
  if (upload.kind === 'csv') {
    const { rawBody, query } = upload;
    const raw = rawBody ?? Buffer.alloc(0);
    batch = { reference: query.reference, description: query.description, mode: query.mode ?? 'all' };
    drafts = parseBatchCsv(raw);
    hash = createHash('sha256')
      .update(`csv\n${batch.mode}\n${batch.reference ?? ''}\n${batch.description ?? ''}\n`)
      .update(raw)
      .digest('hex');
  } else {
    const { body } = upload;
    if (body.items.length > MAX_BATCH_ITEMS) throw tooManyItems();
    batch = { reference: body.reference, description: body.description, mode: body.mode };
    drafts = body.items.map((input) => ({ line: null, input }));
    hash = requestHash(body);
  }
  assertUniqueReferences(drafts);
  return {
    reference: batch.reference,
    description: batch.description,
    mode: batch.mode.toUpperCase(),
    source: upload.kind === 'csv' ? 'CSV' : 'JSON',
    requestHash: hash,
    // The transfer service binds the key to the batch it creates: a retry gets that batch.
    idempotencyKey,
    items: validateItems(drafts).map(toBatchItemInput),
  };
}
