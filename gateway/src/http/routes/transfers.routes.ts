import { z } from 'zod';
import { ledgerV1, type transferV1 } from '@wallet/proto';
import { achBankById } from '../../dictionaries/ach-banks.js';
import { quoteToApi, requestHash, resolveResultToApi, transferToApi } from '../../transfer/presenters.js';
import type { TransferClient } from '../../transfer/transfer-client.js';
import { PendingApprovalTransferSchema, QuoteSchema, ResolveKeyNotFoundSchema, ResolveKeyResultSchema, TransferSchema } from '../api-schemas.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../idempotency-key.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { centsSchema, textSchema } from '../validation.js';

const KEY_TYPES = ['PHONE', 'EMAIL', 'ALPHANUM', 'NRIC'] as const;
const keyValueSchema = () => z.string().refine((s) => { const n = [...s].length; return n >= 3 && n <= 64; }, { message: 'Debe tener entre 3 y 64 caracteres.' })
  .meta({ minLength: 3, maxLength: 64 });

export const ResolveKeyBody = z.strictObject({
  keyValue: keyValueSchema().meta({ description: 'Phone (10 digits starting with 3), e-mail, alias (3-40 alphanumerics, optional @) or document (5-15 digits).' }),
  keyType: z.enum([...KEY_TYPES, 'AUTO']).default('AUTO'),
}).meta({ id: 'ResolveKeyRequest' });

export const QuoteBody = z.strictObject({
  amount: centsSchema(100).meta({ description: 'Gross centavos (JSON integer), minimum 100; above the BREB cap → 422.' }),
  keyValue: keyValueSchema(),
  keyType: z.enum([...KEY_TYPES, 'AUTO']).default('AUTO').meta({ description: 'Omitted: AUTO (CONTRACT §2).' }),
}).meta({ id: 'BrebQuoteRequest' });

export const AchQuoteBody = z.strictObject({
  amount: centsSchema(100).meta({ description: 'Gross centavos (JSON integer), minimum 100; above the ACH cap → 422.' }),
}).meta({ id: 'AchQuoteRequest' });

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

export const SendBody = z.strictObject({
  amount: centsSchema(100).meta({ description: 'Gross centavos (JSON integer), minimum 100.' }),
  destination: z.strictObject({ brebKey: BrebKeyDestination.optional(), bankAccount: BankAccountDestination.optional() })
    .refine((d) => (d.brebKey ? 1 : 0) + (d.bankAccount ? 1 : 0) === 1, { message: 'Debe indicar exactamente uno de brebKey o bankAccount.' })
    .optional(),
  targetAnchorHandle: z.string().min(1).max(128).optional().meta({ description: 'Instead of destination: the anchorHandle of a resolve-key result of the last 10 minutes.' }),
  targetName: textSchema(1, 200).optional().meta({ description: 'BREB: the holder full name (recipient.fullName of resolve-key). Required for BREB.' }),
  targetDocument: z.string().trim().max(32).optional().meta({ description: 'BREB: the holder document (recipient.idValue). Missing → 422 TARGET_DOCUMENT_REQUIRED.' }),
  reference: textSchema(1, 100).optional().meta({ description: 'Idempotency key for 60 s (§7.4).' }),
  description: textSchema(0, 255).optional(),
}).superRefine((b, ctx) => {
  if ((b.destination ? 1 : 0) + (b.targetAnchorHandle ? 1 : 0) !== 1) {
    ctx.addIssue({ code: 'custom', path: ['destination'], message: 'Debe indicar destination o targetAnchorHandle (solo uno).' });
  }
  const breb = b.targetAnchorHandle !== undefined || b.destination?.brebKey !== undefined;
  if (breb && !b.targetName) ctx.addIssue({ code: 'custom', path: ['targetName'], message: 'Es obligatorio para envíos BREB.' });
}).meta({ id: 'SendTransferRequest' });

/** A send body as the transfer service takes it (the bank's name and ACH code from the dictionary); also each item of a bulk payout. */
export function sendRequestOf(body: z.output<typeof SendBody>): Omit<transferV1.SendRequest, 'requestHash'> {
  const ba = body.destination?.bankAccount;
  const bank = ba ? achBankById(ba.bankId) : undefined;
  return {
    amount: BigInt(body.amount),
    reference: body.reference,
    description: body.description,
    brebKey: body.destination?.brebKey,
    bankAccount: ba ? { ...ba, bankName: bank?.name ?? '', bankAchCode: bank?.achCode ?? '' } : undefined,
    targetAnchorHandle: body.targetAnchorHandle,
    targetName: body.targetName,
    targetDocument: body.targetDocument === '' ? undefined : body.targetDocument,
  };
}

export function transferRoutes(transfers: TransferClient, settings: { sendDeadlineMs: number } = { sendDeadlineMs: 20_000 }): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/transfers/resolve-key', operationId: 'resolveKey', tags: ['Transfers'],
      summary: 'Resolve a Bre-B key to its registered holder',
      description: 'Consulting only; never cached (`Cache-Control: no-store`). Not found, inactive or malformed keys answer 422 `{ found: false, error, message }`.',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'RESOLVE_KEY',
      body: ResolveKeyBody,
      responses: {
        200: { description: 'The key and its holder.', schema: ResolveKeyResultSchema },
        422: { description: 'Not found, inactive or malformed key.', schema: ResolveKeyNotFoundSchema },
      },
      errors: ['BREB_DIRECTORY_LOOKUP_FAILED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const r = await transfers.resolveKey({ keyValue: body.keyValue, keyType: body.keyType }, call);
        if (!r.found) return { status: 422, body: { found: false, error: r.errorCode, message: r.message } };
        return { status: 200, body: resolveResultToApi(r) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/transfers/quote', operationId: 'quoteBreb', tags: ['Transfers'],
      summary: 'Quote a BREB send: fee, IVA and total debit (reserves nothing)',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'QUOTES',
      body: QuoteBody,
      responses: { 200: { description: 'The fee quote (§2.3) on the BREB wallet.', schema: QuoteSchema } },
      errors: ['AMOUNT_EXCEEDS_BREB_CAP', 'INVALID_KEY', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const q = await transfers.quote({
          rail: ledgerV1.Rail.BREB, amount: BigInt(body.amount), keyValue: body.keyValue, keyType: body.keyType,
        }, call);
        return { status: 200, body: quoteToApi(q) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/transfers/quote/ach', operationId: 'quoteAch', tags: ['Transfers'],
      summary: 'Quote an ACH send: fee, IVA and total debit (reserves nothing)',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'QUOTES',
      body: AchQuoteBody,
      responses: { 200: { description: 'The fee quote (§2.3) on the ACH wallet.', schema: QuoteSchema } },
      errors: ['AMOUNT_EXCEEDS_ACH_CAP', 'WALLET_NOT_PROVISIONED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const q = await transfers.quote({ rail: ledgerV1.Rail.ACH, amount: BigInt(body.amount) }, call);
        return { status: 200, body: quoteToApi(q) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/transfers/send', operationId: 'sendTransfer', tags: ['Transfers'],
      summary: 'Send to a Bre-B key (BREB wallet) or a bank account (ACH wallet)',
      description: 'Funds are reserved and the transfer dispatched to the rail; it answers 201 PENDING and later becomes COMPLETED or FAILED '
        + '(poll GET /wallets/transactions/{id}). `reference` makes the request idempotent for 60 s: the same body returns the original '
        + 'transfer (same status code), a different body is 409 REFERENCE_CONFLICT.\n\n'
        + '**Idempotency-Key on a send** is bound to the transfer it creates, in the transfer service, for good: when the outcome of a '
        + 'send is unknown (a 5xx or a time-out after the send may have been accepted, a connection lost), retry with the same key and '
        + 'body — at once, with no 409 `IDEMPOTENCY_KEY_IN_USE` wait: the answer is that transfer in its current state, same status '
        + 'code and shape as a first send (201, or 200 for `AWAITING_APPROVAL`), with `Idempotent-Replayed: true`; never a second '
        + 'transfer. The key stays bound to that body (another body → 409 `IDEMPOTENCY_KEY_REUSED`). A send refused before it was '
        + 'recorded (e.g. 503 `ACH_RAIL_UNAVAILABLE`) made no transfer: the retry runs it. While the first send is still being decided the '
        + 'retry waits for it (up to 15 s, then 503 again).',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'FINANCIAL', idempotent: 'bound',
      body: SendBody,
      responses: {
        201: { description: 'The transfer, PENDING.', schema: TransferSchema },
        200: {
          description: 'Multi-signature company (threshold ≥ 2): the funds are reserved and the transfer awaits approval (`AWAITING_APPROVAL`, '
            + '`approvalId`, `threshold`, `expiresAt`, `amount`, `rail`, plus the §2.5 fields). Nothing is dispatched until dashboard users sign it. '
            + 'A replay of a multi-signature send answers 200 with its current state.',
          schema: PendingApprovalTransferSchema,
        },
      },
      errors: [
        'AMOUNT_EXCEEDS_BREB_CAP', 'AMOUNT_EXCEEDS_ACH_CAP', 'TARGET_DOCUMENT_REQUIRED', 'RECIPIENT_BLACKLISTED', 'INVALID_KEY', 'KEY_INACTIVE',
        'NAME_MISMATCH', 'INVALID_BANK_ACCOUNT', 'DESTINATION_REJECTED', 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED', 'COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED',
        'INSUFFICIENT_BALANCE', 'REFERENCE_CONFLICT', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'BREB_DIRECTORY_LOOKUP_FAILED',
        'ACH_RAIL_UNAVAILABLE', 'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ body, call, idempotencyKey }) => {
        const res = await transfers.send({
          ...sendRequestOf(body),
          requestHash: requestHash(body),
          // The transfer service binds the key to the transfer it creates: a retry gets that transfer.
          idempotencyKey,
        }, call, { deadlineMs: settings.sendDeadlineMs });
        const out = transferToApi(res.transfer!);
        // The transfer already held the key (an earlier request of which this is a retry): a replay.
        return { status: out.status, body: out.body, ...(res.idempotencyKeyReplayed ? { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } : {}) };
      },
    }),
  ];
}
