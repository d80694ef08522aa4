import { z } from 'zod';
import { isoDate, centsString, count, centsNumber, MAX_TRANSFER_CENTS } from '../../http/schemas.js';
import { centsSchema, textSchema } from '../../http/validation.js';

export const CreatedDepositSchema = z
  .object({
    id: z.string().meta({ description: '`dep_…`' }),
    status: z.literal('PENDING_CONFIRM'),
    amountCents: centsNumber(),
    currency: z.literal('COP'),
    paygatewayUrl: z.string().meta({ description: 'The payment link to share with the payer.' }),
    expiresAt: isoDate(),
    internalRef: z.string().nullable(),
    createdAt: isoDate(),
  })
  .meta({ id: 'CreatedPseDeposit' });

export const DepositSchema = z
  .object({
    id: z.string(),
    status: z.enum(['PENDING_CONFIRM', 'ASSIGNED', 'FAILED', 'EXPIRED', 'UNASSIGNED', 'REVERSED']),
    amountCents: centsString(),
    feeAmountCents: centsString(),
    ivaAmountCents: centsString(),
    netAmountCents: centsString(),
    netCreditedCents: centsString().meta({ description: '= netAmountCents.' }),
    currency: z.literal('COP'),
    source: z.enum(['PSE', 'BREB', 'ACH', 'DEPOSIT']),
    brebKey: z.object({ id: z.string(), externalId: z.string(), name: z.string(), value: z.string() }).nullable(),
    payerName: z.string().nullable(),
    payerFirstName: z.string().nullable(),
    payerLastName: z.string().nullable(),
    payerDocument: z.string().nullable(),
    payerBank: z.string().nullable(),
    payerEmail: z.string().nullable(),
    providerTransferId: z.string().nullable().meta({ description: 'null until the provider confirms.' }),
    providerConfirmedAt: isoDate().nullable(),
    paidAt: isoDate().nullable().meta({ description: '= providerConfirmedAt.' }),
    internalRef: z.string().nullable(),
    cobroId: z.string().nullable().meta({
      description: 'The cobro (`cob_…`) the payment was matched to, or whose PSE link or dynamic key it was paid to (docs/cobros.md); null otherwise.',
    }),
    createdAt: isoDate(),
  })
  .meta({ id: 'Deposit' });

export const DepositPageSchema = z
  .object({
    deposits: z.array(DepositSchema),
    pagination: z.object({ total: count(), page: z.int().min(0).max(1_000_000), limit: z.int().min(1).max(100), totalPages: count() }),
  })
  .meta({ id: 'DepositPage', description: 'Page style (default).' });

export const DepositCursorPageSchema = z
  .object({
    items: z.array(DepositSchema),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'DepositCursorPage', description: 'Cursor style (when the `cursor` query parameter is present).' });

// ---- Returns (devoluciones, docs/returns.md): POST /deposits/{id}/returns and the dashboard's ----

const REASONS = ['CUSTOMER_REQUEST', 'DUPLICATE', 'OVERPAYMENT', 'FRAUD', 'OTHER'] as const;

export const CreateDepositReturnBody = z
  .strictObject({
    amountCents: centsSchema(1, MAX_TRANSFER_CENTS)
      .optional()
      .meta({ description: 'Centavos to return (JSON integer). Omitted: everything not yet returned of the payment.' }),
    reason: z.enum(REASONS).meta({ description: 'Why the money goes back to the payer.' }),
    description: textSchema(1, 140).optional().meta({ description: 'Your note; shown with the return and on its wallet movement.' }),
  })
  .meta({ id: 'CreateDepositReturnRequest' });

export const DepositReturnSchema = z
  .object({
    id: z.string().meta({ description: '`ret_…`' }),
    depositId: z.string(),
    rail: z.enum(['BREB', 'PSE']),
    amountCents: centsString(),
    currency: z.literal('COP'),
    reason: z.enum(REASONS),
    description: z.string().nullable(),
    status: z.enum(['PENDING', 'RETURNED', 'FAILED']).meta({
      description:
        '`PENDING`: the amount is held in your wallet and the rail is returning it; `RETURNED`: the payer has it (final); `FAILED`: nothing left your wallet (`failureCode` says why).',
    }),
    failureCode: z.string().nullable(),
    failureMessage: z.string().nullable(),
    transactionId: z.string().meta({ description: 'The wallet movement of the return (`GET /wallets/transactions/{id}`): a `TRANSFER_OUT`.' }),
    depositAmountCents: centsString().meta({ description: "The payment's gross." }),
    returnedAmountCents: centsString().meta({ description: 'Returned or being returned of the payment so far, this return included unless it FAILED.' }),
    createdAt: isoDate(),
    returnedAt: isoDate().nullable(),
  })
  .meta({ id: 'DepositReturn' });

export const DepositReturnListSchema = z.object({ items: z.array(DepositReturnSchema) }).meta({ id: 'DepositReturnList' });
