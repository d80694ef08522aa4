import { z } from 'zod';
import { count, documentAsOneOf, isoDate } from '../../http/schemas.js';
import { queryInt, textSchema } from '../../http/validation.js';
import { ResolveKeyBody, SendBody } from '../transfers/schemas.js';

/** `cpty_` + 24 lower-case letters or digits; a malformed id reads as not found (paramErrors). */
export const COUNTERPARTY_ID = z.string().regex(/^cpty_[a-z0-9]{24}$/);
export const VERIFICATION_STATUSES = ['UNVERIFIED', 'PENDING', 'VERIFIED', 'FAILED'] as const;
export const VERIFICATION_METHODS = ['DIRECTORY', 'PRENOTE'] as const;
export const COUNTERPARTY_RAILS = ['BREB', 'ACH'] as const;
export const MAX_TAGS = 10;

const TAG = /^[a-z0-9_-]{1,32}$/;
/** The holder's document with a Bre-B key, as the transfer service takes it (domain/counterparty.ts BREB_DOCUMENT). */
const BREB_DOCUMENT = /^[0-9A-Za-z.\- ]{3,32}$/;
const DOCUMENT_TYPE = () => z.union([z.literal(1), z.literal(4), z.literal(5), z.literal(8)]).meta({ description: '1 CC, 4 CE, 5 Pasaporte, 8 NIT.' });

/**
 * The bank account of a send (`destination.bankAccount` of POST /transfers/send): the same schema,
 * taken from the send's, so a counterparty and a send take the same account fields with the same rules.
 */
const SendBankAccount = SendBody.shape.destination.unwrap().shape.bankAccount.unwrap();

/** A Bre-B key as resolve-key takes it (`keyValue`, `keyType` with AUTO). */
const BrebKeyInput = z
  .strictObject({ keyType: ResolveKeyBody.shape.keyType, keyValue: ResolveKeyBody.shape.keyValue })
  .meta({ id: 'CounterpartyBrebKeyInput', description: 'A Bre-B key. `keyType` AUTO (the default) detects it from the value.' });

const BankAccountInput = SendBankAccount.meta({
  id: 'CounterpartyBankAccountInput',
  description:
    'A bank account (ACH), as a send takes it (`destination.bankAccount` of POST /transfers/send): it carries the holder (document and names). `bankId`: an id from GET /dictionaries/banks/ach.',
});

const nameField = () => textSchema(1, 120).meta({ description: 'What you call this payee (1-120 characters).' });
const documentNumberField = () =>
  z
    .string()
    .regex(BREB_DOCUMENT, { message: 'Debe tener de 3 a 32 letras, dígitos, puntos, guiones o espacios.' })
    .meta({ description: "The key holder's document number (3-32 letters, digits, dots, hyphens or spaces)." });
const holderNameField = () =>
  textSchema(1, 200).meta({ description: "The key holder's name as the Bre-B directory names them (compared as a send compares it)." });
const tagsField = () =>
  z
    .array(z.string().regex(TAG, { message: 'Debe tener de 1 a 32 letras minúsculas, dígitos, "_" o "-".' }))
    .max(MAX_TAGS, { message: `Admite a lo sumo ${MAX_TAGS} etiquetas.` })
    .meta({ description: `Your labels: at most ${MAX_TAGS}, each 1-32 of [a-z0-9_-]; duplicates are dropped.` });

const VARIANTS = [
  z
    .strictObject({
      name: nameField(),
      brebKey: BrebKeyInput,
      documentTypeId: DOCUMENT_TYPE(),
      documentNumber: documentNumberField(),
      holderName: holderNameField(),
      tags: tagsField().optional(),
    })
    .meta({
      id: 'CreateBrebCounterpartyRequest',
      description: "A payee with a Bre-B key: the holder's document and name are required (the directory lookup compares them).",
    }),
  z
    .strictObject({ name: nameField(), bankAccount: BankAccountInput, tags: tagsField().optional() })
    .meta({ id: 'CreateAchCounterpartyRequest', description: 'A payee with a bank account (ACH): the account carries its holder.' }),
] as const;

/** With a bank account the holder travels in it: a second copy at the top could only disagree with it. */
const ACH_HOLDER_FIELDS = {
  documentTypeId: 'bankAccount.documentTypeId',
  documentNumber: 'bankAccount.documentNumber',
  holderName: 'bankAccount.holderFirstName y bankAccount.holderLastName',
} as const;

export const CreateCounterpartyBody = documentAsOneOf(
  z
    .strictObject({
      name: nameField(),
      brebKey: BrebKeyInput.optional(),
      bankAccount: BankAccountInput.optional(),
      documentTypeId: DOCUMENT_TYPE().optional(),
      documentNumber: documentNumberField().optional(),
      holderName: holderNameField().optional(),
      tags: tagsField().optional(),
    })
    .superRefine((b, ctx) => {
      if ((b.brebKey ? 1 : 0) + (b.bankAccount ? 1 : 0) !== 1) {
        ctx.addIssue({ code: 'custom', path: ['brebKey'], message: 'Debe indicar exactamente uno de brebKey o bankAccount.' });
        return;
      }
      if (b.brebKey) {
        for (const f of ['documentTypeId', 'documentNumber', 'holderName'] as const) {
          if (b[f] === undefined) ctx.addIssue({ code: 'custom', path: [f], message: 'Es obligatorio con una llave Bre-B.' });
        }
      } else {
        for (const [f, where] of Object.entries(ACH_HOLDER_FIELDS) as Array<[keyof typeof ACH_HOLDER_FIELDS, string]>) {
          if (b[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: `Con una cuenta bancaria se indica en ${where}.` });
        }
      }
    })
    .meta({
      id: 'CreateCounterpartyRequest',
      description:
        "Exactly one destination: `brebKey` (with the holder's `documentTypeId`, `documentNumber` and `holderName`) or `bankAccount` (which carries its holder).",
    }),
  VARIANTS,
);

export const UpdateCounterpartyBody = z
  .strictObject({
    name: nameField().optional(),
    brebKey: BrebKeyInput.optional().meta({ description: 'A new key (a Bre-B counterparty, or an ACH one moving to Bre-B with its holder fields).' }),
    bankAccount: BankAccountInput.optional().meta({ description: 'A new account, with its holder (an ACH counterparty changes its holder this way).' }),
    documentTypeId: DOCUMENT_TYPE().optional().meta({ description: "A Bre-B counterparty's holder document type." }),
    documentNumber: documentNumberField().optional(),
    holderName: holderNameField().optional(),
    tags: tagsField().optional().meta({ description: 'Replaces the tags (`[]` clears them). Omitted: unchanged.' }),
  })
  .superRefine((b, ctx) => {
    if (Object.keys(b).length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'Indique al menos un campo.' });
    if (b.brebKey && b.bankAccount) ctx.addIssue({ code: 'custom', path: ['brebKey'], message: 'Indique a lo sumo uno de brebKey o bankAccount.' });
  })
  .meta({
    id: 'UpdateCounterpartyRequest',
    description:
      'Only the fields given change. A new key, account or holder (document or name) starts a new verification: `verification` goes back to PENDING and the old result is forgotten. A new name or tags keep it. An ACH counterparty changes its holder with a new `bankAccount`.',
    minProperties: 1,
    not: { required: ['brebKey', 'bankAccount'] },
  });

export const CounterpartiesQuery = z.strictObject({
  tag: z.string().regex(TAG).optional().meta({ description: 'Only counterparties with this tag.' }),
  status: z.enum(VERIFICATION_STATUSES).optional().meta({ description: 'Only counterparties whose verification is in this status.' }),
  rail: z.enum(COUNTERPARTY_RAILS).optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().min(1).max(512).optional(),
});

export const CounterpartySchema = z
  .object({
    id: z.string().meta({ description: '`cpty_…`' }),
    name: z.string(),
    rail: z.enum(COUNTERPARTY_RAILS),
    brebKey: z
      .object({ keyType: z.enum(['PHONE', 'EMAIL', 'ALPHANUM', 'NRIC']), keyValue: z.string() })
      .nullable()
      .meta({ description: 'BREB: the key (its type as detected). null for ACH.' }),
    bankAccount: z
      .object({
        bankId: z.int().min(1).max(1_000_000),
        bankName: z.string(),
        accountTypeId: z.union([z.literal(20), z.literal(21), z.literal(22)]).meta({ description: '20 Ahorros, 21 Corriente, 22 Depósito electrónico.' }),
        accountNumberMasked: z
          .string()
          .regex(/^\*{4}[0-9]{4}$/)
          .meta({ description: 'The last four digits only (`****1234`): the full number is never answered.' }),
      })
      .nullable()
      .meta({ description: 'ACH: the account, its number masked. null for BREB.' }),
    documentTypeId: DOCUMENT_TYPE(),
    documentNumber: z.string(),
    holderName: z.string().meta({ description: "The holder's name (ACH: the account holder's first and last names)." }),
    tags: z.array(z.string()),
    verification: z
      .object({
        status: z.enum(VERIFICATION_STATUSES).meta({
          description:
            '`PENDING` while the directory lookup (BREB) or the prenote (ACH) is under way; `VERIFIED` or `FAILED` once decided (webhooks `counterparty.verified`, `counterparty.verification_failed`).',
        }),
        method: z
          .enum(VERIFICATION_METHODS)
          .meta({ description: '`DIRECTORY` (BREB: the Bre-B directory) or `PRENOTE` (ACH: a zero-value prenote to the bank).' }),
        reasonCode: z.string().nullable().meta({
          description:
            "FAILED: `KEY_NOT_FOUND`, `KEY_INACTIVE`, `INVALID_KEY`, `NAME_MISMATCH`, `DOCUMENT_MISMATCH` (BREB) or the rail's return code (ACH, `R02`…`R17`).",
        }),
        reason: z.string().nullable().meta({ description: 'FAILED: why, in Spanish.' }),
        requestedAt: isoDate().nullable().meta({ description: 'When the current verification attempt started.' }),
        decidedAt: isoDate().nullable().meta({ description: 'When it was decided (VERIFIED or FAILED).' }),
      })
      .meta({ id: 'CounterpartyVerification' }),
    createdAt: isoDate(),
    updatedAt: isoDate(),
    version: count().min(1).meta({ description: 'Goes up by one on every change.' }),
  })
  .meta({ id: 'Counterparty' });

export const CounterpartyPageSchema = z.object({ items: z.array(CounterpartySchema), nextCursor: z.string().nullable() }).meta({ id: 'CounterpartyPage' });
