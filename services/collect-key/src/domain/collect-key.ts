import { randomInt } from 'node:crypto';
import { Problems } from '@wallet/platform';

/**
 * A key's states. REGISTERING: the row is stored (it holds its value and externalId) and its
 * registration at the Bre-B directory is in flight or unconfirmed; not a key to clients yet.
 * ACTIVE ⇄ SUSPENDED are live; DELETED and FAILED (the directory refused the value) are final.
 * README "State machine of a key".
 */
export const ALL_KEY_STATES = ['REGISTERING', 'ACTIVE', 'SUSPENDED', 'DELETED', 'FAILED'] as const;
export type KeyState = (typeof ALL_KEY_STATES)[number];
/** The states clients see, list and filter by (CONTRACT §4.10). */
export const KEY_STATES = ['ACTIVE', 'SUSPENDED', 'DELETED'] as const satisfies readonly KeyState[];
export type PublicKeyState = (typeof KEY_STATES)[number];
export const LIVE_STATES: readonly KeyState[] = ['ACTIVE', 'SUSPENDED'];
/** The states that hold a value and an externalId (the partial unique indexes of migration 0003). */
export const CLAIMING_STATES: readonly KeyState[] = ['REGISTERING', 'ACTIVE', 'SUSPENDED'];
export const isPublicState = (s: KeyState): s is PublicKeyState => (KEY_STATES as readonly string[]).includes(s);

/**
 * A key value as logs may show it: phone numbers, e-mails and documents are personal data, so
 * only the first two and last two characters survive (`@a***yz`, `30***67`); shorter values keep fewer.
 */
export function maskKeyValue(v: string): string {
  const c = [...v];
  if (c.length <= 4) return `${c[0] ?? ''}***`;
  if (c.length <= 7) return `${c.slice(0, 1).join('')}***${c.slice(-1).join('')}`;
  return `${c.slice(0, 2).join('')}***${c.slice(-2).join('')}`;
}

export const KEY_TYPES = ['ALPHANUM'] as const;

export interface CollectKeyRecord {
  id: string;
  companyId: string;
  externalId: string;
  name: string;
  keyType: string;
  keyValue: string;
  state: KeyState;
  /** The company's tax regime was COMMON when the key was issued: IVA applies to the inflow fees of its payments. */
  ivaApplicable: boolean;
  createdAt: Date;
  deletedAt: Date | null;
  /** The directory registration the key went live with (set on activation; null for keys activated before registrations were stored: migration 0006). */
  anchorHandle?: string | null;
  /** A cobro's dynamic key (domain/cobro-key.ts): hidden from the customer keys; null for a customer's key. */
  cobro?: CobroTerms | null;
}

/** What a cobro's key was issued with (IssueCobroKey is idempotent on the cobro, for these terms). */
export interface CobroTerms {
  cobroId: string;
  transactionId: string;
  amountCents: bigint | null;
  expiresAt: Date;
  /** The dynamic QR issued with the key (domain/emvco.ts encodeDynamicQr), returned again on a replay. */
  qrPayload: string;
}

export interface QrRecord {
  id: string;
  companyId: string;
  keyId: string;
  type: 'STATIC';
  reference: string;
  payload: string;
  isPaid: boolean;
  createdAt: Date;
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** n characters of the alphabet, each uniformly from the CSPRNG. */
export function randomChars(n: number, alphabet = LOWER): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[randomInt(alphabet.length)];
  return s;
}

export const newKeyId = () => `bkey_${randomChars(24)}`;
export const newQrId = () => `qr_${randomChars(24)}`;
export const newDepositId = () => `dep_${randomChars(24)}`;
/** The QR reference (EMVCo tag 62 sub-tag 05, at most 25 characters). */
export const newQrReference = () => `CK${randomChars(16, UPPER)}`;
/** A generated alias: `@` + 10 lowercase alphanumerics. */
export const generateAlias = () => `@${randomChars(10)}`;

export const isKeyId = (s: string) => /^bkey_[a-z0-9]{24}$/.test(s);
export const isQrId = (s: string) => /^qr_[a-z0-9]{24}$/.test(s);
export const EXTERNAL_ID = /^[A-Za-z0-9._:-]{1,64}$/;
export const KEY_VALUE = /^@[A-Za-z0-9]{3,40}$/;

/** The request-problem collector (one implementation, in services/platform). */
export { Problems };

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
export const codePoints = (s: string): number => [...s].length;

export interface CreateKeyInput {
  externalId?: string;
  name?: string;
  keyType?: string;
  keyValue?: string;
  ivaApplicable?: boolean;
}
export interface ValidCreateKey {
  externalId: string;
  name: string;
  keyType: 'ALPHANUM';
  keyValue: string | null;
}

/** CONTRACT §6: externalId 1-64 of [A-Za-z0-9._:-]; name 1-100 code points; keyType ALPHANUM; keyValue `@` + 3-40 alphanumerics (lower-cased). */
export function validateCreateKey(i: CreateKeyInput): ValidCreateKey {
  const p = new Problems();
  const externalId = i.externalId ?? '';
  if (!externalId) p.add('externalId', 'is required');
  else if (!EXTERNAL_ID.test(externalId)) p.add('externalId', 'must be 1-64 characters of A-Z a-z 0-9 . _ : -');
  const name = i.name ?? '';
  if (!name) p.add('name', 'is required');
  else if (name.trim() === '') p.add('name', 'must not be blank');
  else if (codePoints(name) > 100) p.add('name', 'must be at most 100 characters');
  else if (CONTROL.test(name)) p.add('name', 'must not contain control characters');
  if (i.keyType !== undefined && i.keyType !== 'ALPHANUM') p.add('keyType', 'must be ALPHANUM');
  let keyValue: string | null = null;
  if (i.keyValue !== undefined) {
    if (!KEY_VALUE.test(i.keyValue)) p.add('keyValue', 'must be @ followed by 3-40 letters or digits');
    else keyValue = i.keyValue.toLowerCase();
  }
  p.throwIfAny();
  return { externalId, name: name.trim(), keyType: 'ALPHANUM', keyValue };
}

/** `ext:<externalId>` or a `bkey_` id; anything else can only be not found. */
export function parseKeyRef(ref: string): { kind: 'id'; id: string } | { kind: 'ext'; externalId: string } | null {
  if (ref.startsWith('ext:')) {
    const externalId = ref.slice(4);
    return EXTERNAL_ID.test(externalId) ? { kind: 'ext', externalId } : null;
  }
  return isKeyId(ref) ? { kind: 'id', id: ref } : null;
}
