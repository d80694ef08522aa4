import {
  batchToApi,
  cobroView,
  collectKeyView,
  counterpartyView,
  depositReturnView,
  depositView,
  formatInstant,
  policyDecisionView,
  PLATFORM_EVENT_TYPES,
  reconciliationBreakView,
  reconciliationRunView,
  scheduleRunOfEvent,
  scheduleRunView,
  walletMoveOfEvent,
  walletMoveView,
  balanceAlertCrossingOfEvent,
  balanceAlertEventView,
  BALANCE_ALERT_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  type PlatformEventType,
  type WebhookEventType,
} from '@wallet/platform';
import { createHash } from 'node:crypto';
import {
  cobroEventsV1,
  collectKeyEventsV1,
  companyEventsV1,
  counterpartyEventsV1,
  depositEventsV1,
  policyEventsV1,
  reconciliationEventsV1,
  transferEventsV1,
  walletEventsV1,
  type collectKeyV1,
  type depositV1,
  type reconciliationV1,
  type transferV1,
} from '@wallet/proto';

/** The event types are written once, in @wallet/platform (presenters/webhook-event-types.ts). */
export { PLATFORM_EVENT_TYPES, WEBHOOK_EVENT_TYPES, type PlatformEventType, type WebhookEventType } from '@wallet/platform';

/**
 * The tenant of platform endpoints, their events and deliveries. Company-scoped calls can never
 * name it: a company id is never empty (the use cases refuse a call without one).
 */
export const PLATFORM_TENANT = '';

export function isPlatformEventType(t: string): t is PlatformEventType {
  return (PLATFORM_EVENT_TYPES as readonly string[]).includes(t);
}

/** Sent by `POST /webhooks/endpoints/{id}/test` whatever the subscription. */
export const PING_EVENT_TYPE = 'webhook.ping';

export function isWebhookEventType(t: string): t is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);
}

/** One public event derived from an internal one. */
export interface WebhookEvent {
  /** evt_…: stable for a given source event and type, so a redelivered source event keeps it. */
  id: string;
  type: WebhookEventType | PlatformEventType;
  /** The company, or PLATFORM_TENANT for a platform event. */
  companyId: string;
  /** `transfer:<id>`, `deposit:<id>`, `collect_key:<id>`: deliveries to one endpoint are ordered per resource. */
  resourceKey: string;
  resourceId: string;
  createdAt: Date;
  data: Record<string, unknown>;
  /**
   * The source event's stream and sequence number there: a resource's deliveries go out in this order, each once
   * every earlier event of its stream is recorded (the consumer's ack floor has passed it, docs/webhooks.md "Order").
   * Null for a source event not read from a stream (none in production).
   */
  stream: string | null;
  streamSeq: number | null;
}

export function webhookEventId(sourceEventId: string, type: string): string {
  return `evt_${createHash('sha256').update(`${sourceEventId}\u0000${type}`).digest('hex').slice(0, 32)}`;
}

/** The JSON body of a delivery; built once per event and sent byte for byte on every attempt. */
export function eventBody(e: { id: string; type: string; createdAt: Date; data: Record<string, unknown> }): string {
  return JSON.stringify({ id: e.id, type: e.type, createdAt: formatInstant(e.createdAt), data: e.data });
}

const iso = (d: Date | undefined | null) => (d ? formatInstant(d) : null);
const num = (v: bigint) => Number(v);
const strip = (s: string, prefix: string) => (s.startsWith(prefix) ? s.slice(prefix.length) : s);

/**
 * A transfer as the API shows it (§2.5: the send response, amounts as JSON numbers in centavos, as
 * the gateway's transfer presenter) plus what the event knows about its outcome.
 */
export function transferData(t: transferEventsV1.TransferEvent): Record<string, unknown> {
  return {
    id: t.transferId,
    status: strip(String(t.status), 'MOVEMENT_STATUS_'),
    amount: num(t.amount),
    totalFee: num(t.totalFee),
    ivaAmount: num(t.ivaAmount),
    netAmount: num(t.netAmount),
    currency: 'COP',
    rail: strip(String(t.rail), 'RAIL_'),
    targetName: t.targetName,
    targetDocument: t.targetDocument,
    reference: t.reference ?? null,
    description: t.description ?? null,
    bankName: t.bankName ?? null,
    bankAccountType: t.bankAccountType ?? null,
    bankAccountNumberMasked: t.bankAccountNumberMasked ?? null,
    brebKey: t.brebKeyType && t.brebKeyValue ? { type: t.brebKeyType, value: t.brebKeyValue } : null,
    providerTransferId: t.providerTransferId ?? null,
    errorMessage: t.errorMessage ?? null,
    createdAt: iso(t.createdAt),
    completedAt: iso(t.completedAt),
    ...(t.batchId ? { batchId: t.batchId } : {}),
    policyDecision: policyDecisionView(t.policyDecision),
    ...approvalData(t),
  };
}

/** Multi-signature sends: the approval as the §2.5 pending body names it (read loosely: the fields are new in TransferEvent). */
function approvalData(t: transferEventsV1.TransferEvent): Record<string, unknown> {
  const a = t as unknown as { approvalId?: string; approvalThreshold?: number; approvalExpiresAt?: Date; approvedBy?: string[]; rejectedBy?: string };
  if (!a.approvalId) return {};
  return {
    approvalId: a.approvalId,
    threshold: a.approvalThreshold ?? null,
    approvalRoles: t.approvalRoles.length > 0 ? t.approvalRoles : ['ADMIN', 'OPERATOR'],
    expiresAt: iso(a.approvalExpiresAt),
    ...(a.approvedBy && a.approvedBy.length > 0 ? { approvedBy: a.approvedBy } : {}),
    ...(a.rejectedBy ? { rejectedBy: a.rejectedBy } : {}),
  };
}

/** A deposit as `GET /deposits` lists it: the API's one builder (`depositView`, @wallet/platform). */
export function depositData(d: depositV1.Deposit): Record<string, unknown> {
  return depositView(d);
}

/** A collect key as the API shows it (§2.8): the API's one builder (`collectKeyView`, @wallet/platform). */
export function collectKeyData(k: collectKeyV1.CollectKey): Record<string, unknown> {
  return collectKeyView(k);
}

/** A reconciliation run as `GET /admin/reconciliations/{id}` shows it: the API's one builder (`reconciliationRunView`, @wallet/platform). */
export function runData(r: reconciliationV1.Run): Record<string, unknown> {
  return reconciliationRunView(r);
}

/** A reconciliation break as `GET /admin/reconciliations/{id}/breaks` shows it (`reconciliationBreakView`, @wallet/platform). */
export function breakData(b: reconciliationV1.Break): Record<string, unknown> {
  return reconciliationBreakView(b);
}

const TRANSFER_TYPES: Record<string, WebhookEventType> = {
  'transfer.created': 'transfer.created',
  'transfer.completed': 'transfer.completed',
  'transfer.failed': 'transfer.failed',
  'transfer.awaiting_approval': 'transfer.awaiting_approval',
  'transfer.approved': 'transfer.approved',
  'transfer.rejected': 'transfer.rejected',
  'transfer.expired': 'transfer.expired',
};
const DEPOSIT_TYPES: Record<string, WebhookEventType> = {
  'deposit.created': 'deposit.created',
  'deposit.paid': 'deposit.paid',
  'deposit.failed': 'deposit.failed',
  'deposit.expired': 'deposit.expired',
  'deposit.reversed': 'deposit.reversed',
  'deposit.unassigned': 'deposit.unassigned',
  'deposit.returned': 'deposit.returned',
  'deposit.return_failed': 'deposit.return_failed',
};
const COLLECT_KEY_TYPES: Record<string, WebhookEventType> = {
  'collectkey.created': 'collect_key.created',
  'collectkey.deleted': 'collect_key.deleted',
  'collectkey.state_changed': 'collect_key.state_changed',
};

const COBRO_TYPES: Record<string, WebhookEventType> = {
  'cobro.created': 'cobro.created',
  'cobro.partially_paid': 'cobro.partially_paid',
  'cobro.paid': 'cobro.paid',
  'cobro.expired': 'cobro.expired',
  'cobro.cancelled': 'cobro.cancelled',
  'cobro.payment_reversed': 'cobro.payment_reversed',
};

const COUNTERPARTY_TYPES: Record<string, WebhookEventType> = {
  'counterparty.verified': 'counterparty.verified',
  'counterparty.verification_failed': 'counterparty.verification_failed',
};

export interface SourceEvent {
  id: string;
  subject: string;
  payload: unknown;
  time?: string | undefined;
  /** Where the consumer read it: the stream and the message's sequence number there (its publication order). */
  stream?: string;
  streamSeq?: number;
}

/**
 * The public events of one internal event (none for internal-only subjects such as
 * `transfer.dispatched` or `collectkey.qr_issued`). A `transfer.rejected` also gives `transfer.failed`
 * (the transfer's final state). A Bre-B payment to a collect key
 * (`deposit.paid` / `deposit.unassigned` with source BREB) also gives `collect_key.payment_received`.
 * Throws on a payload that does not decode (the caller logs and drops it).
 */
export function mapSourceEvent(src: SourceEvent): WebhookEvent[] {
  const make = (
    type: WebhookEventType | PlatformEventType,
    companyId: string,
    resourceKey: string,
    resourceId: string,
    occurredAt: Date | undefined,
    data: Record<string, unknown>,
  ): WebhookEvent => ({
    id: webhookEventId(src.id, type),
    type,
    companyId,
    resourceKey,
    resourceId,
    createdAt: occurredAt ?? (src.time ? new Date(src.time) : new Date()),
    data,
    stream: src.stream ?? null,
    streamSeq: src.streamSeq ?? null,
  });
  const [family] = src.subject.split('.');
  if (src.subject === 'transfer.batch_validated' || src.subject === 'transfer.batch_completed') {
    // Bulk payouts (docs/batches.md): the batch as GET /transfers/batches/{id} shows it.
    const e = transferEventsV1.BatchEvent.fromJSON(src.payload);
    const b = e.batch;
    if (!b?.id || !e.companyId) throw new Error('batch event without its batch or companyId');
    const type = src.subject === 'transfer.batch_validated' ? 'batch.validated' : 'batch.completed';
    return [make(type, e.companyId, `batch:${b.id}`, b.id, e.occurredAt, batchData(b))];
  }
  if (family === 'transfer') {
    const type = TRANSFER_TYPES[src.subject];
    if (!type) return [];
    const t = transferEventsV1.TransferEvent.fromJSON(src.payload);
    if (!t.transferId || !t.companyId) throw new Error('transfer event without transferId or companyId');
    const out = [make(type, t.companyId, `transfer:${t.transferId}`, t.transferId, t.occurredAt, transferData(t))];
    // A transfer rejected in the approval flow ends FAILED: subscribers of transfer.failed hear of it too.
    if (type === 'transfer.rejected') out.push(make('transfer.failed', t.companyId, `transfer:${t.transferId}`, t.transferId, t.occurredAt, transferData(t)));
    return out;
  }
  if (src.subject === 'deposit.returned' || src.subject === 'deposit.return_failed') {
    // A return of a deposit (docs/returns.md): the return as GET /deposits/{id}/returns lists it, ordered with its deposit's events.
    const e = depositEventsV1.DepositReturnEvent.fromJSON(src.payload);
    const r = e.depositReturn;
    if (!r?.id || !r.depositId || !e.companyId) throw new Error('deposit return event without its return or companyId');
    return [make(src.subject, e.companyId, `deposit:${r.depositId}`, r.id, e.occurredAt, depositReturnView(r))];
  }
  if (family === 'deposit') {
    const type = DEPOSIT_TYPES[src.subject];
    if (!type) return [];
    const e = depositEventsV1.DepositEvent.fromJSON(src.payload);
    const d = e.deposit;
    if (!d?.id || !e.companyId) throw new Error('deposit event without deposit id or companyId');
    const data = depositData(d);
    const out = [make(type, e.companyId, `deposit:${d.id}`, d.id, e.occurredAt, data)];
    if ((type === 'deposit.paid' || type === 'deposit.unassigned') && d.source === 'BREB' && d.brebKey) {
      out.push(make('collect_key.payment_received', e.companyId, `deposit:${d.id}`, d.id, e.occurredAt, data));
    }
    return out;
  }
  if (family === 'cobro') {
    // A cobro's life (docs/cobros.md): the cobro as GET /cobros/{id} shows it, ordered per cobro.
    const type = COBRO_TYPES[src.subject];
    if (!type) return [];
    const e = cobroEventsV1.CobroEvent.fromJSON(src.payload);
    const c = e.cobro;
    if (!c?.id || !e.companyId) throw new Error('cobro event without its cobro or companyId');
    return [make(type, e.companyId, `cobro:${c.id}`, c.id, e.occurredAt, { ...cobroView(c), ...(e.depositId ? { depositId: e.depositId } : {}) })];
  }
  if (family === 'counterparty') {
    // A payee's verification decided (docs/counterparties.md): the counterparty as GET /counterparties/{id} shows it, ordered per counterparty.
    const type = COUNTERPARTY_TYPES[src.subject];
    if (!type) return [];
    const e = counterpartyEventsV1.CounterpartyEvent.fromJSON(src.payload);
    const c = e.counterparty;
    if (!c?.id || !e.companyId) throw new Error('counterparty event without its counterparty or companyId');
    return [make(type, e.companyId, `counterparty:${c.id}`, c.id, e.occurredAt, counterpartyView(c))];
  }
  if (src.subject === 'wallet.moved') {
    // The ledger's: money moved between the company's own wallets (docs/wallet-moves.md), the move as GET /wallets/moves/{id} shows it.
    const e = walletEventsV1.WalletMoved.fromJSON(src.payload);
    if (!e.moveId || !e.companyId) throw new Error('wallet.moved without moveId or companyId');
    const occurredAt = (src.payload as { occurredAt?: unknown } | null)?.occurredAt;
    return [make('wallet.moved', e.companyId, `wallet_move:${e.moveId}`, e.moveId, e.occurredAt, walletMoveView(walletMoveOfEvent(e, occurredAt)))];
  }
  if (family === 'schedule') {
    // The gateway's scheduler (docs/schedules.md): a run's outcome, the run as GET /schedules/{id}/runs shows it (the same builder), ordered per run.
    const r = scheduleRunOfEvent(src.subject, src.payload);
    if (!r) return [];
    const type = src.subject as 'schedule.run_started' | 'schedule.run_failed' | 'schedule.run_skipped';
    const at = r.run.finishedAt ? new Date(r.run.finishedAt) : undefined;
    return [make(type, r.companyId, `schedule_run:${r.run.id}`, r.run.id, at, scheduleRunView(r.run))];
  }
  if (src.subject.startsWith('wallet.balance_')) {
    // The ledger's balance alerts (docs/balance-alerts.md): the crossing as GET /wallets/alerts/history lists it,
    // ordered per wallet (a LOW and the RECOVERED that follows it reach an endpoint in that order).
    const type = (Object.values(BALANCE_ALERT_EVENT_TYPES) as string[]).includes(src.subject) ? (src.subject as WebhookEventType) : undefined;
    if (!type) return [];
    const e = walletEventsV1.WalletBalanceAlert.fromJSON(src.payload);
    if (!e.alertId || !e.companyId) throw new Error(`${src.subject} without alertId or companyId`);
    const view = balanceAlertEventView(balanceAlertCrossingOfEvent(e));
    if (view.type !== type) throw new Error(`${src.subject} carries a ${view.kind} crossing`);
    return [make(type, e.companyId, `wallet_balance:${e.companyId}:${view.rail}`, e.alertId, new Date(view.occurredAt), view)];
  }
  if (family === 'reconciliation') {
    // The platform's events: to platform endpoints only (PLATFORM_TENANT), ordered per run / per break.
    if (src.subject === 'reconciliation.completed') {
      const run = reconciliationEventsV1.ReconciliationCompleted.fromJSON(src.payload).run;
      if (!run?.id) throw new Error('reconciliation.completed without its run');
      return [make('reconciliation.completed', PLATFORM_TENANT, `reconciliation_run:${run.id}`, run.id, run.finishedAt, runData(run))];
    }
    if (src.subject === 'reconciliation.break') {
      const b = reconciliationEventsV1.ReconciliationBreak.fromJSON(src.payload).break;
      if (!b?.key) throw new Error('reconciliation.break without its break');
      return [make('reconciliation.break', PLATFORM_TENANT, `reconciliation_break:${b.key}`, b.key, b.openedAt, breakData(b))];
    }
    return [];
  }
  if (src.subject === 'company.security_changed') {
    // The company is told: a change to the company's threshold, users, keys, limits, fees or status (the gateway's event).
    const e = companyEventsV1.CompanySecurityChanged.fromJSON(src.payload);
    if (!e.companyId || !e.change) throw new Error('company.security_changed without companyId or change');
    return [make('company.security_changed', e.companyId, `company:${e.companyId}`, e.companyId, e.occurredAt, securityChangeData(e))];
  }
  if (src.subject === 'company.policy_changed') {
    // The transfer service's: a new version of the approval policy reached its quorum (docs/policies.md), ordered per company.
    const e = policyEventsV1.ApprovalPolicyChanged.fromJSON(src.payload);
    if (!e.companyId || !e.policyId) throw new Error('company.policy_changed without companyId or policyId');
    return [make('company.policy_changed', e.companyId, `company:${e.companyId}`, e.policyId, e.occurredAt, policyChangedData(e))];
  }
  if (family === 'company') return [];
  if (family === 'collectkey') {
    const type = COLLECT_KEY_TYPES[src.subject];
    if (!type) return [];
    const e = collectKeyEventsV1.CollectKeyEvent.fromJSON(src.payload);
    if (!e.key?.id || !e.companyId) throw new Error('collect-key event without key id or companyId');
    return [make(type, e.companyId, `collect_key:${e.key.id}`, e.key.id, e.occurredAt, collectKeyData(e.key))];
  }
  return [];
}

/**
 * A `company.security_changed` as its subscribers read it: what changed (`change`, one of the
 * gateway's SecurityChange values), a sentence in Spanish, who did it, the approval request and when
 * it takes effect when there is one, and the details (ids, values before and after; never a secret).
 */
const parseJson = (json: string): Record<string, unknown> => {
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/**
 * A `company.policy_changed` as its subscribers read it: the version approved, the policy as GET
 * /approval-policy shows it (a JSON object), from when it decides, who proposed and signed it, and
 * the version it replaces (0: none, the multi-signature threshold decided until then).
 */
export function policyChangedData(e: policyEventsV1.ApprovalPolicyChanged): Record<string, unknown> {
  return {
    companyId: e.companyId,
    policyId: e.policyId,
    version: e.version,
    policy: parseJson(e.documentJson),
    effectiveAt: iso(e.effectiveAt),
    signedBy: e.signedBy,
    previousVersion: e.previousVersion,
    occurredAt: iso(e.occurredAt),
  };
}

export function securityChangeData(e: companyEventsV1.CompanySecurityChanged): Record<string, unknown> {
  return {
    companyId: e.companyId,
    change: e.change,
    summary: e.summary,
    actor: { kind: e.actorKind, id: e.actorId ?? null },
    approvalRequestId: e.approvalRequestId ?? null,
    effectiveAt: iso(e.effectiveAt),
    details: parseJson(e.detailsJson),
    occurredAt: iso(e.occurredAt),
  };
}

/**
 * A bulk payout as the API shows it: the data is built by the very builder of GET
 * /transfers/batches/{id}'s answer (`batchToApi`, @wallet/platform), approval fields included.
 */
export function batchData(b: transferV1.Batch): Record<string, unknown> {
  return batchToApi(b);
}
