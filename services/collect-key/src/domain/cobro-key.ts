import { Problems } from './collect-key.js';

/**
 * A cobro's dynamic key (the cobro is pse-deposit's): an ordinary collect key of the company, marked
 * with the cobro, whose QR is dynamic (domain/emvco.ts encodeDynamicQr). Its externalId names the
 * cobro for the logs and the payments' `brebKey`; it never meets a customer's externalId (the
 * one-per-externalId index leaves cobro keys out).
 */
export const cobroExternalId = (cobroId: string): string => `cobro:${cobroId}`;

/** `cob_` + letters and digits, short enough for `cobro:<id>` to be an externalId (≤ 64). */
export const COBRO_ID = /^cob_[A-Za-z0-9]{1,54}$/;
/** The network's transaction id: printable ASCII, 1-35 characters (EMVCo tag 62/05 and the notification). */
export const TRANSACTION_ID = /^[\x20-\x7e]{1,35}$/;
/** The largest amount tag 54 can write: 13 characters, "99999999999.99". */
export const MAX_QR_AMOUNT_CENTS = 9_999_999_999_999n;

export interface IssueCobroKeyInput {
  cobroId?: string;
  transactionId?: string;
  amountCents?: bigint | undefined;
  expiresAt?: Date | undefined;
  merchantName?: string;
  ivaApplicable?: boolean;
}
export interface ValidIssueCobroKey {
  cobroId: string;
  transactionId: string;
  amountCents: bigint | null;
  expiresAt: Date;
  merchantName: string;
  ivaApplicable: boolean;
}

/** Every bad field in one INVALID_REQUEST. The expiry must be ahead of `now` only for a key not issued yet (the caller checks). */
export function validateIssueCobroKey(i: IssueCobroKeyInput): ValidIssueCobroKey {
  const p = new Problems();
  const cobroId = i.cobroId ?? '';
  if (!COBRO_ID.test(cobroId)) p.add('cobroId', 'must be cob_ followed by 1-54 letters or digits');
  const transactionId = i.transactionId ?? '';
  if (!TRANSACTION_ID.test(transactionId)) p.add('transactionId', 'must be 1-35 printable ASCII characters');
  const amountCents = i.amountCents ?? null;
  if (amountCents !== null && (amountCents <= 0n || amountCents > MAX_QR_AMOUNT_CENTS)) p.add('amountCents', 'must be between 1 and 9999999999999');
  const expiresAt = i.expiresAt;
  if (!expiresAt || Number.isNaN(expiresAt.getTime())) p.add('expiresAt', 'is required');
  p.throwIfAny();
  return {
    cobroId,
    transactionId,
    amountCents,
    expiresAt: expiresAt!,
    merchantName: (i.merchantName ?? '').trim(),
    ivaApplicable: i.ivaApplicable === true,
  };
}

/** Whether a stored cobro key was issued with the same terms (a replay) rather than another request for the same cobro. */
export function sameCobroTerms(a: { transactionId: string; amountCents: bigint | null; expiresAt: Date }, b: ValidIssueCobroKey): boolean {
  return a.transactionId === b.transactionId && a.amountCents === b.amountCents && a.expiresAt.getTime() === b.expiresAt.getTime();
}
