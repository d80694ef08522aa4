import { depositEventsV1 } from '@wallet/proto';
import type { DepositRecord } from '../domain/deposit.js';
import type { DepositDeps } from './deps.js';
import type { OutboxEvent } from './ports.js';
import { depositToProto } from './proto-views.js';

export type DepositEventKind = 'created' | 'paid' | 'failed' | 'expired' | 'reversed';

/** `deposit.<kind>` on stream DEPOSITS: a DepositEvent (proto3 JSON) carrying the deposit as it is now. */
export function depositEvent(deps: DepositDeps, kind: DepositEventKind, d: DepositRecord): OutboxEvent {
  const id = deps.newId();
  const payload = depositEventsV1.DepositEvent.toJSON({ eventId: id, companyId: d.companyId, deposit: depositToProto(d, deps.now()), occurredAt: deps.now() });
  return { id, subject: `deposit.${kind}`, payload };
}
