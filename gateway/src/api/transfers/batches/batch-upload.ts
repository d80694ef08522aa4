import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { invalidRequest } from '@wallet/platform';
import type { transferV1 } from '@wallet/proto';
import { parseBatchCsv } from './batch-csv.js';
import { assertUniqueReferences, MAX_BATCH_ITEMS, toBatchItemInput, tooManyItems, validateItems, type BatchItemDraft } from './batch-items.js';
import { requestHash } from '../presenters.js';
import type { CreateBatchBody, CreateBatchQuery } from './schemas.js';

/** What a create request carries, whichever the media type: JSON (the envelope in the body) or CSV (the lines in the body, the envelope in the query). */
export interface BatchUpload {
  bodyType: string | undefined;
  rawBody: Buffer | undefined;
  query: z.output<typeof CreateBatchQuery>;
  body: z.output<typeof CreateBatchBody>;
}

/**
 * Decodes an upload into the transfer service's CreateBatch request: the envelope, every item
 * validated as a send (an invalid item is a result of the batch, not a refusal of the request), and
 * the request hash that binds a reference to this exact upload (CSV: its bytes and envelope; JSON: the
 * canonical body). References repeated within the upload are refused before anything is sent.
 */
export function createBatchRequest(upload: BatchUpload, idempotencyKey: string | undefined): transferV1.CreateBatchRequest {
  const { bodyType, rawBody, query, body } = upload;
  let drafts: BatchItemDraft[];
  let batch: { reference: string | undefined; description: string | undefined; mode: string };
  let hash: string;
  if (bodyType === 'csv') {
    const raw = rawBody ?? Buffer.alloc(0);
    batch = { reference: query.reference, description: query.description, mode: query.mode ?? 'all' };
    drafts = parseBatchCsv(raw);
    hash = createHash('sha256')
      .update(`csv\n${batch.mode}\n${batch.reference ?? ''}\n${batch.description ?? ''}\n`)
      .update(raw)
      .digest('hex');
  } else {
    const inQuery = Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k]) => k);
    if (inQuery.length > 0) {
      throw invalidRequest(inQuery.map((k) => ({ path: `query.${k}`, message: 'Solo con Content-Type text/csv; en JSON va en el cuerpo.' })));
    }
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
    source: bodyType === 'csv' ? 'CSV' : 'JSON',
    requestHash: hash,
    // The transfer service binds the key to the batch it creates: a retry gets that batch.
    idempotencyKey,
    items: validateItems(drafts).map(toBatchItemInput),
  };
}
