import { createHash, randomBytes } from 'node:crypto';
import { Problems } from '@wallet/platform';
import { checkName } from './validation.js';

/**
 * A cobro (an expected payment, docs/cobros.md): what a company expects to be paid, by when, by whom,
 * and the inbound payments matched to it. Pure: ids, validation, and the matching decision of one
 * payment against one cobro (`decideMatch`), which the store applies under the cobro's row lock.
 */

export const COBRO_STATUSES = ['OPEN', 'PARTIALLY_PAID', 'PAID', 'EXPIRED', 'CANCELLED'] as const;
export type CobroStatus = (typeof COBRO_STATUSES)[number];
/** CREATING: stored, its dynamic key not issued yet (never shown; the sweeper finishes or abandons it). */
export type CobroState = CobroStatus | 'CREATING' | 'ABANDONED';
export const OPEN_STATES: readonly CobroState[] = ['OPEN', 'PARTIALLY_PAID'];
export const isOpen = (s: CobroState): boolean => OPEN_STATES.includes(s);
export const isShown = (s: CobroState): s is CobroStatus => (COBRO_STATUSES as readonly string[]).includes(s);

export const COBRO_METHODS = ['BREB_QR', 'BREB_KEY', 'PSE'] as const;
export const usesBreb = (methods: readonly CobroMethod[]): boolean => methods.includes('BREB_QR') || methods.includes('BREB_KEY');
export type CobroMethod = (typeof COBRO_METHODS)[number];

/** What happens to a payment beyond the amount, or to one for a cobro already PAID. */
export const OVERPAYMENT_POLICIES = ['accept', 'hold_for_review', 'return'] as const;
export type OverpaymentPolicy = (typeof OVERPAYMENT_POLICIES)[number];

export type AmountType = 'FIXED' | 'RANGE' | 'OPEN';
export type MatchedBy = 'TRANSACTION_ID' | 'DYNAMIC_KEY' | 'PSE_LINK' | 'REFERENCE' | 'PAYER_RULE' | 'MANUAL';
/**
 * COUNTED: part of paidAmount (less what is returned of it automatically); EXCESS: accepted beyond a PAID
 * cobro's amount (policy accept); HELD_FOR_REVIEW: not counted, for the company to decide; RETURNED: a
 * payment to a PAID cobro under the policy `return`, not counted and returned whole to its payer.
 */
export type Disposition = 'COUNTED' | 'EXCESS' | 'HELD_FOR_REVIEW' | 'RETURNED';

export interface CobroPayer {
  document: string | null;
  name: string | null;
}

/** Whom the cobro's PSE link is for (validated as POST /deposits/pse validates its payer). */
export interface CobroPsePayer {
  documentTypeId: number;
  documentNumber: string;
  firstName: string;
  lastName: string;
  email: string;
  phone?: string | undefined;
}

export interface CobroPse {
  depositId: string;
  paygatewayUrl: string;
}

export interface CobroBreb {
  keyId: string;
  keyValue: string;
  qrPayload: string;
}

export interface CobroPaymentRecord {
  depositId: string;
  source: 'BREB' | 'PSE';
  amount: bigint;
  netAmount: bigint;
  matchedBy: MatchedBy;
  disposition: Disposition;
  payerName: string | null;
  payerDocument: string | null;
  receivedAt: Date;
  matchedAt: Date;
  /** Policy `return`: what of it goes back to the payer automatically, and how far that went. */
  autoReturn: AutoReturn | null;
  /** Returned to its payer since it was matched (POST /deposits/{id}/returns), the automatic return aside. */
  returned: bigint;
  /** Reversed by its provider after it was credited (a PSE payment debited back): its gross; 0 when it was not. A reversed payment no longer counts. */
  reversed: bigint;
}

/**
 * An automatic return (policy `return`): OWED (recorded with the match; the cobro sweeper asks the
 * payment's owner for it), REQUESTED (the return exists: its own status is the deposit's returns'), or
 * FAILED (the owner refused it for good, e.g. the wallet could not cover it: `error`; return it by hand).
 */
export interface AutoReturn {
  returnId: string;
  amount: bigint;
  status: 'OWED' | 'REQUESTED' | 'FAILED';
  error: string | null;
}

export interface CobroRecord {
  id: string;
  companyId: string;
  reference: string;
  state: CobroState;
  amountType: AmountType;
  amount: bigint | null;
  minAmount: bigint | null;
  maxAmount: bigint | null;
  paidAmount: bigint;
  /** The amount tolerance it was made with (its company's rule then): short of what is due by at most `toleranceBelow` completes it; above its max by at most `toleranceAbove` is no overpayment. */
  toleranceBelow: bigint;
  toleranceAbove: bigint;
  description: string | null;
  expectedPayer: CobroPayer | null;
  metadata: Record<string, unknown>;
  overpaymentPolicy: OverpaymentPolicy;
  methods: CobroMethod[];
  transactionId: string;
  breb: CobroBreb | null;
  pse: CobroPse | null;
  psePayer: CobroPsePayer | null;
  /** A request fingerprint: the same reference with another request is REFERENCE_CONFLICT. */
  requestHash: string;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  paidAt: Date | null;
  closedAt: Date | null;
  /** What of its COUNTED payments was returned to their payers since (the automatic returns aside): paid less returned is what it keeps. */
  returnedAmount: bigint;
  payments: CobroPaymentRecord[];
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
function randomText(n: number, alphabet = ALPHABET): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(32)) {
      if (b < 252 && out.length < n) out += alphabet[b % 36];
    }
  }
  return out;
}

/** `cob_` + 24 lowercase alphanumerics. */
export const newCobroId = (): string => `cob_${randomText(24)}`;
export const isCobroId = (v: string): boolean => /^cob_[a-z0-9]{24}$/.test(v);
/** The id a dynamic QR carries (EMVCo 62-05 holds at most 25): `CB` + 20 uppercase alphanumerics. */
export const newTransactionId = (): string => `CB${randomText(20, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`;

/** A document compared by its digits and letters only ("CC 1.020.304" and "1020304" are one payer). */
export const documentKey = (d: string | null | undefined): string | null => {
  const k = (d ?? '')
    .replace(/^(CC|CE|NIT|PA|PASAPORTE|TI)\s+/i, '')
    .replace(/[^A-Za-z0-9]/g, '')
    .toUpperCase();
  return k.length > 0 ? k : null;
};

export const MIN_COBRO_CENTS = 100n;
export const MAX_COBRO_CENTS = 200_000_000_000n;
export const MIN_TTL_MS = 60_000;
export const MAX_TTL_MS = 366 * 24 * 3600 * 1000;
/** A cobro created without expiresAt takes payments for 24 hours (as a PSE link does). */
export const DEFAULT_TTL_MS = 24 * 3600 * 1000;
const REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,63}$/;
const DOCUMENT = /^[A-Za-z0-9.-]{3,20}$/;

export interface CreateCobroInput {
  reference: string;
  amountCents?: bigint | undefined;
  minAmountCents?: bigint | undefined;
  maxAmountCents?: bigint | undefined;
  expiresAt: Date | undefined;
  description?: string | undefined;
  expectedPayer?: { document?: string | undefined; name?: string | undefined } | undefined;
  metadata?: Record<string, unknown> | undefined;
  methods: string[];
  overpaymentPolicy?: string | undefined;
  psePayer?: CobroPsePayer | undefined;
}

export interface ValidCobro {
  reference: string;
  amountType: AmountType;
  amount: bigint | null;
  minAmount: bigint | null;
  maxAmount: bigint | null;
  expiresAt: Date;
  description: string | null;
  expectedPayer: CobroPayer | null;
  metadata: Record<string, unknown>;
  methods: CobroMethod[];
  overpaymentPolicy: OverpaymentPolicy;
  psePayer: CobroPsePayer | null;
}

const amountOk = (v: bigint | undefined): v is bigint => typeof v === 'bigint' && v >= MIN_COBRO_CENTS && v <= MAX_COBRO_CENTS;

/** Every problem at once (Spanish, as the gateway's), or the normalized cobro. */
export function validateCreateCobro(i: CreateCobroInput, now: Date, minTtlMs = MIN_TTL_MS): ValidCobro {
  const p = new Problems();
  const reference = (i.reference ?? '').trim();
  if (!REFERENCE.test(reference)) p.add('reference', 'Debe tener de 1 a 64 caracteres [A-Za-z0-9._:/#-] y empezar por letra o dígito.');
  const has = (v: bigint | undefined) => v !== undefined;
  let amountType: AmountType = 'OPEN';
  if (has(i.amountCents)) {
    amountType = 'FIXED';
    if (!amountOk(i.amountCents)) p.add('amountCents', 'Debe ser un entero entre 100 y 200000000000 centavos.');
    if (has(i.minAmountCents) || has(i.maxAmountCents)) p.add('amountCents', 'Indique un monto fijo o un rango (minAmountCents, maxAmountCents), no ambos.');
  } else if (has(i.minAmountCents) || has(i.maxAmountCents)) {
    amountType = 'RANGE';
    if (!amountOk(i.minAmountCents)) p.add('minAmountCents', 'Debe ser un entero entre 100 y 200000000000 centavos.');
    if (!amountOk(i.maxAmountCents)) p.add('maxAmountCents', 'Debe ser un entero entre 100 y 200000000000 centavos.');
    if (amountOk(i.minAmountCents) && amountOk(i.maxAmountCents) && i.minAmountCents > i.maxAmountCents) {
      p.add('maxAmountCents', 'Debe ser mayor o igual que minAmountCents.');
    }
  }
  const expiresAt = i.expiresAt ?? new Date(now.getTime() + DEFAULT_TTL_MS);
  if (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime())) p.add('expiresAt', 'Debe ser un instante válido.');
  else if (expiresAt.getTime() < now.getTime() + minTtlMs) p.add('expiresAt', `Debe ser al menos ${Math.ceil(minTtlMs / 1000)} segundos en el futuro.`);
  else if (expiresAt.getTime() > now.getTime() + MAX_TTL_MS) p.add('expiresAt', 'Debe ser a lo sumo un año en el futuro.');
  if (i.description !== undefined && i.description !== '') checkName(p, 'description', i.description, 140, false);
  let expectedPayer: CobroPayer | null = null;
  if (i.expectedPayer) {
    const document = i.expectedPayer.document?.trim() || null;
    const name = i.expectedPayer.name?.trim() || null;
    if (document !== null && !DOCUMENT.test(document)) p.add('expectedPayer.document', 'Debe tener de 3 a 20 letras, dígitos, puntos o guiones.');
    if (name !== null) checkName(p, 'expectedPayer.name', name, 150, false);
    if (document === null && name === null) p.add('expectedPayer', 'Indique document o name.');
    expectedPayer = { document, name };
  }
  const metadata = i.metadata ?? {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) p.add('metadata', 'Debe ser un objeto.');
  else if (Object.keys(metadata).length > 20) p.add('metadata', 'A lo sumo 20 claves.');
  else if (JSON.stringify(metadata).length > 4096) p.add('metadata', 'A lo sumo 4096 caracteres en JSON.');
  const methods = [...new Set(i.methods ?? [])];
  if (methods.length === 0) p.add('methods', 'Indique al menos un medio de pago: BREB_QR, BREB_KEY o PSE.');
  for (const m of methods) if (!(COBRO_METHODS as readonly string[]).includes(m)) p.add('methods', `Medio de pago no admitido: ${m}.`);
  const pse = methods.includes('PSE');
  if (pse && amountType !== 'FIXED') p.add('methods', 'El medio PSE necesita un monto fijo (amountCents).');
  if (pse && !i.psePayer) p.add('psePayer', 'Es obligatorio con el medio PSE.');
  if (!pse && i.psePayer) p.add('psePayer', 'Solo se indica con el medio PSE.');
  const policy = i.overpaymentPolicy ?? 'accept';
  if (!(OVERPAYMENT_POLICIES as readonly string[]).includes(policy)) p.add('overpaymentPolicy', 'Debe ser accept, hold_for_review o return.');
  p.throwIfAny();
  return {
    reference,
    amountType,
    amount: amountType === 'FIXED' ? i.amountCents! : null,
    minAmount: amountType === 'RANGE' ? i.minAmountCents! : null,
    maxAmount: amountType === 'RANGE' ? i.maxAmountCents! : null,
    expiresAt: expiresAt!,
    description: i.description?.trim() || null,
    expectedPayer,
    metadata: metadata,
    methods: methods as CobroMethod[],
    overpaymentPolicy: policy as OverpaymentPolicy,
    psePayer: pse && i.psePayer ? i.psePayer : null,
  };
}

/** What a cobro needs to be PAID, and the most it takes: FIXED amount/amount, RANGE min/max, OPEN any/any. */
export function bounds(c: Pick<CobroRecord, 'amountType' | 'amount' | 'minAmount' | 'maxAmount'>): { due: bigint | null; max: bigint | null } {
  if (c.amountType === 'FIXED') return { due: c.amount, max: c.amount };
  if (c.amountType === 'RANGE') return { due: c.minAmount, max: c.maxAmount };
  return { due: null, max: null };
}

export interface PaymentFacts {
  amount: bigint;
  receivedAt: Date;
}

/**
 * A company's amount tolerance (docs/cobros.md "Amount tolerance"): the larger of `cents` and `bps`
 * ten-thousandths of a cobro's amount (or, for a range, of its minimum below and its maximum above).
 */
export interface AmountTolerance {
  cents: bigint;
  bps: number;
}
export const NO_TOLERANCE: AmountTolerance = Object.freeze({ cents: 0n, bps: 0 });
/** At most 1,000,000 COP and 10 %. */
export const MAX_TOLERANCE_CENTS = 100_000_000n;
export const MAX_TOLERANCE_BPS = 1000;

/** The tolerance on `base` (centavos, rounded down). */
export function toleranceOn(t: AmountTolerance, base: bigint): bigint {
  const share = (base * BigInt(t.bps)) / 10_000n;
  return share > t.cents ? share : t.cents;
}

/**
 * The tolerance a new cobro is made with, from its company's rule at that moment (kept with the cobro:
 * a later change of the rule never changes a cobro's terms): below what is due, never all of it (at
 * least one centavo must still be paid), and above its max. None for an open amount.
 */
export function cobroTolerance(
  t: AmountTolerance,
  c: Pick<CobroRecord, 'amountType' | 'amount' | 'minAmount' | 'maxAmount'>,
): { below: bigint; above: bigint } {
  const { due, max } = bounds(c);
  if (due === null || max === null) return { below: 0n, above: 0n };
  const below = toleranceOn(t, due);
  return { below: below >= due ? due - 1n : below, above: toleranceOn(t, max) };
}

/** A company's tolerance as asked for: both within their bounds, whole numbers. */
export function validateTolerance(i: { amountToleranceCents: bigint; amountToleranceBps: number }): AmountTolerance {
  const p = new Problems();
  if (i.amountToleranceCents < 0n || i.amountToleranceCents > MAX_TOLERANCE_CENTS)
    p.add('amountToleranceCents', 'Debe estar entre 0 y 100.000.000 centavos (1.000.000 COP).');
  if (!Number.isInteger(i.amountToleranceBps) || i.amountToleranceBps < 0 || i.amountToleranceBps > MAX_TOLERANCE_BPS)
    p.add('amountToleranceBps', 'Debe estar entre 0 y 1000 (10 %).');
  p.throwIfAny();
  return { cents: i.amountToleranceCents, bps: i.amountToleranceBps };
}

/** Why a payment aimed at a cobro is not part of it (it is listed as unmatched with this reason). */
export type UnmatchedReason = 'COBRO_EXPIRED' | 'COBRO_CANCELLED' | 'NO_MATCH';

/** A match; `returnCents` > 0: that much of the payment goes back to its payer automatically (policy `return`). */
export type MatchDecision =
  | { kind: 'match'; disposition: Disposition; event: 'paid' | 'partially_paid' | null; paidAmount: bigint; returnCents: bigint }
  | { kind: 'unmatched'; reason: UnmatchedReason };

/**
 * One payment against one cobro, given the cobro as it is under its row lock. The payment counts
 * when the network received it by `expiresAt` and the cobro is still open: a payment received in
 * time but matched after the expiry sweeper ran (an event late past the sweeper's grace) is listed
 * unmatched, never counted against an EXPIRED cobro. A payment received after `expiresAt` never
 * counts, whatever the cobro's state. Beyond what the cobro takes (over its amount or max, or to a
 * PAID cobro): the policy decides — `accept` keeps it matched (COUNTED if it completes an open cobro,
 * EXCESS when the cobro was already PAID), `hold_for_review` keeps it out of the total, `return` counts
 * what completes the cobro and returns the rest to the payer (all of it to a PAID cobro: RETURNED).
 */
export function decideMatch(
  c: Pick<CobroRecord, 'state' | 'amountType' | 'amount' | 'minAmount' | 'maxAmount' | 'paidAmount' | 'expiresAt' | 'overpaymentPolicy'> &
    Partial<Pick<CobroRecord, 'toleranceBelow' | 'toleranceAbove'>>,
  p: PaymentFacts,
): MatchDecision {
  if (c.state === 'CANCELLED') return { kind: 'unmatched', reason: 'COBRO_CANCELLED' };
  if (c.state === 'EXPIRED' || p.receivedAt.getTime() > c.expiresAt.getTime()) return { kind: 'unmatched', reason: 'COBRO_EXPIRED' };
  if (c.state === 'PAID') {
    const disposition = c.overpaymentPolicy === 'accept' ? 'EXCESS' : c.overpaymentPolicy === 'return' ? 'RETURNED' : 'HELD_FOR_REVIEW';
    return { kind: 'match', disposition, event: null, paidAmount: c.paidAmount, returnCents: disposition === 'RETURNED' ? p.amount : 0n };
  }
  if (!isOpen(c.state)) return { kind: 'unmatched', reason: 'NO_MATCH' };
  const { due, max } = bounds(c);
  const total = c.paidAmount + p.amount;
  // The tolerance the cobro was made with: short of what is due by at most it completes the cobro;
  // above the max by at most it is not an overpayment.
  const over = max !== null && total > max + (c.toleranceAbove ?? 0n);
  if (over && c.overpaymentPolicy === 'hold_for_review') {
    return { kind: 'match', disposition: 'HELD_FOR_REVIEW', event: null, paidAmount: c.paidAmount, returnCents: 0n };
  }
  // Policy `return`: the cobro counts up to its amount (or max); the rest goes back to the payer.
  const returnCents = over && c.overpaymentPolicy === 'return' ? total - max! : 0n;
  const counted = total - returnCents;
  const paid = due === null || counted >= due - (c.toleranceBelow ?? 0n);
  return { kind: 'match', disposition: 'COUNTED', event: paid ? 'paid' : 'partially_paid', paidAmount: counted, returnCents };
}

/** A counted payment's reversal against its cobro: the cobro's new paid total, the move of COBRO_MACHINE (null: the state stays). */
export interface ReversalDecision {
  paidAmount: bigint;
  /** How many of the cobro's EXCESS payments (in their order) count again, the new total including them. */
  promote: number;
  event: 'reversed_to_open' | 'reversed_to_partial' | 'reversed_still_paid' | 'reversed_to_expired' | null;
}

/** Whether `paid` completes the cobro: its amount (a range's minimum) less the tolerance it was made with; an open amount, any payment. */
export function completes(
  c: Pick<CobroRecord, 'amountType' | 'amount' | 'minAmount' | 'maxAmount'> & Partial<Pick<CobroRecord, 'toleranceBelow'>>,
  paid: bigint,
) {
  const { due } = bounds(c);
  return due === null ? paid > 0n : paid >= due - (c.toleranceBelow ?? 0n);
}

/**
 * The provider reversed a payment that counted for the cobro (`counted`: what of it was in the paid
 * total, its automatic return aside), given the cobro as it is under its row lock: the paid total goes
 * down by it, and the state follows the new total as the table declares it.
 *
 * The payments accepted beyond a PAID cobro (`excess`, policy `accept`, in the order they were matched)
 * were accepted: while the cobro is short of its amount again they count, in their order, as they would
 * have had the reversed payment never counted — so a reversal and a new payment give the same cobro in
 * either order. A PAID cobro that what is left still completes stays PAID (`reversed_still_paid`); one
 * short of it is PARTIALLY_PAID, or OPEN when nothing counts any more, while it can still be paid (its
 * expiresAt not passed; an open one past it is the sweeper's to expire, as always); a PAID one past its
 * expiresAt cannot be completed any more and is EXPIRED. A closed cobro (EXPIRED, CANCELLED) keeps its
 * state; its total goes down all the same.
 */
export function decideReversal(
  c: Pick<CobroRecord, 'state' | 'amountType' | 'amount' | 'minAmount' | 'maxAmount' | 'paidAmount' | 'expiresAt'> &
    Partial<Pick<CobroRecord, 'toleranceBelow'>>,
  counted: bigint,
  excess: readonly bigint[],
  now: Date,
): ReversalDecision {
  let paidAmount = c.paidAmount > counted ? c.paidAmount - counted : 0n;
  if (c.state !== 'PAID' && c.state !== 'PARTIALLY_PAID') return { paidAmount, promote: 0, event: null };
  let promote = 0;
  while (promote < excess.length && !completes(c, paidAmount)) paidAmount += excess[promote++]!;
  if (c.state === 'PAID' && completes(c, paidAmount)) return { paidAmount, promote, event: 'reversed_still_paid' };
  if (c.state === 'PAID' && now.getTime() > c.expiresAt.getTime()) return { paidAmount, promote, event: 'reversed_to_expired' };
  return { paidAmount, promote, event: paidAmount === 0n ? 'reversed_to_open' : 'reversed_to_partial' };
}

/** The fingerprint of a creation request (reference reuse with another request is REFERENCE_CONFLICT). */
export function requestFingerprint(v: ValidCobro): string {
  return JSON.stringify([
    v.reference,
    v.amountType,
    v.amount?.toString() ?? null,
    v.minAmount?.toString() ?? null,
    v.maxAmount?.toString() ?? null,
    v.expiresAt.toISOString(),
    v.description,
    v.expectedPayer,
    v.methods.slice().sort(),
    v.overpaymentPolicy,
    v.metadata,
    v.psePayer,
  ]);
}

/**
 * The id of the automatic return of a payment (policy `return`): derived from the deposit, so that a
 * retry of the request after a crash or a time-out asks for the same return, never a second one.
 */
export function autoReturnId(depositId: string): string {
  const digest = createHash('sha256').update(`cobro-auto-return:${depositId}`).digest();
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `ret_${Array.from(digest.subarray(0, 24), (b) => alphabet[b % 36]).join('')}`;
}
