import { z } from 'zod';
import { MovementStatusSchema } from '../wallets/schemas.js';
import { MAX_TRANSFER_CENTS, centsNumber, documentAsOneOf, isoDate } from '../../http/schemas.js';

/** A send's gross amount in an answer: what the request was allowed (100 to the ACH cap). */
export const sentAmount = () => z.int().min(100).max(MAX_TRANSFER_CENTS);
import { centsSchema, textSchema } from '../../http/validation.js';

export const RecipientSchema = z
  .object({
    firstName: z.string(),
    lastName: z.string(),
    fullName: z.string(),
    bankName: z.string(),
    bankAccountType: z.string(),
    status: z.enum(['active']).meta({ description: 'Always `active`: an inactive key answers `found: false` (KEY_INACTIVE) instead.' }),
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
    amount: sentAmount(),
    currentBalance: z.bigint().min(0n).meta({
      minimum: 0,
      description:
        'Integer centavos, a JSON number (the reference types it so), never negative. A balance can pass 2^53 − 1 (9,007,199,254,740,991 centavos, about 90 trillion COP): it is then written exactly, digit for digit, as an int64, which a plain `JSON.parse` rounds. Clients that may hold such balances read it with a big-number aware parser (e.g. `JSON.parse` with a reviver reading the source text, or json-bigint); below 2^53 every parser reads it exactly.',
    }),
    feeBreakdown: z.object({
      fixedFee: centsNumber(),
      variableFee: centsNumber(),
      subtotalFee: centsNumber(),
      ivaApplicable: z.boolean(),
      ivaAmount: centsNumber(),
      totalCharged: centsNumber(),
    }),
    totalCost: centsNumber(),
    canAfford: z.boolean(),
    message: z.string().nullable(),
    policyDecision: z
      .lazy(() => PolicyDecisionSchema.nullable())
      .meta({
        description:
          'What the approval policy in force would decide for this payment now (docs/policies.md "Quotes explain"): the rule, and how many approvals from which roles. Nothing is reserved or counted. Null from a service without approval policies.',
      }),
  })
  .meta({ id: 'Quote' });

export const APPROVER_ROLES = ['ADMIN', 'OPERATOR'] as const;

/** What the company's approval policy decided for a send (docs/policies.md). */
export const PolicyDecisionSchema = z
  .object({
    policyVersion: z.int().min(0).meta({ description: 'The policy version that decided; 0: no policy in force, the multi-signature threshold decided.' }),
    ruleId: z.string().nullable().meta({ description: "The rule that decided; null: no rule matched (the policy's `otherwise`), or no policy." }),
    action: z.enum(['ALLOW', 'REQUIRE_APPROVALS', 'REFUSE']),
    approvals: z.int().min(0).max(10).meta({ description: 'REQUIRE_APPROVALS: the signatures asked; 0 otherwise.' }),
    roles: z.array(z.enum(APPROVER_ROLES)).meta({ description: 'REQUIRE_APPROVALS: the roles whose signatures count; [] otherwise.' }),
    code: z.string().optional().meta({ description: "REFUSE (a quote or a batch line explained before anything is sent): the company's code." }),
    message: z.string().optional().meta({ description: "REFUSE: the company's message, when its rule has one." }),
  })
  .meta({ id: 'PolicyDecision' });

const policyDecision = () =>
  PolicyDecisionSchema.nullable().meta({ description: 'What the approval policy decided (null on transfers from before approval policies).' });

export const TransferSchema = z
  .object({
    id: z.string(),
    status: MovementStatusSchema.meta({ description: 'PENDING at creation; later COMPLETED or FAILED.' }),
    amount: sentAmount(),
    totalFee: centsNumber(),
    ivaAmount: centsNumber(),
    netAmount: z
      .int()
      .min(-MAX_TRANSFER_CENTS)
      .max(MAX_TRANSFER_CENTS)
      .meta({ description: 'amount − totalFee (CONTRACT §2); negative when the fee is larger than the amount (a small send with a fixed fee).' }),
    currency: z.literal('COP'),
    rail: z.enum(['BREB', 'ACH']),
    targetName: z.string(),
    targetDocument: z.string(),
    reference: z.string().nullable(),
    createdAt: isoDate(),
    policyDecision: policyDecision(),
  })
  .meta({ id: 'Transfer' });

export const PendingApprovalTransferSchema = TransferSchema.extend({
  status: MovementStatusSchema.meta({ description: 'AWAITING_APPROVAL at creation; then EXECUTING, PENDING, COMPLETED, FAILED (rejected) or EXPIRED.' }),
  approvalId: z.string().meta({ description: '`appr_` + 32 hex characters.' }),
  threshold: z.int().min(1).max(10).meta({ description: 'Signatures required.' }),
  expiresAt: isoDate().meta({ description: 'Without quorum by then the transfer expires and its funds are released.' }),
  approvalRoles: z
    .array(z.enum(APPROVER_ROLES))
    .min(1)
    .meta({ description: 'The dashboard roles whose signatures count toward `threshold` (the approval policy may ask ADMINs only).' }),
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
    amount: sentAmount(),
    totalFee: centsNumber(),
    ivaAmount: centsNumber(),
    rail: z.enum(['BREB', 'ACH']),
    targetName: z.string(),
    targetDocument: z.string(),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    threshold: z.int().min(1).max(10),
    signatures: z.array(ApprovalSignatureSchema),
    status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']),
    createdAt: isoDate(),
    expiresAt: isoDate(),
    decidedAt: isoDate().nullable(),
    rejectReason: z.string().nullable(),
    rejectedBy: z.string().nullable(),
    transactionStatus: MovementStatusSchema.meta({ description: 'The transfer: AWAITING_APPROVAL, EXECUTING, PENDING, COMPLETED, FAILED or EXPIRED.' }),
    approvalRoles: z
      .array(z.enum(APPROVER_ROLES))
      .meta({ description: 'The dashboard roles whose signatures count toward `threshold` (the approval policy may ask ADMINs only).' }),
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
    counterpartyId: quoteCounterpartyId(),
  })
  .meta({ id: 'BrebQuoteRequest' });

export const AchQuoteBody = z
  .strictObject({
    amount: centsSchema(100).meta({ description: 'Gross centavos (JSON integer), minimum 100; above the ACH cap → 422.' }),
    counterpartyId: quoteCounterpartyId(),
  })
  .meta({ id: 'AchQuoteRequest' });

/** What the transfer service takes as an anchor handle (send-input.ts ANCHOR). */
const ANCHOR_HANDLE = /^[A-Za-z0-9_:.-]{1,128}$/;
/** A BREB holder document as the transfer service takes it: 3-32 letters, digits, dots, hyphens or inner spaces (send-input.ts DOCUMENT). */
const BREB_DOCUMENT = /^[0-9A-Za-z.-][0-9A-Za-z. -]{1,30}[0-9A-Za-z.-]$/;

const sendAmount = () =>
  centsSchema(100).meta({
    maximum: MAX_TRANSFER_CENTS,
    description:
      'Gross centavos (JSON integer), minimum 100, at most the rail cap: BREB 1,200,000,000 (12 million COP), ACH 200,000,000,000 (2,000 million COP); above the cap → 422 AMOUNT_EXCEEDS_BREB_CAP / AMOUNT_EXCEEDS_ACH_CAP.',
  });
const targetAnchorHandle = () =>
  z
    .string()
    .regex(ANCHOR_HANDLE, { message: 'Debe ser el anchorHandle de una consulta de llave (1 a 128 caracteres [A-Za-z0-9_:.-]).' })
    .meta({ description: 'Instead of destination: the anchorHandle of a resolve-key result of the last 10 minutes.' });
const targetName = () => textSchema(1, 200).meta({ description: 'BREB: the holder full name (recipient.fullName of resolve-key). Required for BREB.' });
const targetDocument = () =>
  z.string().trim().max(32).meta({
    description:
      'BREB: the holder document (recipient.idValue), 3-32 letters, digits, dots, hyphens or spaces; missing → 422 TARGET_DOCUMENT_REQUIRED. ACH: optional, and when given it must be destination.bankAccount.documentNumber (separators ignored).',
  });
/** `cpty_` + 24 lower-case letters or digits (api/counterparties COUNTERPARTY_ID; not imported: that module imports this one). */
const COUNTERPARTY_ID = /^cpty_[a-z0-9]{24}$/;
function quoteCounterpartyId() {
  return z
    .string()
    .regex(/^cpty_[a-z0-9]{24}$/, { message: 'Debe ser el id de una contraparte (cpty_ y 24 letras minúsculas o dígitos).' })
    .optional()
    .meta({
      description:
        "The counterparty the payment would go to, so the quote's `policyDecision` sees its verification, tags and whether it was paid before, instead of the key given (a counterparty of the other rail → 400; another company's → 404 COUNTERPARTY_NOT_FOUND).",
      example: 'cpty_k3v9x2m7q1w8e5r4t6y0u2i9',
    });
}
const counterpartyId = () =>
  z.string().regex(COUNTERPARTY_ID, { message: 'Debe ser el id de una contraparte (cpty_ y 24 letras minúsculas o dígitos).' }).meta({
    description:
      "Instead of destination or targetAnchorHandle: one of your counterparties (POST /counterparties); the send goes to its key or account, and the approval policy sees its verification and tags. Another company's or a deleted one → 404 COUNTERPARTY_NOT_FOUND.",
    example: 'cpty_k3v9x2m7q1w8e5r4t6y0u2i9',
  });
const sendExtras = {
  reference: textSchema(1, 100).optional().meta({ description: 'Idempotency key for 60 s (§7.4).' }),
  description: textSchema(0, 255).optional(),
};

const BrebKeyDestinationDoc = z.strictObject({ brebKey: BrebKeyDestination }).meta({ id: 'BrebKeyDestination', description: 'A Bre-B key.' });
const BankAccountDestinationDoc = z
  .strictObject({ bankAccount: BankAccountDestination })
  .meta({ id: 'BankAccountDestination', description: 'A bank account (ACH).' });

/** The three kinds of send, as the document shows them (the server checks SendBody below, with the same rules). */
const SEND_VARIANTS = [
  z
    .strictObject({
      amount: sendAmount(),
      destination: BrebKeyDestinationDoc,
      targetName: targetName(),
      targetDocument: targetDocument().regex(BREB_DOCUMENT).optional(),
      ...sendExtras,
    })
    .meta({ id: 'SendToBrebKeyRequest', description: 'BREB to a key: `destination.brebKey`, `targetName` required.' }),
  z
    .strictObject({
      amount: sendAmount(),
      targetAnchorHandle: targetAnchorHandle(),
      targetName: targetName(),
      targetDocument: targetDocument().regex(BREB_DOCUMENT).optional(),
      ...sendExtras,
    })
    .meta({
      id: 'SendToAnchorRequest',
      description: 'BREB to a key resolved in the last 10 minutes: `targetAnchorHandle` (no `destination`), `targetName` required.',
    }),
  z
    .strictObject({
      amount: sendAmount(),
      destination: BankAccountDestinationDoc,
      targetName: targetName().optional(),
      targetDocument: targetDocument().optional(),
      ...sendExtras,
    })
    .meta({ id: 'SendToBankAccountRequest', description: 'ACH to a bank account: `destination.bankAccount`.' }),
  z
    .strictObject({
      amount: sendAmount(),
      counterpartyId: counterpartyId(),
      targetName: targetName().optional(),
      targetDocument: targetDocument().optional(),
      ...sendExtras,
    })
    .meta({
      id: 'SendToCounterpartyRequest',
      description: "To a counterparty: `counterpartyId` (no `destination`); its key (BREB) or account (ACH), holder and document are the counterparty's.",
    }),
] as const;

/** The fields of a send; SendBody and a bulk payout's item (BatchItemBody) refine them alike. */
const sendFields = z.strictObject({
  amount: sendAmount(),
  destination: z
    .strictObject({ brebKey: BrebKeyDestination.optional(), bankAccount: BankAccountDestination.optional() })
    .refine((d) => (d.brebKey ? 1 : 0) + (d.bankAccount ? 1 : 0) === 1, { message: 'Debe indicar exactamente uno de brebKey o bankAccount.' })
    .optional(),
  targetAnchorHandle: targetAnchorHandle().optional(),
  counterpartyId: counterpartyId().optional(),
  targetName: targetName().optional(),
  targetDocument: targetDocument().optional(),
  ...sendExtras,
});

/** The rules across fields of a send: one destination, BREB's holder, ACH's document. */
function checkSend(b: z.output<typeof sendFields>, ctx: z.RefinementCtx, destinations: string): void {
  if ((b.destination ? 1 : 0) + (b.targetAnchorHandle ? 1 : 0) + (b.counterpartyId ? 1 : 0) !== 1) {
    ctx.addIssue({ code: 'custom', path: ['destination'], message: `Debe indicar ${destinations} (solo uno).` });
  }
  const breb = b.targetAnchorHandle !== undefined || b.destination?.brebKey !== undefined;
  if (breb && !b.targetName) ctx.addIssue({ code: 'custom', path: ['targetName'], message: 'Es obligatorio para envíos BREB.' });
  if (breb && b.targetDocument && !BREB_DOCUMENT.test(b.targetDocument)) {
    ctx.addIssue({
      code: 'custom',
      path: ['targetDocument'],
      message: 'Debe tener de 3 a 32 letras, dígitos, puntos, guiones o espacios.',
    });
  }
  const account = b.destination?.bankAccount;
  if (!breb && account && b.targetDocument && b.targetDocument.replace(/[^0-9A-Za-z]/g, '') !== account.documentNumber) {
    ctx.addIssue({
      code: 'custom',
      path: ['targetDocument'],
      message: 'Si se indica, debe ser el documento de la cuenta (destination.bankAccount.documentNumber).',
    });
  }
}

export const SendBody = documentAsOneOf(
  sendFields
    .superRefine((b, ctx) => checkSend(b, ctx, 'destination, targetAnchorHandle o counterpartyId'))
    .meta({
      id: 'SendTransferRequest',
      description:
        'Exactly one of: `destination.brebKey` (BREB), `targetAnchorHandle` (BREB, a resolved key), `destination.bankAccount` (ACH) or `counterpartyId` (a counterparty: its key or account); `targetName` is required for BREB to a key.',
    }),
  SEND_VARIANTS,
);

/**
 * A bulk payout's item: a send as POST /transfers/send takes it but for `counterpartyId` (a batch's
 * items are checked and routed by the transfer service without counterparties).
 */
export const BatchItemBody = sendFields.omit({ counterpartyId: true }).superRefine((b, ctx) => checkSend(b, ctx, 'destination o targetAnchorHandle'));

/**
 * The send a schedule makes at each run (docs/schedules.md): POST /transfers/send's body without
 * `reference` (each run is told apart by its own key, `schedule:<id>:<nominal time>`; a reference
 * would make two runs within its 60 s window one) and without `targetAnchorHandle` (a resolved key
 * lives 10 minutes; a schedule names the key itself, or a counterparty).
 */
const scheduledSendFields = sendFields.omit({ reference: true, targetAnchorHandle: true });
export const ScheduledSendBody = documentAsOneOf(
  scheduledSendFields
    .superRefine((b, ctx) => checkSend(b, ctx, 'destination o counterpartyId'))
    .meta({
      id: 'ScheduledSendRequest',
      description:
        'What each run sends: exactly one of `destination.brebKey` (BREB), `destination.bankAccount` (ACH) or `counterpartyId`; `targetName` is required for BREB to a key.',
    }),
  SEND_VARIANTS.filter((v) => !('targetAnchorHandle' in v.shape)).map((v) =>
    (v as z.ZodObject).omit({ reference: true }).meta({ id: `Scheduled${String(v.meta()?.id)}`, description: String(v.meta()?.description ?? '') }),
  ),
);

/**
 * An item of the bulk payout a schedule makes at each run: a scheduled send (no `reference`, no
 * `targetAnchorHandle`) without `counterpartyId` (a bulk payout's items name their destination).
 */
export const ScheduledBatchItemBody = documentAsOneOf(
  scheduledSendFields
    .omit({ counterpartyId: true })
    .superRefine((b, ctx) => checkSend(b, ctx, 'destination'))
    .meta({
      id: 'ScheduledBatchItem',
      description: 'One payout of the batch: `destination.brebKey` (BREB, `targetName` required) or `destination.bankAccount` (ACH).',
    }),
  SEND_VARIANTS.filter((v) => !('targetAnchorHandle' in v.shape) && !('counterpartyId' in v.shape)).map((v) =>
    (v as z.ZodObject)
      .omit({ reference: true })
      .meta({ id: `ScheduledBatchItem${String(v.meta()?.id).replace(/^SendTo|Request$/g, '')}`, description: String(v.meta()?.description ?? '') }),
  ),
);
