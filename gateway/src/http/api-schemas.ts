import { INSTANT_EXAMPLE, INSTANT_PATTERN } from '@wallet/platform';
import { z } from 'zod';

/**
 * Response shapes of the public API, as zod schemas: they feed the OpenAPI document (components)
 * and the integration tests validate real answers against them, so docs and behaviour agree.
 * Schemas with an `id` become `#/components/schemas/<id>`.
 */

export const FieldProblemSchema = z.object({
  path: z.string().meta({ description: 'Dotted path of the offending field ("" for the whole body).' }),
  message: z.string().meta({ description: 'What is wrong, in Spanish.' }),
}).meta({ id: 'FieldProblem' });

export const ErrorSchema = z.object({
  error: z.string().meta({ description: 'UPPER_SNAKE_CASE code from the error catalogue.', example: 'INVALID_REQUEST' }),
  message: z.string().meta({ description: 'Human-readable message, in Spanish.' }),
  details: z.record(z.string(), z.unknown()).optional().meta({
    description: 'Optional. For INVALID_REQUEST: `{ fields: [{ path, message }] }`.',
  }),
}).meta({ id: 'Error', description: 'Every error answer. 429 adds `retryAfter`; 403 INSUFFICIENT_SCOPE adds `required` and `granted`; 423 ACCOUNT_LOCKED carries `details.retryAfter` (seconds, as the Retry-After header).' });

export const RateLimitErrorSchema = z.object({
  error: z.literal('RATE_LIMIT_EXCEEDED'),
  message: z.string(),
  retryAfter: z.int().meta({ description: 'Seconds to wait (same as the Retry-After header).' }),
}).meta({ id: 'RateLimitError' });

export const ScopeErrorSchema = z.object({
  error: z.literal('INSUFFICIENT_SCOPE'),
  message: z.string(),
  required: z.enum(['READ', 'WRITE']),
  granted: z.enum(['READ', 'WRITE']),
}).meta({ id: 'InsufficientScopeError' });

/**
 * An instant the API returns: RFC 3339 in UTC with six fraction digits (docs/decisions.md), written
 * by the platform's formatInstant. `instant()` also states the pattern: the journal's instants
 * (movements, statements, balance history), exact to the microsecond, each a valid bound.
 */
export const isoDate = () => z.string().meta({ format: 'date-time', example: INSTANT_EXAMPLE });
export const instant = () => z.string().meta({ format: 'date-time', pattern: INSTANT_PATTERN, example: INSTANT_EXAMPLE });
const centsString = () => z.string().regex(/^-?\d+$/).meta({ description: 'Centavos as a decimal string (big-integer safe).' });

export const WalletSchema = z.object({
  rail: z.enum(['BREB', 'ACH']),
  type: z.enum(['FAST', 'ACH']).meta({ description: 'Legacy alias of `rail` (BREB → FAST).', deprecated: true }),
  availableCents: centsString(),
  pendingOutCents: centsString(),
  totalCents: centsString(),
  version: z.int().meta({ description: 'Increments with every movement.' }),
  maxTransferAmount: z.int().meta({ description: 'Largest sendable gross amount whose amount + fee + IVA fits the available balance (capped at the rail cap; 0 under the minimum).' }),
}).meta({ id: 'Wallet' });

export const BalanceSchema = z.object({
  currency: z.literal('COP'),
  wallets: z.array(WalletSchema),
  consolidated: z.object({
    availableCents: centsString(),
    pendingOutCents: centsString(),
    totalCents: centsString(),
    currency: z.literal('COP'),
  }),
}).meta({ id: 'Balance' });

export const BalanceAtSchema = z.object({
  rail: z.enum(['BREB', 'ACH']),
  at: instant().meta({ description: 'The instant asked for, in UTC with microseconds (`2026-11-21T15:00:00.000000Z`).' }),
  currency: z.literal('COP'),
  availableCents: centsString().meta({ description: 'What the company could spend at `at`.' }),
  pendingOutCents: centsString().meta({ description: 'Held for sends still in flight at `at`.' }),
  totalCents: centsString().meta({ description: 'availableCents + pendingOutCents.' }),
  version: z.int().meta({ description: "The wallet's version at `at`: the postings on it up to then (0 before the first)." }),
}).meta({ id: 'BalanceAt' });

const StatementBalanceSchema = z.object({ availableCents: centsString(), pendingOutCents: centsString() });

export const StatementLineSchema = z.object({
  postingId: z.string().meta({ description: "The ledger posting of this line (unique; a movement may have two lines: a failed send's debit and its return)." }),
  postedAt: instant().meta({ description: 'When the posting was made (UTC, microseconds, exactly as the journal keeps it): as `to` it includes this line, as `from` it excludes it.' }),
  postedAtBogota: z.string().meta({ description: 'The same instant in Bogotá time (`…-05:00`).', example: '2026-11-28T11:39:52.123456-05:00' }),
  entry: z.enum(['CREDIT', 'FEE_CHARGE', 'TRANSFER_OUT', 'TRANSFER_OUT_RETURNED', 'TRANSFER_IN', 'TRANSFER_IN_REVERSED', 'CORRECTION']),
  movementId: z.string().nullable().meta({ description: 'The movement (GET /wallets/transactions/{id}); null for a correction without one.' }),
  movementType: z.string().nullable(),
  movementRail: z.string().nullable(),
  movementStatus: z.string().nullable().meta({ description: "The movement's status now (a send pending at `to` may have completed since)." }),
  reference: z.string().nullable(),
  counterparty: z.string().nullable().meta({ description: 'Recipient of a send or payer of an inflow.' }),
  description: z.string().nullable(),
  amountCents: centsString().meta({ description: 'Effect on the available balance: > 0 in, < 0 out (a send: amount + fee + IVA).' }),
  feeCents: centsString().meta({ description: 'Fee charged by this line (< 0: given back).' }),
  ivaCents: centsString().meta({ description: 'IVA on that fee (< 0: given back).' }),
  balanceAfterCents: centsString().meta({ description: 'Available balance after this line.' }),
}).meta({ id: 'StatementLine' });

export const StatementSchema = z.object({
  company: z.object({ name: z.string(), nit: z.string() }),
  rail: z.enum(['BREB', 'ACH']),
  currency: z.literal('COP'),
  timezone: z.literal('America/Bogota'),
  from: instant(), to: instant(),
  fromBogota: z.string(), toBogota: z.string(),
  opening: StatementBalanceSchema.meta({ description: 'The balance at `from` (as GET /wallets/balance/history).' }),
  closing: StatementBalanceSchema.meta({ description: 'The balance at `to`; closing.availableCents = opening.availableCents + Σ lines.amountCents.' }),
  totals: z.object({
    inCents: centsString(), outCents: centsString().meta({ description: 'Positive: the sum of the outgoing lines, unsigned.' }),
    feesCents: centsString(), ivaCents: centsString(), lineCount: z.int(),
  }),
  lines: z.array(StatementLineSchema),
}).meta({ id: 'Statement' });

export const MovementSchema = z.object({
  id: z.string(),
  type: z.enum(['TRANSFER_OUT', 'TRANSFER_IN', 'FEE_CHARGE', 'BALANCE_ADD']),
  rail: z.enum(['BREB', 'ACH', 'PSE']),
  status: z.string().meta({ description: 'PENDING, AWAITING_APPROVAL, EXECUTING, COMPLETED, FAILED, EXPIRED.' }),
  amount: centsString(),
  totalFee: centsString(),
  ivaAmount: centsString(),
  netAmount: centsString(),
  targetName: z.string().nullable(),
  targetDocument: z.string().nullable(),
  reference: z.string().nullable(),
  createdAt: instant(),
  completedAt: instant().nullable(),
}).meta({ id: 'Movement' });

export const CompanySchema = z.object({
  id: z.string().meta({ format: 'uuid' }),
  name: z.string(),
  nit: z.string(),
  taxRegime: z.enum(['COMMON', 'SIMPLE']),
  status: z.enum(['ACTIVE', 'SUSPENDED']),
  multiSigThreshold: z.int(),
  counterpartyDailyLimitCents: z.int(),
  counterpartyMonthlyLimitCents: z.int(),
  rateLimitMultiplier: z.number(),
  createdAt: isoDate(),
  updatedAt: isoDate(),
}).meta({ id: 'Company' });

export const ApiKeySchema = z.object({
  id: z.string().meta({ format: 'uuid' }),
  prefix: z.string().meta({ description: 'First characters of the key, to recognise it.', example: 'wk_test_Ab3x' }),
  scope: z.enum(['READ', 'WRITE']),
  label: z.string(),
  createdAt: isoDate(),
  lastUsedAt: isoDate().nullable(),
  revokedAt: isoDate().nullable(),
}).meta({ id: 'ApiKey' });

export const CreatedApiKeySchema = z.object({
  id: z.string().meta({ format: 'uuid' }),
  key: z.string().optional().meta({ description: 'The secret key, outside production only: shown only in this answer; stored only as a hash. In production it is never in a response: it is e-mailed to the company\'s active dashboard administrators (issue 36).' }),
  prefix: z.string(),
  scope: z.enum(['READ', 'WRITE']),
  label: z.string(),
  createdAt: isoDate(),
}).meta({ id: 'CreatedApiKey' });

export const FeeConfigSchema = z.object({
  operation: z.enum(['BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW']),
  companyId: z.string().nullable().meta({ description: 'null: the default for every company.' }),
  fixedFeeCents: z.int(),
  variableBps: z.int(),
  updatedAt: isoDate(),
}).meta({ id: 'FeeConfig' });

export const AchBankSchema = z.object({
  id: z.int().meta({ description: 'Stable id; the `bankId` of an ACH send.' }),
  name: z.string(),
  achCode: z.string().meta({ description: 'ACH Colombia compensation code.', example: '1007' }),
}).meta({ id: 'AchBank' });

// ---- Transfers (§2.3-§2.6) ------------------------------------------------------------------

export const MovementDetailSchema = MovementSchema.extend({
  bankName: z.string().nullable(),
  bankAccountType: z.string().nullable(),
  bankAccountNumber: z.string().nullable().meta({ description: 'Masked to its last 4 digits.' }),
  description: z.string().nullable(),
  errorMessage: z.string().nullable(),
  batchId: z.string().nullable().meta({ description: 'The bulk payout (POST /transfers/batches) this send is an item of; null otherwise.' }),
}).meta({ id: 'MovementDetail' });

export const MovementPageSchema = z.object({
  items: z.array(MovementSchema),
  nextCursor: z.string().nullable(),
  hasMore: z.boolean(),
}).meta({ id: 'MovementPage' });

export const RecipientSchema = z.object({
  firstName: z.string(), lastName: z.string(), fullName: z.string(), bankName: z.string(),
  bankAccountType: z.string(), status: z.string(), idType: z.string(), idValue: z.string(),
}).meta({ id: 'Recipient' });

export const ResolveKeyResultSchema = z.object({
  found: z.literal(true),
  anchorHandle: z.string(),
  keyType: z.enum(['PHONE', 'EMAIL', 'ALPHANUM', 'NRIC']),
  keyValue: z.string(),
  recipient: RecipientSchema,
}).meta({ id: 'ResolveKeyResult' });

export const ResolveKeyNotFoundSchema = z.object({
  found: z.literal(false),
  error: z.enum(['KEY_NOT_FOUND', 'KEY_INACTIVE', 'INVALID_KEY']),
  message: z.string(),
}).meta({ id: 'ResolveKeyNotFound' });

export const QuoteSchema = z.object({
  amount: z.int(),
  currentBalance: z.bigint().meta({ description: 'Integer centavos. A balance can pass 2^53: it is written exactly, digit for digit (read it with a big-number aware JSON parser).' }),
  feeBreakdown: z.object({
    fixedFee: z.int(), variableFee: z.int(), subtotalFee: z.int(), ivaApplicable: z.boolean(), ivaAmount: z.int(), totalCharged: z.int(),
  }),
  totalCost: z.int(),
  canAfford: z.boolean(),
  message: z.string().nullable(),
}).meta({ id: 'Quote' });

export const TransferSchema = z.object({
  id: z.string(),
  status: z.string().meta({ description: 'PENDING at creation; later COMPLETED or FAILED.' }),
  amount: z.int(), totalFee: z.int(), ivaAmount: z.int(),
  netAmount: z.int().meta({ description: 'amount − totalFee (CONTRACT §2).' }),
  currency: z.literal('COP'),
  rail: z.enum(['BREB', 'ACH']),
  targetName: z.string(), targetDocument: z.string(),
  reference: z.string().nullable(),
  createdAt: isoDate(),
}).meta({ id: 'Transfer' });

export const PendingApprovalTransferSchema = TransferSchema.extend({
  status: z.string().meta({ description: 'AWAITING_APPROVAL at creation; then EXECUTING, PENDING, COMPLETED, FAILED (rejected) or EXPIRED.' }),
  approvalId: z.string().meta({ description: '`appr_` + 32 hex characters.' }),
  threshold: z.int().meta({ description: 'Signatures required.' }),
  expiresAt: isoDate().meta({ description: 'Without quorum by then the transfer expires and its funds are released.' }),
}).meta({ id: 'PendingApprovalTransfer' });

export const ApprovalSignatureSchema = z.object({
  userId: z.string(), email: z.string(), role: z.enum(['ADMIN', 'OPERATOR']), signedAt: isoDate(),
}).meta({ id: 'ApprovalSignature' });

export const ApprovalSchema = z.object({
  approvalId: z.string(),
  transactionId: z.string(),
  amount: z.int(), totalFee: z.int(), ivaAmount: z.int(),
  rail: z.enum(['BREB', 'ACH']),
  targetName: z.string(), targetDocument: z.string(),
  reference: z.string().nullable(), description: z.string().nullable(),
  threshold: z.int(),
  signatures: z.array(ApprovalSignatureSchema),
  status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']),
  createdAt: isoDate(), expiresAt: isoDate(), decidedAt: isoDate().nullable(),
  rejectReason: z.string().nullable(), rejectedBy: z.string().nullable(),
  transactionStatus: z.string().meta({ description: 'The transfer: AWAITING_APPROVAL, EXECUTING, PENDING, COMPLETED, FAILED or EXPIRED.' }),
}).meta({ id: 'Approval' });

export const DashboardUserSchema = z.object({
  id: z.string(), email: z.string(), role: z.enum(['ADMIN', 'OPERATOR', 'VIEWER']), createdAt: isoDate(),
  activatedAt: isoDate().nullable().meta({ description: 'null while an invited user has not chosen a password and confirmed a first TOTP code (cannot log in yet).' }),
  disabledAt: isoDate().nullable(),
}).meta({ id: 'DashboardUser' });

export const AmlEntrySchema = z.object({
  id: z.string(),
  kind: z.enum(['DOCUMENT', 'BANK_ACCOUNT']).meta({ description: 'What is listed: a document, or a bank account (issue 36, finding 6).' }),
  documentNumber: z.string().nullable().meta({ description: 'DOCUMENT entries; null for a bank account.' }),
  bankAccount: z.object({
    bankCode: z.string().meta({ description: 'ACH compensation code.', example: '1007' }),
    accountNumberMasked: z.string().meta({ example: '****8901' }),
  }).nullable().meta({ description: 'BANK_ACCOUNT entries, the number masked (never stored in full); null for a document.' }),
  name: z.string().nullable(), reason: z.string(), createdAt: isoDate(),
}).meta({ id: 'AmlEntry' });

// ---- Deposits (§2.6.1, §2.7, CONTRACT §2) ----------------------------------------------------

export const CreatedDepositSchema = z.object({
  id: z.string().meta({ description: '`dep_…`' }),
  status: z.literal('PENDING_CONFIRM'),
  amountCents: z.int(),
  currency: z.literal('COP'),
  paygatewayUrl: z.string().meta({ description: 'The payment link to share with the payer.' }),
  expiresAt: isoDate(),
  internalRef: z.string().nullable(),
  createdAt: isoDate(),
}).meta({ id: 'CreatedPseDeposit' });

export const DepositSchema = z.object({
  id: z.string(),
  status: z.enum(['PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED']),
  amountCents: centsString(), feeAmountCents: centsString(), ivaAmountCents: centsString(), netAmountCents: centsString(),
  netCreditedCents: centsString().meta({ description: '= netAmountCents.' }),
  currency: z.literal('COP'),
  source: z.enum(['PSE', 'BREB', 'ACH', 'DEPOSIT']),
  brebKey: z.object({ id: z.string(), externalId: z.string(), name: z.string(), value: z.string() }).nullable(),
  payerName: z.string().nullable(), payerFirstName: z.string().nullable(), payerLastName: z.string().nullable(),
  payerDocument: z.string().nullable(), payerBank: z.string().nullable(), payerEmail: z.string().nullable(),
  providerTransferId: z.string().nullable().meta({ description: 'null until the provider confirms.' }),
  providerConfirmedAt: isoDate().nullable(),
  paidAt: isoDate().nullable().meta({ description: '= providerConfirmedAt.' }),
  internalRef: z.string().nullable(),
  createdAt: isoDate(),
}).meta({ id: 'Deposit' });

export const DepositPageSchema = z.object({
  deposits: z.array(DepositSchema),
  pagination: z.object({ total: z.int(), page: z.int(), limit: z.int(), totalPages: z.int() }),
}).meta({ id: 'DepositPage', description: 'Page style (default).' });

export const DepositCursorPageSchema = z.object({
  items: z.array(DepositSchema),
  nextCursor: z.string().nullable(),
}).meta({ id: 'DepositCursorPage', description: 'Cursor style (when the `cursor` query parameter is present).' });

// ---- Collect keys (§2.8, §2.9, CONTRACT §6) --------------------------------------------------

export const CollectKeySchema = z.object({
  id: z.string().meta({ description: '`bkey_…`' }),
  externalId: z.string(),
  name: z.string(),
  key: z.object({ type: z.string(), value: z.string() }),
  state: z.enum(['ACTIVE', 'SUSPENDED', 'DELETED']),
  createdAt: isoDate(),
  deletedAt: isoDate().nullable(),
}).meta({ id: 'CollectKey' });

export const CollectKeyPageSchema = z.object({
  items: z.array(CollectKeySchema),
  nextCursor: z.string().nullable(),
}).meta({ id: 'CollectKeyPage' });

export const CollectKeyQrSchema = z.object({
  qr: z.object({ id: z.string(), type: z.literal('STATIC'), reference: z.string(), isPaid: z.boolean(), createdAt: isoDate() }),
  reused: z.boolean(),
}).meta({ id: 'CollectKeyQr' });

// ---- Bulk payouts (docs/batches.md) ----------------------------------------------------------

const BATCH_STATUSES = ['VALIDATED', 'REJECTED', 'AWAITING_APPROVAL', 'EXECUTING', 'COMPLETED', 'PARTIALLY_FAILED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const;
export const BatchStatusSchema = z.enum(BATCH_STATUSES).meta({
  id: 'BatchStatus',
  description: 'VALIDATED | REJECTED (validation; mode `all` with an invalid item) → EXECUTING → COMPLETED | PARTIALLY_FAILED | FAILED; '
    + 'multi-signature: VALIDATED → AWAITING_APPROVAL → EXECUTING (quorum) | FAILED (rejected) | EXPIRED (no quorum by `approval.expiresAt`); '
    + 'VALIDATED → EXPIRED (not executed within 24 h) | CANCELLED.',
});
const itemStatus = () => z.string().meta({
  description: 'VALID (validated, not executed yet) | INVALID | REJECTED (refused at execution) | NOT_EXECUTED | then the transfer\'s status: PENDING | AWAITING_APPROVAL | EXECUTING | COMPLETED | FAILED | EXPIRED.',
});

export const BatchApprovalSchema = z.object({
  approvalId: z.string(),
  threshold: z.int().meta({ description: 'Signatures required.' }),
  status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']).meta({
    description: 'PENDING until the signature that reaches the threshold (APPROVED: every item is dispatched), a rejection (REJECTED: every item FAILED, funds released) '
      + 'or the deadline `expiresAt` without quorum (EXPIRED: the batch EXPIRED, no item paid, funds released).',
  }),
  signatures: z.array(ApprovalSignatureSchema),
  createdAt: isoDate(),
  expiresAt: isoDate().meta({ description: 'Without quorum by then the batch expires.' }),
  decidedAt: isoDate().nullable(),
  rejectReason: z.string().nullable(),
  rejectedBy: z.string().nullable().meta({ description: 'E-mail of the user who rejected.' }),
}).meta({ id: 'BatchApproval' });

export const BatchSchema = z.object({
  id: z.string().meta({ format: 'uuid' }),
  status: BatchStatusSchema,
  reference: z.string().nullable(),
  description: z.string().nullable(),
  mode: z.enum(['all', 'valid_only']).meta({ description: '`all`: any invalid item rejects the batch; `valid_only`: the valid items run, the invalid ones are NOT_EXECUTED.' }),
  source: z.enum(['json', 'csv']),
  itemCount: z.int(), validCount: z.int(), invalidCount: z.int(),
  totals: z.array(z.object({
    rail: z.enum(['BREB', 'ACH']),
    count: z.int(),
    amount: z.int(), totalFee: z.int(), ivaAmount: z.int(),
    total: z.int().meta({ description: 'amount + totalFee + ivaAmount: what execute reserves on that wallet.' }),
  })).meta({
    description: 'Of the items to execute, per rail wallet. Before execution (VALIDATED) the fees and IVA are an estimate from the '
      + 'fee schedule in force at validation; execution charges the schedule in force then, and from execution on these are the fees paid.',
  }),
  byStatus: z.array(z.object({ status: itemStatus(), count: z.int(), amount: z.int() })).meta({ description: 'Every item, by its current status.' }),
  progress: z.object({
    finished: z.int().meta({ description: 'Items in a final status.' }),
    total: z.int(),
    percent: z.int().min(0).max(100).meta({ description: 'floor(finished × 100 / total).' }),
  }),
  createdAt: isoDate(),
  expiresAt: isoDate().meta({ description: 'A validated batch not executed by then expires.' }),
  executedAt: isoDate().nullable(),
  completedAt: isoDate().nullable(),
  cancelledAt: isoDate().nullable(),
  approvalId: z.string().nullable().meta({ description: 'Multi-signature companies: the batch\'s approval.' }),
  threshold: z.int().meta({ description: 'Signatures required (0 when none).' }),
  approval: BatchApprovalSchema.nullable().meta({ description: 'Multi-signature companies: the one approval of the whole batch, once it was executed (funds held); null otherwise.' }),
  errorMessage: z.string().nullable(),
}).meta({ id: 'Batch' });

export const BatchItemResultSchema = z.object({
  item: z.int().meta({ description: '1-based position in the batch.' }),
  line: z.int().nullable().meta({ description: 'CSV: the line of the file (header = 1); null for JSON.' }),
  valid: z.boolean(),
  error: z.string().optional().meta({
    description: 'Why the item is invalid: an error code (INVALID_REQUEST for a malformed item, or a send\'s refusal: KEY_NOT_FOUND for a well-formed '
      + 'key the directory does not know, INVALID_KEY for a malformed key, KEY_INACTIVE, NAME_MISMATCH, RECIPIENT_BLACKLISTED…).',
  }),
  message: z.string().optional().meta({ description: 'In Spanish.' }),
}).meta({ id: 'BatchItemResult' });

export const BatchCreatedSchema = BatchSchema.extend({
  results: z.array(BatchItemResultSchema).meta({ description: 'One per item, in order.' }),
}).meta({ id: 'BatchCreated' });

export const BatchPageSchema = z.object({
  items: z.array(BatchSchema),
  nextCursor: z.string().nullable(),
}).meta({ id: 'BatchPage' });

export const BatchItemSchema = z.object({
  item: z.int(),
  line: z.int().nullable(),
  status: itemStatus(),
  rail: z.enum(['BREB', 'ACH']).nullable().meta({ description: 'Null for an item too malformed to tell.' }),
  amount: z.int(), totalFee: z.int(), ivaAmount: z.int(),
  targetName: z.string(), targetDocument: z.string(),
  reference: z.string().nullable(),
  description: z.string().nullable(),
  destination: z.string().meta({ description: '`PHONE 3001234567` or `<bank> <type> ****1234`.' }),
  transactionId: z.string().nullable().meta({ description: 'The transfer, once executed (GET /wallets/transactions/{id}).' }),
  error: z.string().nullable(),
  message: z.string().nullable(),
  completedAt: isoDate().nullable(),
}).meta({ id: 'BatchItem' });

export const BatchItemPageSchema = z.object({
  items: z.array(BatchItemSchema),
  nextCursor: z.string().nullable(),
}).meta({ id: 'BatchItemPage' });
