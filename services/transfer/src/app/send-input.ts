import { createHash } from 'node:crypto';
import { KEY_TYPES, isKeyType, keyLengthOk, type KeyType } from '../domain/keys.js';
import { MAX_HOLDER_NAME, checkAchAccountFields, type AchAccountInput } from '../domain/ach-rules.js';
import { MAX_JSON_CENTS, MIN_AMOUNT, type Rail } from '../domain/rails.js';
import { Problems, checkText, orNull } from './validation.js';

/** The company profile the gateway sends with each money request (it authenticated the company). */
export interface CompanyProfile {
  nit: string;
  ivaApplicable: boolean;
  multiSigThreshold: number;
  counterpartyDailyLimitCents: bigint;
  counterpartyMonthlyLimitCents: bigint;
}

export const EMPTY_PROFILE: CompanyProfile = {
  nit: '',
  ivaApplicable: false,
  multiSigThreshold: 0,
  counterpartyDailyLimitCents: 0n,
  counterpartyMonthlyLimitCents: 0n,
};

/** A send as decoded from the wire (proto3: absent optional strings may be undefined or ''). */
export interface SendInput {
  amount: bigint;
  reference?: string | undefined;
  description?: string | undefined;
  brebKey?: { type: string; value: string } | undefined;
  /** The account as checked by checkAchAccountFields, with the bank's name and ACH code from the dictionary. */
  bankAccount?: (AchAccountInput & { bankName: string; bankAchCode: string }) | undefined;
  targetAnchorHandle?: string | undefined;
  targetName?: string | undefined;
  targetDocument?: string | undefined;
  company?: CompanyProfile | undefined;
  requestHash?: string | undefined;
  /** The client's `Idempotency-Key` (the gateway passes it on POST /transfers/send). */
  idempotencyKey?: string | undefined;
  /** A counterparty of the company, instead of a destination (docs/counterparties.md). */
  counterpartyId?: string | undefined;
}

export type SendDestinationCommand =
  | { kind: 'BREB_KEY'; keyType: KeyType; keyValue: string }
  | { kind: 'BREB_ANCHOR'; anchorHandle: string }
  | {
      kind: 'ACH';
      bankId: number;
      accountTypeId: number;
      accountNumber: string;
      documentTypeId: number;
      documentNumber: string;
      holderFirstName: string;
      holderLastName: string;
      bankName: string;
      bankAchCode: string;
    };

/** A send that passed the schema checks (400). Business checks (422, 503…) come after, in order. */
export interface SendCommand {
  rail: Rail;
  amount: bigint;
  reference: string | null;
  description: string | null;
  destination: SendDestinationCommand;
  targetName: string | null;
  targetDocument: string | null;
  company: CompanyProfile;
  requestHash: string;
  /** Binds the transfer to the key, unique per company (see SendTransfer). */
  idempotencyKey: string | null;
  /** The counterparty the send named (its destination is the counterparty's), as the approval policy sees it. */
  counterparty: { id: string; verified: boolean; tags: readonly string[] } | null;
}

export const MAX_REFERENCE = 100;
export const MAX_DESCRIPTION = 255;
export const MAX_TARGET_NAME = 200;
export { MAX_HOLDER_NAME };
const DOCUMENT = /^[0-9A-Za-z.\- ]{3,32}$/;
const ANCHOR = /^[A-Za-z0-9_:.-]{1,128}$/;
/** As the gateway accepts the header: 1-255 visible ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Schema checks of §4.5 and §8: every problem at once, as INVALID_REQUEST details.fields. */
export function validateSend(input: SendInput): SendCommand {
  const p = new Problems();
  if (input.amount < MIN_AMOUNT) p.add('amount', `must be at least ${MIN_AMOUNT}`);
  else if (input.amount > MAX_JSON_CENTS) p.add('amount', `must be at most ${MAX_JSON_CENTS}`);

  const reference = orNull(input.reference);
  const description = orNull(input.description);
  checkText(p, 'reference', reference, { max: MAX_REFERENCE });
  checkText(p, 'description', description, { max: MAX_DESCRIPTION });
  const targetName = orNull(input.targetName);
  const targetDocument = orNull(input.targetDocument)?.trim() || null;
  const anchor = orNull(input.targetAnchorHandle);
  const idempotencyKey = orNull(input.idempotencyKey);
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) p.add('idempotencyKey', 'must be 1 to 255 visible ASCII characters');

  const given = [input.brebKey ? 'brebKey' : null, input.bankAccount ? 'bankAccount' : null].filter(Boolean);
  let destination: SendDestinationCommand | null = null;
  if (given.length === 2) p.add('destination', 'must contain exactly one of brebKey or bankAccount');
  else if (anchor && given.length > 0) p.add('targetAnchorHandle', 'is sent instead of destination, not with it');
  else if (anchor) {
    if (!ANCHOR.test(anchor)) p.add('targetAnchorHandle', 'Debe ser el anchorHandle de una consulta de llave (1 a 128 caracteres [A-Za-z0-9_:.-]).');
    else destination = { kind: 'BREB_ANCHOR', anchorHandle: anchor };
  } else if (input.brebKey) {
    const { type, value } = input.brebKey;
    if (!isKeyType(type)) p.add('destination.brebKey.type', `must be one of ${KEY_TYPES.join(', ')}`);
    if (!value) p.add('destination.brebKey.value', 'is required');
    else if (!keyLengthOk(value)) p.add('destination.brebKey.value', 'must be 3 to 64 characters');
    if (isKeyType(type) && value && keyLengthOk(value)) destination = { kind: 'BREB_KEY', keyType: type, keyValue: value };
  } else if (input.bankAccount) {
    const b = input.bankAccount;
    const path = (f: string) => `destination.bankAccount.${f}`;
    checkAchAccountFields(p, b, path);
    destination = {
      kind: 'ACH',
      bankId: b.bankId,
      accountTypeId: b.accountTypeId,
      accountNumber: b.accountNumber,
      documentTypeId: b.documentTypeId,
      documentNumber: b.documentNumber,
      holderFirstName: b.holderFirstName.trim(),
      holderLastName: b.holderLastName.trim(),
      bankName: b.bankName ?? '',
      bankAchCode: b.bankAchCode ?? '',
    };
  } else {
    p.add('destination', 'is required: brebKey or bankAccount');
  }

  const isBreb = !input.bankAccount;
  if (isBreb) {
    checkText(p, 'targetName', targetName, { max: MAX_TARGET_NAME, required: true });
    if (targetDocument && !DOCUMENT.test(targetDocument)) p.add('targetDocument', 'Debe tener de 3 a 32 letras, dígitos, puntos, guiones o espacios.');
  } else {
    checkText(p, 'targetName', targetName, { max: MAX_TARGET_NAME });
    if (targetDocument && input.bankAccount && targetDocument.replace(/[^0-9A-Za-z]/g, '') !== input.bankAccount.documentNumber) {
      p.add('targetDocument', 'Si se indica, debe ser el documento de la cuenta (destination.bankAccount.documentNumber).');
    }
  }
  p.throwIfAny();

  const cmd: SendCommand = {
    rail: isBreb ? 'BREB' : 'ACH',
    amount: input.amount,
    reference,
    description,
    destination: destination!,
    targetName: targetName?.trim() ?? null,
    targetDocument,
    company: input.company ?? EMPTY_PROFILE,
    requestHash: '',
    idempotencyKey,
    counterparty: null,
  };
  cmd.requestHash = orNull(input.requestHash) ?? fallbackRequestHash(input);
  return cmd;
}

/**
 * The gateway sends the canonical hash of the client's HTTP body; a caller that does not (an
 * internal client) gets one computed here from the fields that make the send what it is.
 */
export function fallbackRequestHash(input: SendInput): string {
  const canonical = {
    amount: input.amount.toString(),
    reference: orNull(input.reference),
    description: orNull(input.description),
    // Only when named: the hashes of sends without one stay what they were.
    ...(orNull(input.counterpartyId) ? { counterpartyId: input.counterpartyId } : {}),
    brebKey: input.brebKey ? { type: input.brebKey.type, value: input.brebKey.value } : null,
    bankAccount: input.bankAccount
      ? {
          bankId: input.bankAccount.bankId,
          accountTypeId: input.bankAccount.accountTypeId,
          accountNumber: input.bankAccount.accountNumber,
          documentTypeId: input.bankAccount.documentTypeId,
          documentNumber: input.bankAccount.documentNumber,
          holderFirstName: input.bankAccount.holderFirstName,
          holderLastName: input.bankAccount.holderLastName,
        }
      : null,
    targetAnchorHandle: orNull(input.targetAnchorHandle),
    targetName: orNull(input.targetName),
    targetDocument: orNull(input.targetDocument),
  };
  return `svc:${createHash('sha256').update(JSON.stringify(canonical)).digest('hex')}`;
}
