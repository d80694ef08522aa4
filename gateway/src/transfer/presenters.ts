import { createHash } from 'node:crypto';
import { centsToNumber } from '@wallet/platform';
import { ledgerV1, transferV1 } from '@wallet/proto';
import type { ApiKeyPrincipal } from '../auth/api-key-authenticator.js';
import { railFromProto } from '../ledger/presenters.js';

/** Transfer proto ↔ HTTP edge mappings (§2.3-§2.5): amounts are JSON numbers here. */

const statusName = (s: ledgerV1.MovementStatus) => (s.startsWith('MOVEMENT_STATUS_') ? s.slice('MOVEMENT_STATUS_'.length) : s);

/** The company profile a transfer call needs, from the authenticated principal. */
export function companyProfile(p: ApiKeyPrincipal): transferV1.CompanyProfile {
  return {
    nit: p.nit,
    ivaApplicable: p.taxRegime === 'COMMON',
    multiSigThreshold: p.multiSigThreshold,
    counterpartyDailyLimitCents: p.counterpartyDailyLimitCents,
    counterpartyMonthlyLimitCents: p.counterpartyMonthlyLimitCents,
  };
}

export function resolveResultToApi(r: transferV1.ResolveKeyResponse) {
  const rc = r.recipient;
  return {
    found: true as const,
    anchorHandle: r.anchorHandle,
    keyType: r.keyType,
    keyValue: r.keyValue,
    recipient: {
      firstName: rc?.firstName ?? '', lastName: rc?.lastName ?? '', fullName: rc?.fullName ?? '',
      bankName: rc?.bankName ?? '', bankAccountType: rc?.bankAccountType ?? '', status: rc?.status ?? 'active',
      idType: rc?.idType ?? '', idValue: rc?.idValue ?? '',
    },
  };
}

export function quoteToApi(q: transferV1.QuoteResponse) {
  const f = q.fee!;
  return {
    amount: centsToNumber(q.amount),
    currentBalance: centsToNumber(q.currentBalance),
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
  };
}

/** §2.5: the send response (201), or the multi-signature pending body (200). */
export function transferToApi(t: transferV1.Transfer): { status: number; body: Record<string, unknown> } {
  const status = statusName(t.status);
  if (status === 'AWAITING_APPROVAL') {
    return {
      status: 200,
      body: {
        id: t.id, status, approvalId: t.approvalId ?? null, threshold: t.threshold,
        expiresAt: t.expiresAt ? t.expiresAt.toISOString() : null,
        amount: centsToNumber(t.amount), rail: railFromProto(t.rail),
      },
    };
  }
  return {
    status: 201,
    body: {
      id: t.id,
      status,
      amount: centsToNumber(t.amount),
      totalFee: centsToNumber(t.totalFee),
      ivaAmount: centsToNumber(t.ivaAmount),
      netAmount: centsToNumber(t.netAmount),
      currency: 'COP',
      rail: railFromProto(t.rail),
      targetName: t.targetName,
      targetDocument: t.targetDocument,
      reference: t.reference ?? null,
      createdAt: (t.createdAt ?? new Date()).toISOString(),
    },
  };
}

export function amlEntryToApi(e: transferV1.AmlEntry) {
  return {
    id: e.id,
    documentNumber: e.documentNumber,
    name: e.name ?? null,
    reason: e.reason,
    createdAt: (e.createdAt ?? new Date()).toISOString(),
  };
}

/** Canonical JSON (keys sorted at every level), for a request hash that ignores key order and spacing. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}
