import { collectKeyEventsV1, depositEventsV1 } from '@wallet/proto';
import type { CollectKeyRecord, QrRecord } from '../domain/collect-key.js';
import type { CollectKeyDeps } from './deps.js';
import type { OutboxEvent, PaymentRecord } from './ports.js';
import { keyToProto, paymentToDeposit, qrToProto } from './proto-views.js';

export type CollectKeyEventKind = 'created' | 'deleted' | 'state_changed' | 'qr_issued';

/** `collectkey.<kind>` on stream COLLECT_KEYS: a CollectKeyEvent (proto3 JSON). */
export function collectKeyEvent(deps: CollectKeyDeps, kind: CollectKeyEventKind, k: CollectKeyRecord, qr?: QrRecord): OutboxEvent {
  const id = deps.newId();
  const payload = collectKeyEventsV1.CollectKeyEvent.toJSON({
    eventId: id,
    companyId: k.companyId,
    key: keyToProto(k),
    ...(qr ? { qr: qrToProto(qr) } : {}),
    occurredAt: deps.now(),
  });
  return { id, subject: `collectkey.${kind}`, payload };
}

/**
 * The key's event, for a customer's key; none for a cobro's key: it is hidden from the customer keys
 * (their listing, and the `collect_key.*` webhooks), and the cobro's own events speak for it.
 */
export const keyEventFor =
  (deps: CollectKeyDeps, kind: Exclude<CollectKeyEventKind, 'qr_issued'>) =>
  (k: CollectKeyRecord): OutboxEvent | null =>
    k.cobro ? null : collectKeyEvent(deps, kind, k);

/**
 * `deposit.paid` (ASSIGNED) / `deposit.unassigned` / `deposit.reversed` (RETURNED: returned to the
 * payer; the deposit shows REVERSED) on stream DEPOSITS: a DepositEvent the deposit listing consumes.
 */
export function depositEvent(deps: CollectKeyDeps, p: PaymentRecord): OutboxEvent {
  const id = deps.newId();
  const payload = depositEventsV1.DepositEvent.toJSON({ eventId: id, companyId: p.companyId, deposit: paymentToDeposit(p), occurredAt: deps.now() });
  const subject = p.status === 'ASSIGNED' ? 'deposit.paid' : p.status === 'RETURNED' ? 'deposit.reversed' : 'deposit.unassigned';
  return { id, subject, payload };
}
