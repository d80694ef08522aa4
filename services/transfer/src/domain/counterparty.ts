import { AppError, Problems } from '@wallet/platform';
import { checkAchAccountFields, type AchAccountInput } from './ach-rules.js';
import { checkKey, type KeyType } from './keys.js';
import { normalizeDocument, sameHolderName } from './names.js';
import { ACH_DOCUMENT_TYPES, type Rail } from './rails.js';

/**
 * Counterparties (payees): a company's named payee with a Bre-B key or a bank account, the holder's
 * document and name, tags, and a verification (counterparty-machine.ts). The request checks here list
 * every problem at once (400 INVALID_REQUEST details.fields), as a send's do, and reuse the send's
 * key and ACH field rules (keys.ts, ach-rules.ts).
 */

export const COUNTERPARTY_STATES = ['UNVERIFIED', 'PENDING', 'VERIFIED', 'FAILED'] as const;
export type VerificationStatus = (typeof COUNTERPARTY_STATES)[number];
export type VerificationMethod = 'DIRECTORY' | 'PRENOTE';

export const COUNTERPARTY_ID = /^cpty_[a-z0-9]{24}$/;
export const MAX_NAME = 120;
export const MAX_TAGS = 10;
const TAG = /^[a-z0-9_-]{1,32}$/;
const BREB_DOCUMENT = /^[0-9A-Za-z.\- ]{3,32}$/;
export const MAX_HOLDER = 200;

/** The ACH account as kept (the number only sealed at rest: persistence/). */
export interface CounterpartyAccount {
  bankId: number;
  bankName: string;
  bankAchCode: string;
  accountTypeId: number;
  accountNumber: string;
  holderFirstName: string;
  holderLastName: string;
}

export type CounterpartyDestination = { kind: 'BREB'; keyType: KeyType; keyValue: string } | ({ kind: 'ACH' } & CounterpartyAccount);

export interface CounterpartyRecord {
  id: string;
  companyId: string;
  name: string;
  rail: Rail;
  destination: CounterpartyDestination;
  documentTypeId: number;
  documentNumber: string;
  holderName: string;
  tags: string[];
  status: VerificationStatus;
  /** The current verification attempt: a result for another id is a late answer to a forgotten one. */
  verificationId: string;
  /** ACH: the prenote of the current verification (= verificationId). */
  prenoteId: string | null;
  prenoteSubmittedAt: Date | null;
  reasonCode: string | null;
  reason: string | null;
  requestedAt: Date | null;
  decidedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
  version: number;
}

export const methodOf = (rail: Rail): VerificationMethod => (rail === 'BREB' ? 'DIRECTORY' : 'PRENOTE');

/** What a create or an update gives for the key or the account (proto3: absent or '' mean "not given"). */
export interface CounterpartyInput {
  name?: string | undefined;
  brebKey?: { type: string; value: string } | undefined;
  bankAccount?: (AchAccountInput & { bankName?: string; bankAchCode?: string }) | undefined;
  documentTypeId?: number | undefined;
  documentNumber?: string | undefined;
  holderName?: string | undefined;
  tags?: readonly unknown[] | undefined;
}

/** The identity a verification checks: a change of any of it starts a new verification. */
export interface CounterpartyIdentity {
  rail: Rail;
  destination: CounterpartyDestination;
  documentTypeId: number;
  documentNumber: string;
  holderName: string;
}

export interface NewCounterparty extends CounterpartyIdentity {
  name: string;
  tags: string[];
}

const given = (v: string | null | undefined): v is string => typeof v === 'string' && v !== '';
const length = (v: string) => [...v].length;

function checkName(p: Problems, name: unknown): string | null {
  if (typeof name !== 'string' || name.trim() === '') {
    p.add('name', 'is required');
    return null;
  }
  if (length(name.trim()) > MAX_NAME) p.add('name', `must be at most ${MAX_NAME} characters`);
  return name.trim();
}

/** Tags: lower case `[a-z0-9_-]{1,32}`, at most 10, duplicates dropped (first spelling kept). */
export function checkTags(p: Problems, tags: readonly unknown[]): string[] {
  const out: string[] = [];
  tags.forEach((t, i) => {
    if (typeof t !== 'string' || !TAG.test(t)) p.add(`tags[${i}]`, 'must be 1 to 32 lower-case letters, digits, "_" or "-"');
    else if (!out.includes(t)) out.push(t);
  });
  if (out.length > MAX_TAGS) p.add('tags', `must hold at most ${MAX_TAGS} distinct tags`);
  return out;
}

/**
 * The destination and holder of a create, or of an update that names a new key or account (`base`:
 * the counterparty as it is, whose holder fields an update may leave out). Adds every problem to `p`.
 */
function checkIdentity(p: Problems, input: CounterpartyInput, base: CounterpartyIdentity | null, refused: KeyRefusal): CounterpartyIdentity | null {
  const hasKey = input.brebKey != null;
  const hasAccount = input.bankAccount != null;
  if (hasKey && hasAccount) {
    p.add('destination', 'must contain exactly one of brebKey or bankAccount');
    return null;
  }
  if (!hasKey && !hasAccount && !base) {
    p.add('destination', 'is required: brebKey or bankAccount');
    return null;
  }
  const rail: Rail = hasKey ? 'BREB' : hasAccount ? 'ACH' : base!.rail;
  if (rail === 'ACH') {
    if (given(input.documentNumber) || input.documentTypeId || given(input.holderName)) {
      // The account carries its holder: a second copy could only disagree with it.
      if (given(input.documentNumber)) p.add('documentNumber', 'is given in bankAccount.documentNumber for a bank account');
      if (input.documentTypeId) p.add('documentTypeId', 'is given in bankAccount.documentTypeId for a bank account');
      if (given(input.holderName)) p.add('holderName', 'is given in bankAccount.holderFirstName/holderLastName for a bank account');
    }
    if (!hasAccount) return null; // an ACH counterparty's holder changes with its account
    const b = input.bankAccount!;
    const before = p.count;
    checkAchAccountFields(p, b, (f) => `bankAccount.${f}`);
    if (p.count > before) return null;
    return {
      rail,
      destination: {
        kind: 'ACH',
        bankId: b.bankId,
        bankName: b.bankName ?? '',
        bankAchCode: b.bankAchCode ?? '',
        accountTypeId: b.accountTypeId,
        accountNumber: b.accountNumber,
        holderFirstName: b.holderFirstName.trim(),
        holderLastName: b.holderLastName.trim(),
      },
      documentTypeId: b.documentTypeId,
      documentNumber: b.documentNumber,
      holderName: `${b.holderFirstName.trim()} ${b.holderLastName.trim()}`,
    };
  }
  // BREB: the key (new or kept) and the holder the directory must name (new or kept).
  let destination: CounterpartyDestination | null = base && base.rail === 'BREB' ? base.destination : null;
  if (hasKey) {
    destination = null;
    const { type, value } = input.brebKey!;
    if (typeof value !== 'string' || value === '') p.add('brebKey.value', 'is required');
    else {
      const k = checkKey(value, typeof type === 'string' ? type : '');
      if (k.ok) destination = { kind: 'BREB', keyType: k.keyType, keyValue: k.keyValue };
      else if (k.problem === 'TYPE') p.add('brebKey.type', 'must be one of AUTO, PHONE, EMAIL, ALPHANUM, NRIC');
      else if (k.problem === 'LENGTH') p.add('brebKey.value', 'must be 3 to 64 characters');
      // A well-formed value that is no key of its type (or of any, with AUTO): 422 INVALID_KEY as for a
      // send (domain/keys.ts), once the request has no schema problem.
      else if (k.problem === 'INVALID_KEY') refused.reason = k.reason;
    }
  }
  const keep = base && base.rail === 'BREB' ? base : null;
  const documentTypeId = input.documentTypeId || keep?.documentTypeId || 0;
  const documentNumber = given(input.documentNumber) ? input.documentNumber.trim() : (keep?.documentNumber ?? '');
  const holderName = given(input.holderName) ? input.holderName.trim() : (keep?.holderName ?? '');
  if (!documentTypeId) p.add('documentTypeId', 'is required for a Bre-B key');
  else if (!(documentTypeId in ACH_DOCUMENT_TYPES)) p.add('documentTypeId', 'must be 1, 4, 5 or 8');
  if (!documentNumber) p.add('documentNumber', 'is required for a Bre-B key');
  else if (!BREB_DOCUMENT.test(documentNumber)) p.add('documentNumber', 'must be 3 to 32 letters, digits, dots, hyphens or spaces');
  if (!holderName) p.add('holderName', 'is required for a Bre-B key');
  else if (length(holderName) > MAX_HOLDER) p.add('holderName', `must be at most ${MAX_HOLDER} characters`);
  if (!destination) return null;
  return { rail, destination, documentTypeId, documentNumber, holderName };
}

/** A Bre-B key of the right length that is no key of its type: refused after the schema problems. */
interface KeyRefusal {
  reason?: string;
}

function throwIfKeyRefused(refused: KeyRefusal): void {
  if (refused.reason !== undefined) throw new AppError('INVALID_KEY', refused.reason);
}

/** A create's checks: every problem at once (400), then a key that is no key of its type (422 INVALID_KEY). */
export function validateNewCounterparty(input: CounterpartyInput): NewCounterparty {
  const p = new Problems();
  const refused: KeyRefusal = {};
  const name = checkName(p, input.name);
  const identity = checkIdentity(p, input, null, refused);
  const tags = checkTags(p, input.tags ?? []);
  p.throwIfAny();
  throwIfKeyRefused(refused);
  return { ...identity!, name: name!, tags };
}

export interface CounterpartyChange {
  name: string | null;
  /** A new identity (key, account or holder): starts a new verification. Null: unchanged. */
  identity: CounterpartyIdentity | null;
  /** Null: tags unchanged. */
  tags: string[] | null;
}

/** An update's checks against the counterparty as it is: every problem at once. */
export function validateCounterpartyChange(current: CounterpartyRecord, input: CounterpartyInput & { replaceTags: boolean }): CounterpartyChange {
  const p = new Problems();
  const refused: KeyRefusal = {};
  const name = input.name !== undefined && input.name !== '' ? checkName(p, input.name) : null;
  const touchesIdentity =
    input.brebKey != null || input.bankAccount != null || given(input.documentNumber) || !!input.documentTypeId || given(input.holderName);
  const next = touchesIdentity ? checkIdentity(p, input, current, refused) : null;
  if (touchesIdentity && current.rail === 'ACH' && input.bankAccount == null && input.brebKey == null && p.count === 0) {
    p.add('bankAccount', "is required to change an ACH counterparty's holder");
  }
  const tags = input.replaceTags ? checkTags(p, input.tags ?? []) : null;
  if (!input.replaceTags && (input.tags?.length ?? 0) > 0) p.add('replaceTags', 'must be true to change the tags');
  p.throwIfAny();
  throwIfKeyRefused(refused);
  return { name, identity: next && !sameIdentity(current, next) ? next : null, tags };
}

/** Whether two identities verify the same (a change that keeps them keeps the verification). */
export function sameIdentity(a: CounterpartyIdentity, b: CounterpartyIdentity): boolean {
  return (
    a.rail === b.rail &&
    a.documentTypeId === b.documentTypeId &&
    normalizeDocument(a.documentNumber) === normalizeDocument(b.documentNumber) &&
    a.holderName === b.holderName &&
    JSON.stringify(destinationKey(a.destination)) === JSON.stringify(destinationKey(b.destination))
  );
}

function destinationKey(d: CounterpartyDestination): unknown {
  return d.kind === 'BREB' ? [d.keyType, d.keyValue] : [d.bankId, d.bankAchCode, d.accountTypeId, d.accountNumber, d.holderFirstName, d.holderLastName];
}

// ───────────────────────────── Bre-B directory verdict ─────────────────────────────

/** Why a verification failed, with its Spanish reason. */
export const VERIFICATION_REASONS = {
  KEY_NOT_FOUND: 'La llave Bre-B no está registrada en el directorio.',
  KEY_INACTIVE: 'La llave Bre-B existe pero no está activa.',
  INVALID_KEY: 'El directorio Bre-B no reconoce el formato de la llave.',
  NAME_MISMATCH: 'El nombre indicado no coincide con el titular de la llave Bre-B.',
  DOCUMENT_MISMATCH: 'El documento indicado no coincide con el del titular de la llave Bre-B.',
} as const;
export type DirectoryReasonCode = keyof typeof VERIFICATION_REASONS;

export type DirectoryAnswer = { status: 'active' | 'inactive'; fullName: string; idValue: string } | { status: 'not_found' } | { status: 'invalid' };

/** The directory's answer judged with the send's rules (names.ts): verified, or failed with a code. */
export function directoryVerdict(
  c: Pick<CounterpartyIdentity, 'holderName' | 'documentNumber'>,
  a: DirectoryAnswer,
): { verified: true } | { verified: false; code: DirectoryReasonCode } {
  if (a.status === 'not_found') return { verified: false, code: 'KEY_NOT_FOUND' };
  if (a.status === 'invalid') return { verified: false, code: 'INVALID_KEY' };
  if (a.status === 'inactive') return { verified: false, code: 'KEY_INACTIVE' };
  if (!sameHolderName(c.holderName, a.fullName)) return { verified: false, code: 'NAME_MISMATCH' };
  if (normalizeDocument(c.documentNumber) !== normalizeDocument(a.idValue)) return { verified: false, code: 'DOCUMENT_MISMATCH' };
  return { verified: true };
}
