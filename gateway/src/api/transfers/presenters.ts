import { createHash } from 'node:crypto';
import { canonicalJson, centsToNumber, formatInstant, policyDecisionView } from '@wallet/platform';
import { ledgerV1, transferV1 } from '@wallet/proto';
import { railFromProto } from '../wallets/presenters.js';
import { z } from 'zod';
import { achBankById } from '../dictionaries/ach-banks.js';
import { SendBody } from './schemas.js';

/** Transfer proto ↔ HTTP edge mappings (§2.3-§2.5): amounts are JSON numbers here. */

/** A movement's status as the API names it (without the proto's prefix). */
export const statusName = (s: ledgerV1.MovementStatus | string) => (s.startsWith('MOVEMENT_STATUS_') ? s.slice('MOVEMENT_STATUS_'.length) : s);

export function resolveResultToApi(r: transferV1.ResolveKeyResponse) {
  const rc = r.recipient;
  return {
    found: true as const,
    anchorHandle: r.anchorHandle,
    keyType: r.keyType,
    keyValue: r.keyValue,
    recipient: {
      firstName: rc?.firstName ?? '',
      lastName: rc?.lastName ?? '',
      fullName: rc?.fullName ?? '',
      bankName: rc?.bankName ?? '',
      bankAccountType: rc?.bankAccountType ?? '',
      status: rc?.status ?? 'active',
      idType: rc?.idType ?? '',
      idValue: rc?.idValue ?? '',
    },
  };
}

export function quoteToApi(q: transferV1.QuoteResponse) {
  const f = q.fee!;
  return {
    amount: centsToNumber(q.amount),
    // A wallet balance can exceed 2^53 centavos: written exactly as a JSON number (http/json-text.ts).
    currentBalance: q.currentBalance,
    feeBreakdown: {
      fixedFee: centsToNumber(f.fixedFee),
      variableFee: centsToNumber(f.variableFee),
      subtotalFee: centsToNumber(f.subtotalFee),
      ivaApplicable: f.ivaApplicable,
      ivaAmount: centsToNumber(f.ivaAmount),
      totalCharged: centsToNumber(f.totalCharged),
    },
    totalCost: centsToNumber(q.totalCost),
    canAfford: q.canAfford,
    message: q.message ?? null,
    policyDecision: policyDecisionView(q.policyDecision),
  };
}

/**
 * §2.5: the send response, 201; a multi-signature send answers 200 (CONTRACT §9, also on replays
 * once approved) with `approvalId`, `threshold` and `expiresAt` beside the §2.5 fields.
 */
export function transferToApi(t: transferV1.Transfer): { status: number; body: Record<string, unknown> } {
  const body: Record<string, unknown> = {
    id: t.id,
    status: statusName(t.status),
    amount: centsToNumber(t.amount),
    totalFee: centsToNumber(t.totalFee),
    ivaAmount: centsToNumber(t.ivaAmount),
    netAmount: centsToNumber(t.netAmount),
    currency: 'COP',
    rail: railFromProto(t.rail),
    targetName: t.targetName,
    targetDocument: t.targetDocument,
    reference: t.reference ?? null,
    createdAt: formatInstant(t.createdAt ?? new Date()),
    policyDecision: policyDecisionView(t.policyDecision),
  };
  if (!t.approvalId) return { status: 201, body };
  return {
    status: 200,
    body: {
      ...body,
      approvalId: t.approvalId,
      threshold: t.threshold,
      expiresAt: t.expiresAt ? formatInstant(t.expiresAt) : null,
      approvalRoles: approvalRoles(t.approvalRoles),
    },
  };
}

/** The roles whose signatures count; none named (a service from before approval policies): both. */
const approvalRoles = (roles: readonly string[]): string[] => (roles.length > 0 ? [...roles] : ['ADMIN', 'OPERATOR']);

/** One signature of an approval (a transfer's or a batch's). */
export function signatureToApi(s: transferV1.ApprovalSignature) {
  return { userId: s.userId, email: s.email, role: s.role, signedAt: formatInstant(s.signedAt ?? new Date(0)) };
}

/** CONTRACT §5 approval item (amount as a number of centavos, like the send response). */
export function approvalToApi(a: transferV1.Approval) {
  return {
    approvalId: a.approvalId,
    transactionId: a.transactionId,
    amount: centsToNumber(a.amount),
    totalFee: centsToNumber(a.totalFee),
    ivaAmount: centsToNumber(a.ivaAmount),
    rail: railFromProto(a.rail),
    targetName: a.targetName,
    targetDocument: a.targetDocument,
    reference: a.reference ?? null,
    description: a.description ?? null,
    threshold: a.threshold,
    signatures: a.signatures.map(signatureToApi),
    status: a.status,
    createdAt: formatInstant(a.createdAt ?? new Date(0)),
    expiresAt: formatInstant(a.expiresAt ?? new Date(0)),
    decidedAt: a.decidedAt ? formatInstant(a.decidedAt) : null,
    rejectReason: a.rejectReason ?? null,
    rejectedBy: a.rejectedBy ?? null,
    transactionStatus: statusName(a.transactionStatus),
    approvalRoles: approvalRoles(a.approvalRoles),
  };
}

export function amlEntryToApi(e: transferV1.AmlEntry) {
  const account = e.kind === 'BANK_ACCOUNT' && e.bankAccount;
  return {
    id: e.id,
    // A transfer service from before bank-account entries answers no kind: a document.
    kind: account ? ('BANK_ACCOUNT' as const) : ('DOCUMENT' as const),
    documentNumber: account ? null : e.documentNumber,
    bankAccount: account ? { bankCode: account.bankCode, accountNumberMasked: account.accountNumberMasked } : null,
    name: e.name ?? null,
    reason: e.reason,
    createdAt: formatInstant(e.createdAt ?? new Date()),
  };
}

/**
 * The hash of a send or batch body that the transfer service stores (keys by UTF-16 code unit: a
 * batch item can be any JSON, so its key order is part of hashes already stored).
 */
export function requestHash(body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(body, { keyOrder: 'code-unit' }))
    .digest('hex');
}

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
    ...('counterpartyId' in body && body.counterpartyId ? { counterpartyId: body.counterpartyId } : {}),
    targetName: body.targetName,
    targetDocument: body.targetDocument === '' ? undefined : body.targetDocument,
  };
}
