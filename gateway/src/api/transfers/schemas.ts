import { z } from 'zod';
import { MovementStatusSchema } from '../wallets/schemas.js';
import { isoDate } from '../../http/schemas.js';
import { centsSchema, textSchema } from '../../http/validation.js';

export const RecipientSchema = z
  .object({
    firstName: z.string(),
    lastName: z.string(),
    fullName: z.string(),
    bankName: z.string(),
    bankAccountType: z.string(),
    status: z.string(),
    idType: z.string(),
    idValue: z.string(),
  })
  .meta({ id: 'Recipient' });

export const ResolveKeyResultSchema = z
  .object({
    found: z.literal(true),
    anchorHandle: z.string(),
    keyType: z.enum(['PHONE', 'EMAIL', 'ALPHANUM', 'NRIC']),
    keyValue: z.string(),
    recipient: RecipientSchema,
  })
  // Not `ResolveKeyResult`: orval names each operation's answer type `<OperationId>Result`, so a
  // schema of that name collides with operation resolveKey's (TS2300 in its default output).
  .meta({ id: 'KeyResolution' });

export const ResolveKeyNotFoundSchema = z
  .object({
    found: z.literal(false),
    error: z.enum(['KEY_NOT_FOUND', 'KEY_INACTIVE', 'INVALID_KEY']),
    message: z.string(),
  })
  .meta({ id: 'ResolveKeyNotFound' });

export const QuoteSchema = z
  .object({
    amount: z.int(),
    currentBalance: z.bigint().meta({
      description: 'Integer centavos. A balance can pass 2^53: it is written exactly, digit for digit (read it with a big-number aware JSON parser).',
    }),
    feeBreakdown: z.object({
      fixedFee: z.int(),
      variableFee: z.int(),
      subtotalFee: z.int(),
      ivaApplicable: z.boolean(),
      ivaAmount: z.int(),
      totalCharged: z.int(),
    }),
    totalCost: z.int(),
    canAfford: z.boolean(),
    message: z.string().nullable(),
  })
  .meta({ id: 'Quote' });

export const TransferSchema = z
  .object({
    id: z.string(),
    status: MovementStatusSchema.meta({ description: 'PENDING at creation; later COMPLETED or FAILED.' }),
    amount: z.int(),
    totalFee: z.int(),
    ivaAmount: z.int(),
    netAmount: z.int().meta({ description: 'amount − totalFee (CONTRACT §2).' }),
    currency: z.literal('COP'),
    rail: z.enum(['BREB', 'ACH']),
    targetName: z.string(),
    targetDocument: z.string(),
    reference: z.string().nullable(),
    createdAt: isoDate(),
  })
  .meta({ id: 'Transfer' });

export const PendingApprovalTransferSchema = TransferSchema.extend({
  status: MovementStatusSchema.meta({ description: 'AWAITING_APPROVAL at creation; then EXECUTING, PENDING, COMPLETED, FAILED (rejected) or EXPIRED.' }),
  approvalId: z.string().meta({ description: '`appr_` + 32 hex characters.' }),
  threshold: z.int().meta({ description: 'Signatures required.' }),
  expiresAt: isoDate().meta({ description: 'Without quorum by then the transfer expires and its funds are released.' }),
}).meta({ id: 'PendingApprovalTransfer' });

export const ApprovalSignatureSchema = z
  .object({
    userId: z.string(),
    email: z.string(),
    role: z.enum(['ADMIN', 'OPERATOR']),
    signedAt: isoDate(),
  })
  .meta({ id: 'ApprovalSignature' });

// ---- Request bodies ----

const KEY_TYPES = ['PHONE', 'EMAIL', 'ALPHANUM', 'NRIC'] as const;

const keyValueSchema = () =>
  z
    .string()
    .refine(
      (s) => {
        const n = [...s].length;
        return n >= 3 && n <= 64;
      },
      { message: 'Debe tener entre 3 y 64 caracteres.' },
    )
    .meta({ minLength: 3, maxLength: 64 });

const BrebKeyDestination = z.strictObject({ type: z.enum(KEY_TYPES), value: keyValueSchema() });

const digits = (min: number, max: number) => z.string().regex(new RegExp(`^\\d{${min},${max}}$`), { message: `Debe tener entre ${min} y ${max} dígitos.` });

const BankAccountDestination = z.strictObject({
  bankId: z.int().min(1).max(1_000_000).meta({ description: 'An id from GET /dictionaries/banks/ach.' }),
  accountTypeId: z.union([z.literal(20), z.literal(21), z.literal(22)]).meta({ description: '20 Ahorros, 21 Corriente, 22 Depósito electrónico.' }),
  accountNumber: digits(4, 32),
  documentTypeId: z.union([z.literal(1), z.literal(4), z.literal(5), z.literal(8)]).meta({ description: '1 CC, 4 CE, 5 Pasaporte, 8 NIT.' }),
  documentNumber: digits(5, 15),
  holderFirstName: textSchema(1, 64),
  holderLastName: textSchema(1, 64),
});

export const ApprovalSchema = z
  .object({
    approvalId: z.string(),
    transactionId: z.string(),
    amount: z.int(),
    totalFee: z.int(),
    ivaAmount: z.int(),
    rail: z.enum(['BREB', 'ACH']),
    targetName: z.string(),
    targetDocument: z.string(),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    threshold: z.int(),
    signatures: z.array(ApprovalSignatureSchema),
    status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']),
    createdAt: isoDate(),
    expiresAt: isoDate(),
    decidedAt: isoDate().nullable(),
    rejectReason: z.string().nullable(),
    rejectedBy: z.string().nullable(),
    transactionStatus: z.string().meta({ description: 'The transfer: AWAITING_APPROVAL, EXECUTING, PENDING, COMPLETED, FAILED or EXPIRED.' }),
  })
  .meta({ id: 'Approval' });

export const ResolveKeyBody = z
  .strictObject({
    keyValue: keyValueSchema().meta({
      description: 'Phone (10 digits starting with 3), e-mail, alias (3-40 alphanumerics, optional @) or document (5-15 digits).',
    }),
    keyType: z.enum([...KEY_TYPES, 'AUTO']).default('AUTO'),
  })
  .meta({ id: 'ResolveKeyRequest' });

export const QuoteBody = z
  .strictObject({
    amount: centsSchema(100).meta({ description: 'Gross centavos (JSON integer), minimum 100; above the BREB cap → 422.' }),
    keyValue: keyValueSchema(),
    keyType: z
      .enum([...KEY_TYPES, 'AUTO'])
      .default('AUTO')
      .meta({ description: 'Omitted: AUTO (CONTRACT §2).' }),
  })
  .meta({ id: 'BrebQuoteRequest' });

export const AchQuoteBody = z
  .strictObject({
    amount: centsSchema(100).meta({ description: 'Gross centavos (JSON integer), minimum 100; above the ACH cap → 422.' }),
  })
  .meta({ id: 'AchQuoteRequest' });

export const SendBody = z
  .strictObject({
    amount: centsSchema(100).meta({ description: 'Gross centavos (JSON integer), minimum 100.' }),
    destination: z
      .strictObject({ brebKey: BrebKeyDestination.optional(), bankAccount: BankAccountDestination.optional() })
      .refine((d) => (d.brebKey ? 1 : 0) + (d.bankAccount ? 1 : 0) === 1, { message: 'Debe indicar exactamente uno de brebKey o bankAccount.' })
      .optional(),
    targetAnchorHandle: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: 'Instead of destination: the anchorHandle of a resolve-key result of the last 10 minutes.' }),
    targetName: textSchema(1, 200).optional().meta({ description: 'BREB: the holder full name (recipient.fullName of resolve-key). Required for BREB.' }),
    targetDocument: z
      .string()
      .trim()
      .max(32)
      .optional()
      .meta({ description: 'BREB: the holder document (recipient.idValue). Missing → 422 TARGET_DOCUMENT_REQUIRED.' }),
    reference: textSchema(1, 100).optional().meta({ description: 'Idempotency key for 60 s (§7.4).' }),
    description: textSchema(0, 255).optional(),
  })
  .superRefine((b, ctx) => {
    if ((b.destination ? 1 : 0) + (b.targetAnchorHandle ? 1 : 0) !== 1) {
      ctx.addIssue({ code: 'custom', path: ['destination'], message: 'Debe indicar destination o targetAnchorHandle (solo uno).' });
    }
    const breb = b.targetAnchorHandle !== undefined || b.destination?.brebKey !== undefined;
    if (breb && !b.targetName) ctx.addIssue({ code: 'custom', path: ['targetName'], message: 'Es obligatorio para envíos BREB.' });
  })
  .meta({ id: 'SendTransferRequest' });
