import { z } from 'zod';
import { ApprovalSignatureSchema, PolicyDecisionSchema } from '../schemas.js';
import { centsNumber, isoDate } from '../../../http/schemas.js';
import { MAX_BATCH_ITEMS } from './batch-items.js';
import { textSchema, queryInt } from '../../../http/validation.js';

const BATCH_STATUSES = ['VALIDATED', 'REJECTED', 'AWAITING_APPROVAL', 'EXECUTING', 'COMPLETED', 'PARTIALLY_FAILED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const;
export const BatchStatusSchema = z.enum(BATCH_STATUSES).meta({
  id: 'BatchStatus',
  description:
    'VALIDATED | REJECTED (validation; mode `all` with an invalid item) → EXECUTING → COMPLETED | PARTIALLY_FAILED | FAILED; ' +
    'multi-signature: VALIDATED → AWAITING_APPROVAL → EXECUTING (quorum) | FAILED (rejected) | EXPIRED (no quorum by `approval.expiresAt`); ' +
    'VALIDATED → EXPIRED (not executed within 24 h) | CANCELLED.',
});
/** A batch item's status (the transfer service's ItemStatus, transfer.proto BatchItem.status). */
export const BATCH_ITEM_STATUSES = [
  'VALID',
  'INVALID',
  'REJECTED',
  'NOT_EXECUTED',
  'PENDING',
  'AWAITING_APPROVAL',
  'EXECUTING',
  'COMPLETED',
  'FAILED',
  'EXPIRED',
] as const;
export const BatchItemStatusSchema = z.enum(BATCH_ITEM_STATUSES).meta({
  id: 'BatchItemStatus',
  description:
    "VALID (validated, not executed yet) | INVALID | REJECTED (refused at execution) | NOT_EXECUTED | then the transfer's status: PENDING | AWAITING_APPROVAL | EXECUTING | COMPLETED | FAILED | EXPIRED.",
});
const itemStatus = () => BatchItemStatusSchema;
/** Sums of centavos (never negative). */
const sumCents = () => centsNumber();

export const BatchApprovalSchema = z
  .object({
    approvalId: z.string(),
    threshold: z.int().min(1).max(10).meta({ description: 'Signatures required.' }),
    status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']).meta({
      description:
        'PENDING until the signature that reaches the threshold (APPROVED: every item is dispatched), a rejection (REJECTED: every item FAILED, funds released) ' +
        'or the deadline `expiresAt` without quorum (EXPIRED: the batch EXPIRED, no item paid, funds released).',
    }),
    signatures: z.array(ApprovalSignatureSchema),
    createdAt: isoDate(),
    expiresAt: isoDate().meta({ description: 'Without quorum by then the batch expires.' }),
    decidedAt: isoDate().nullable(),
    rejectReason: z.string().nullable(),
    rejectedBy: z.string().nullable().meta({ description: 'E-mail of the user who rejected.' }),
  })
  .meta({ id: 'BatchApproval' });

export const BatchSchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    status: BatchStatusSchema,
    reference: z.string().nullable(),
    description: z.string().nullable(),
    mode: z
      .enum(['all', 'valid_only'])
      .meta({ description: '`all`: any invalid item rejects the batch; `valid_only`: the valid items run, the invalid ones are NOT_EXECUTED.' }),
    source: z.enum(['json', 'csv']),
    itemCount: z.int().min(1).max(MAX_BATCH_ITEMS),
    validCount: z.int().min(0).max(MAX_BATCH_ITEMS),
    invalidCount: z.int().min(0).max(MAX_BATCH_ITEMS),
    totals: z
      .array(
        z.object({
          rail: z.enum(['BREB', 'ACH']),
          count: z.int().min(0).max(MAX_BATCH_ITEMS),
          amount: sumCents(),
          totalFee: sumCents(),
          ivaAmount: sumCents(),
          total: sumCents().meta({ description: 'amount + totalFee + ivaAmount: what execute reserves on that wallet.' }),
        }),
      )
      .meta({
        description:
          'Of the items to execute, per rail wallet. Before execution (VALIDATED) the fees and IVA are an estimate from the ' +
          'fee schedule in force at validation; execution charges the schedule in force then, and from execution on these are the fees paid.',
      }),
    byStatus: z
      .array(z.object({ status: itemStatus(), count: z.int().min(0).max(MAX_BATCH_ITEMS), amount: sumCents() }))
      .meta({ description: 'Every item, by its current status.' }),
    progress: z.object({
      finished: z.int().min(0).max(MAX_BATCH_ITEMS).meta({ description: 'Items in a final status.' }),
      total: z.int().min(0).max(MAX_BATCH_ITEMS),
      percent: z.int().min(0).max(100).meta({ description: 'floor(finished × 100 / total).' }),
    }),
    createdAt: isoDate(),
    expiresAt: isoDate().meta({ description: 'A validated batch not executed by then expires.' }),
    executedAt: isoDate().nullable(),
    completedAt: isoDate().nullable(),
    cancelledAt: isoDate().nullable(),
    approvalId: z.string().nullable().meta({ description: "Multi-signature companies: the batch's approval." }),
    threshold: z.int().min(0).max(10).meta({ description: 'Signatures required (0 when none).' }),
    approval: BatchApprovalSchema.nullable().meta({
      description: 'Multi-signature companies: the one approval of the whole batch, once it was executed (funds held); null otherwise.',
    }),
    errorMessage: z.string().nullable(),
  })
  .meta({ id: 'Batch' });

export const BatchItemResultSchema = z
  .object({
    item: z.int().min(1).max(MAX_BATCH_ITEMS).meta({ description: '1-based position in the batch.' }),
    line: z
      .int()
      .min(2)
      .max(MAX_BATCH_ITEMS + 1)
      .nullable()
      .meta({ description: 'CSV: the line of the file (header = 1); null for JSON.' }),
    valid: z.boolean(),
    error: z
      .string()
      .optional()
      .meta({
        description:
          "Why the item is invalid: an error code (INVALID_REQUEST for a malformed item, or a send's refusal: KEY_NOT_FOUND for a well-formed " +
          'key the directory does not know, INVALID_KEY for a malformed key, KEY_INACTIVE, NAME_MISMATCH, RECIPIENT_BLACKLISTED…).',
      }),
    message: z.string().optional().meta({ description: 'In Spanish.' }),
    policyDecision: PolicyDecisionSchema.optional().meta({
      description:
        'A valid item of a VALIDATED batch: what the approval policy in force would decide for it if the batch were executed now (a REFUSE item would be refused alone).',
    }),
  })
  .meta({ id: 'BatchItemResult' });

export const BatchCreatedSchema = BatchSchema.extend({
  results: z.array(BatchItemResultSchema).meta({ description: 'One per item, in order.' }),
  policyDecision: PolicyDecisionSchema.nullable().meta({
    description:
      'A VALIDATED batch: the one approval it would wait for if executed now, the strictest its total or an accepted item asks (docs/policies.md "Bulk payouts"); null otherwise. Nothing is reserved or counted: execution decides again with the policy then in force.',
  }),
  totalPolicyDecision: PolicyDecisionSchema.nullable().meta({
    description: 'A VALIDATED batch: the decision for the total of the items the policy accepts (a REFUSE refuses the execution); null otherwise.',
  }),
}).meta({ id: 'BatchCreated' });

export const BatchPageSchema = z
  .object({
    items: z.array(BatchSchema),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'BatchPage' });

export const BatchItemSchema = z
  .object({
    item: z.int().min(1).max(MAX_BATCH_ITEMS),
    line: z
      .int()
      .min(2)
      .max(MAX_BATCH_ITEMS + 1)
      .nullable(),
    status: itemStatus(),
    rail: z.enum(['BREB', 'ACH']).nullable().meta({ description: 'Null for an item too malformed to tell.' }),
    amount: z
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .meta({ description: 'As the item gave it (0 for an item too malformed to tell): an invalid item may be out of bounds.' }),
    totalFee: sumCents(),
    ivaAmount: sumCents(),
    targetName: z.string(),
    targetDocument: z.string(),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    destination: z.string().meta({ description: '`PHONE 3001234567` or `<bank> <type> ****1234`.' }),
    transactionId: z.string().nullable().meta({ description: 'The transfer, once executed (GET /wallets/transactions/{id}).' }),
    error: z.string().nullable(),
    message: z.string().nullable(),
    completedAt: isoDate().nullable(),
  })
  .meta({ id: 'BatchItem' });

export const BatchItemPageSchema = z
  .object({
    items: z.array(BatchItemSchema),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'BatchItemPage' });

export const BATCH_MODES = ['all', 'valid_only'] as const;

/** The JSON envelope: checked as a whole; each item on its own afterwards (an item that fails is an invalid item, not a 400). */
export const CreateBatchBody = z
  .strictObject({
    reference: textSchema(1, 100)
      .optional()
      .meta({ description: 'Makes the request idempotent for good: the same request → that batch; another → 409 REFERENCE_CONFLICT.' }),
    description: textSchema(0, 255).optional(),
    mode: z.enum(BATCH_MODES).default('all').meta({ description: '`all` (default): any invalid item rejects the batch; `valid_only`: the valid items run.' }),
    // Documented as a send, but any value is taken: an item that is not a valid send is an invalid
    // item of the batch, not a refusal of the request (so the schema must not refuse it either).
    items: z
      .array(
        z.unknown().meta({
          anyOf: [{ $ref: '#/components/schemas/SendTransferRequest' }, {}],
          description: 'A send, as POST /transfers/send takes it but for `counterpartyId` (not taken in a bulk payout: the item is invalid).',
        }),
      )
      .min(1, { message: 'El lote debe tener al menos un ítem.' })
      .meta({
        maxItems: MAX_BATCH_ITEMS,
        description: `1..${MAX_BATCH_ITEMS} items, each exactly what POST /transfers/send takes (more → 422 VALIDATION_ERROR). An item that is not a valid send does not fail the request: it comes back as an invalid item.`,
      }),
  })
  .meta({ id: 'CreateBatchRequest' });

/** Empty text in the query string reads as absent (`?reference=&description=`). */
const optionalQueryText = (max: number) =>
  textSchema(0, max)
    .optional()
    .transform((s) => (s ? s : undefined));

/** The JSON operation takes no query parameters: a batch field there would be ignored (a `reference` losing its protection), so it is refused. */
export const CreateBatchQuery = z.strictObject({});

export const CreateBatchCsvQuery = z.strictObject({
  reference: optionalQueryText(100).meta({
    description: 'The batch reference, 1-100 characters: the same file and fields → that batch; another → 409 REFERENCE_CONFLICT.',
  }),
  description: optionalQueryText(255).meta({ description: 'The batch description.' }),
  mode: z.enum(BATCH_MODES).optional().meta({ description: '`all` (default): any invalid line rejects the batch; `valid_only`: the valid lines run.' }),
});

export const ListBatchesQuery = z.strictObject({
  status: BatchStatusSchema.optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().min(1).max(512).optional().meta({ description: '`nextCursor` of the previous page.' }),
});

export const ListBatchItemsQuery = z.strictObject({
  status: BatchItemStatusSchema.optional(),
  limit: queryInt(1, 1000, 100),
  cursor: z.string().min(1).max(512).optional().meta({ description: '`nextCursor` of the previous page.' }),
});
