import { Problems } from '@wallet/platform';
import { DOCUMENT_TYPES } from './deposit.js';

export const MAX_SAFE_CENTS = BigInt(Number.MAX_SAFE_INTEGER);
export const MIN_DEPOSIT_CENTS = 100n;

/** The request-problem collector (one implementation, in services/platform). */
export { Problems };

export const codePoints = (s: string): number => [...s].length;
// Control characters (C0, DEL, C1) and the Unicode line/paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(v: string): boolean {
  if (v.length > 254 || !EMAIL.test(v)) return false;
  const [local] = v.split('@');
  return !!local && local.length <= 64 && !local.startsWith('.') && !local.endsWith('.') && !local.includes('..');
}

/** Required single-line text of 1..max code points (not blank, no control characters). */
export function checkName(p: Problems, path: string, v: string | undefined | null, max: number, required: boolean): void {
  if (v === undefined || v === null || v === '') {
    if (required) p.add(path, 'is required');
    return;
  }
  if (v.trim() === '') p.add(path, 'must not be blank');
  else if (codePoints(v) > max) p.add(path, `must be at most ${max} characters`);
  else if (CONTROL.test(v)) p.add(path, 'must not contain control characters');
}

export interface CreatePseInput {
  amountCents: bigint;
  payerDocumentTypeId: number;
  payerDocumentNumber: string;
  payerFirstName: string;
  payerLastName: string;
  payerEmail: string;
  payerPhone?: string | undefined;
  internalRef?: string | undefined;
}

/** §4.6 field rules, every problem at once. Text is trimmed; the e-mail's domain lower-cased. */
export function validateCreatePse(i: CreatePseInput): CreatePseInput {
  const p = new Problems();
  if (typeof i.amountCents !== 'bigint' || i.amountCents < MIN_DEPOSIT_CENTS) p.add('amountCents', 'must be an integer of at least 100 centavos');
  else if (i.amountCents > MAX_SAFE_CENTS) p.add('amountCents', 'is too large');
  if (!(i.payerDocumentTypeId in DOCUMENT_TYPES)) p.add('payerDocumentTypeId', 'must be 1 (CC), 4 (CE), 5 (Pasaporte) or 8 (NIT)');
  if (!i.payerDocumentNumber) p.add('payerDocumentNumber', 'is required');
  else if (!/^\d{5,15}$/.test(i.payerDocumentNumber)) p.add('payerDocumentNumber', 'must be 5 to 15 digits');
  checkName(p, 'payerFirstName', i.payerFirstName, 100, true);
  checkName(p, 'payerLastName', i.payerLastName, 100, true);
  if (!i.payerEmail) p.add('payerEmail', 'is required');
  else if (!isEmail(i.payerEmail.trim())) p.add('payerEmail', 'must be a valid e-mail address');
  if (i.payerPhone !== undefined && i.payerPhone !== '' && !/^3\d{9}$/.test(i.payerPhone)) {
    p.add('payerPhone', 'must be a Colombian mobile number: 10 digits starting with 3');
  }
  if (i.internalRef !== undefined && i.internalRef !== '') checkName(p, 'internalRef', i.internalRef, 100, false);
  p.throwIfAny();
  const email = i.payerEmail.trim();
  const at = email.lastIndexOf('@');
  return {
    amountCents: i.amountCents,
    payerDocumentTypeId: i.payerDocumentTypeId,
    payerDocumentNumber: i.payerDocumentNumber,
    payerFirstName: i.payerFirstName.trim(),
    payerLastName: i.payerLastName.trim(),
    payerEmail: email.slice(0, at) + email.slice(at).toLowerCase(),
    ...(i.payerPhone ? { payerPhone: i.payerPhone } : {}),
    ...(i.internalRef ? { internalRef: i.internalRef.trim() } : {}),
  };
}

export interface ShareInput {
  depositId: string;
  recipientEmail: string;
  recipientName?: string | undefined;
  customMessage?: string | undefined;
}

/** §4.7: recipientEmail valid, recipientName ≤ 100, customMessage ≤ 500 code points (multi-line allowed). */
export function validateShare(raw: ShareInput): ShareInput {
  const p = new Problems();
  // The name may reach the To: header: line breaks become spaces (never a header of their own).
  const i = { ...raw, ...(raw.recipientName ? { recipientName: raw.recipientName.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ') } : {}) };
  if (!i.recipientEmail) p.add('recipientEmail', 'is required');
  else if (!isEmail(i.recipientEmail.trim())) p.add('recipientEmail', 'must be a valid e-mail address');
  if (i.recipientName !== undefined && i.recipientName !== '') checkName(p, 'recipientName', i.recipientName, 100, false);
  if (i.customMessage !== undefined && codePoints(i.customMessage) > 500) p.add('customMessage', 'must be at most 500 characters');
  p.throwIfAny();
  return {
    depositId: i.depositId,
    recipientEmail: i.recipientEmail.trim(),
    ...(i.recipientName ? { recipientName: i.recipientName.trim() } : {}),
    ...(i.customMessage && i.customMessage.trim() !== '' ? { customMessage: i.customMessage } : {}),
  };
}
