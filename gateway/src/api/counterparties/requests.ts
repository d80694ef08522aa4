import { AppError, invalidRequest, type FieldProblem } from '@wallet/platform';
import type { transferV1 } from '@wallet/proto';
import type { z } from 'zod';
import { achBankById } from '../dictionaries/ach-banks.js';
import type { CreateCounterpartyBody, UpdateCounterpartyBody } from './schemas.js';

type CreateBody = z.output<typeof CreateCounterpartyBody>;
type UpdateBody = z.output<typeof UpdateCounterpartyBody>;
type AccountInput = NonNullable<CreateBody['bankAccount']>;

/** The account as the transfer service takes it: the bank's name and ACH code from the dictionary (as a send's). */
function bankAccountOf(a: AccountInput): transferV1.BankAccountDestination {
  const bank = achBankById(a.bankId);
  // A bank outside the dictionary could never be verified (the prenote names its ACH code): refused here, as a field.
  if (!bank) throw invalidRequest([{ path: 'bankAccount.bankId', message: 'No es un banco del diccionario (GET /dictionaries/banks/ach).' }]);
  return { ...a, bankName: bank.name, bankAchCode: bank.achCode };
}

const brebKeyOf = (k: { keyType: string; keyValue: string }) => ({ type: k.keyType, value: k.keyValue });

/** POST /counterparties → CreateCounterpartyRequest (the key and hash from the route). */
export function createCounterpartyRequest(
  body: CreateBody,
  idempotency: { key: string | undefined; requestHash: string },
): transferV1.CreateCounterpartyRequest {
  return {
    name: body.name,
    brebKey: body.brebKey ? brebKeyOf(body.brebKey) : undefined,
    bankAccount: body.bankAccount ? bankAccountOf(body.bankAccount) : undefined,
    documentTypeId: body.documentTypeId,
    documentNumber: body.documentNumber,
    holderName: body.holderName,
    tags: body.tags ?? [],
    idempotencyKey: idempotency.key,
    requestHash: idempotency.requestHash,
  };
}

/** PATCH /counterparties/{id} → UpdateCounterpartyRequest: `tags` given replaces them (`[]` clears). */
export function updateCounterpartyRequest(id: string, body: UpdateBody): transferV1.UpdateCounterpartyRequest {
  return {
    id,
    name: body.name,
    brebKey: body.brebKey ? brebKeyOf(body.brebKey) : undefined,
    bankAccount: body.bankAccount ? bankAccountOf(body.bankAccount) : undefined,
    documentTypeId: body.documentTypeId,
    documentNumber: body.documentNumber,
    holderName: body.holderName,
    replaceTags: body.tags !== undefined,
    tags: body.tags ?? [],
  };
}

/** The service names the key's fields as the proto does (`brebKey.type`, `.value`); the API calls them `keyType`, `keyValue`. */
const SERVICE_PATHS: Record<string, string> = { 'brebKey.type': 'brebKey.keyType', 'brebKey.value': 'brebKey.keyValue', destination: 'brebKey' };

/** An INVALID_REQUEST of the service with its field paths in the API's names; anything else unchanged. */
export function inApiTerms(err: unknown): unknown {
  if (!(err instanceof AppError) || err.code !== 'INVALID_REQUEST') return err;
  const fields = (err.details as { fields?: FieldProblem[] } | undefined)?.fields;
  if (!Array.isArray(fields)) return err;
  const out = new AppError(err.code, err.message, { ...err.details, fields: fields.map((f) => ({ ...f, path: SERVICE_PATHS[f.path] ?? f.path })) });
  out.stack = err.stack;
  return out;
}
