import { z } from 'zod';
import { maskAccount } from '@wallet/platform';
import type { AdminChanges } from '../../../app/admin-changes.js';
import { ACH_BANKS } from '../../dictionaries/ach-banks.js';
import { amlEntryToApi } from '../../transfers/presenters.js';
import type { TransferClient } from '../../../clients/transfer-client.js';
import { AmlEntrySchema } from './schemas.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { textSchema, uuidSchema } from '../../../http/validation.js';
import { documentAsOneOf } from '../../../http/schemas.js';
import { approvalRequestToApi } from '../approval-requests/presenters.js';
import { PENDING_APPROVAL_RESPONSE } from '../approval-requests/schemas.js';

/**
 * A listed account's number as the handler gets it: the full number only through `reveal()` (for the
 * transfer service, which keeps a keyed fingerprint of it), and masked wherever the body is copied —
 * the admin audit trail stores the validated body, and a log serialises it — so the number never
 * rests in clear outside the request (docs/security.md "Screening on the destination account").
 */
export class ListedAccountNumber {
  readonly #value: string;
  readonly masked: string;

  constructor(value: string) {
    this.#value = value;
    this.masked = maskAccount(value) ?? '';
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return this.masked;
  }
}

const KNOWN_ACH_CODES = new Set(ACH_BANKS.map((b) => b.achCode));

const AmlDocumentNumber = z
  .string()
  .regex(/^[0-9A-Za-z-]{5,20}$/, { message: 'Debe tener de 5 a 20 caracteres alfanuméricos.' })
  .meta({ description: "A document to list (the payer company's NIT or a destination's document). Exactly one of documentNumber and bankAccount." });
const AmlBankAccount = z
  .strictObject({
    bankCode: z
      .string()
      .regex(/^\d{4}$/, { message: 'Debe ser el código ACH de 4 dígitos del banco.' })
      .refine((c) => KNOWN_ACH_CODES.has(c), { message: 'No corresponde a ningún banco de GET /dictionaries/banks/ach.' })
      // The codes of GET /dictionaries/banks/ach, listed so the document refuses what the server refuses.
      .meta({
        description: "The bank's ACH compensation code (`achCode` of GET /dictionaries/banks/ach).",
        example: '1007',
        enum: [...KNOWN_ACH_CODES].sort(),
      }),
    accountNumber: z
      .string()
      .regex(/^\d{4,32}$/, { message: 'Debe tener de 4 a 32 dígitos.' })
      .refine((n) => !/^0+$/.test(n), { message: 'No es un número de cuenta.' })
      .transform((n) => new ListedAccountNumber(n))
      .meta({ description: 'Stored only as a keyed fingerprint and a masked copy (`****1234`); never answered in full.' }),
  })
  .meta({
    description:
      'A bank account to list: every payout to it is refused (RECIPIENT_BLACKLISTED) whatever document it declares. Exactly one of documentNumber and bankAccount.',
  });
const amlExtras = { name: textSchema(1, 200).optional(), reason: textSchema(1, 500) };

/** The two kinds of entry, as the document shows them (the server checks AmlEntryBody, with the same rules). */
const AML_ENTRY_VARIANTS = [
  z.strictObject({ documentNumber: AmlDocumentNumber, ...amlExtras }).meta({ id: 'AmlDocumentEntryRequest', description: 'A document to list.' }),
  z.strictObject({ bankAccount: AmlBankAccount, ...amlExtras }).meta({ id: 'AmlAccountEntryRequest', description: 'A bank account to list.' }),
] as const;

export const AmlEntryBody = documentAsOneOf(
  z
    .strictObject({ documentNumber: AmlDocumentNumber.optional(), bankAccount: AmlBankAccount.optional(), ...amlExtras })
    .refine((b) => (b.documentNumber === undefined) !== (b.bankAccount === undefined), {
      message: 'Indique documentNumber o bankAccount (uno de los dos).',
      path: ['documentNumber'],
    })
    .meta({ id: 'AmlEntryRequest' }),
  AML_ENTRY_VARIANTS,
);

/**
 * The AML (SARLAFT) list: a send is refused when the payer company's NIT or the destination document
 * is on it, or when its destination bank account is (docs/security.md "Screening on the destination account").
 */
export function adminAmlRoutes(transfers: TransferClient, changes: AdminChanges): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/aml/blacklist',
      operationId: 'adminAddAmlEntry',
      tags: ['Admin'],
      summary: 'Add a document or a bank account to the AML list',
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      body: AmlEntryBody,
      responses: { 201: { description: 'The entry (an account shown masked).', schema: AmlEntrySchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const e = await transfers.addAmlEntry(
          {
            documentNumber: body.documentNumber ?? '',
            name: body.name,
            reason: body.reason,
            ...(body.bankAccount ? { bankAccount: { bankCode: body.bankAccount.bankCode, accountNumber: body.bankAccount.accountNumber.reveal() } } : {}),
          },
          call,
        );
        return { status: 201, body: amlEntryToApi(e) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/admin/aml/blacklist/{id}',
      operationId: 'adminRemoveAmlEntry',
      tags: ['Admin'],
      summary: 'Remove an entry from the AML list (by an operator, once a second operator approves)',
      description:
        "Removing an entry weakens a control: a named operator's removal answers 202 with an approval request that a second, independent operator approves after the notice delay. The shared development token removes directly.",
      auth: { kind: 'admin' },
      audit: { change: 'gateway' },
      params: z.object({ id: uuidSchema() }),
      paramErrors: { id: 'AML_ENTRY_NOT_FOUND' },
      responses: { 200: { description: 'The removed entry.', schema: AmlEntrySchema }, 202: PENDING_APPROVAL_RESPONSE },
      errors: ['AML_ENTRY_NOT_FOUND', 'APPROVAL_REQUEST_NOT_PENDING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, admin, call, audit }) => {
        const out = await changes.removeAmlEntry(params.id, admin!, call, audit!);
        if ('approval' in out) return { status: 202, body: approvalRequestToApi(out.approval) };
        return { status: 200, body: amlEntryToApi(out.done) };
      },
    }),
  ];
}
