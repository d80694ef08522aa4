// What every consumer of the wallet's events needs, independent of NATS: read the CloudEvents
// headers, decode the proto3 JSON body, and do each event's effect once although delivery is at
// least once (de-duplicate on ce-id).

/** The payload of `transfer.*` (wallet.events.v1.TransferEvent, proto3 JSON): the fields used here. */
export interface TransferEvent {
  eventId: string;
  transferId: string;
  companyId: string;
  rail: 'RAIL_BREB' | 'RAIL_ACH' | string;
  status: string;
  /** Centavos, as a string (int64 in proto3 JSON): never parse money into a float. */
  amount: string;
  netAmount: string;
  occurredAt: string;
  [field: string]: unknown;
}

export interface WalletEvent<T = unknown> {
  /** ce-id: the event id, the de-duplication key. */
  id: string;
  /** ce-type: the subject without namespace, e.g. `transfer.completed`. */
  type: string;
  /** ce-source: the publishing service. */
  source: string;
  /** ce-time (RFC 3339). */
  time: string;
  traceparent?: string;
  data: T;
}

/** The part of a NATS message the handler reads (a JetStream JsMsg has it). */
export interface IncomingMessage {
  subject: string;
  headers?: { get(name: string): string };
  data: Uint8Array;
}

/** A message that can never be handled (no ce-id, not JSON): terminate it instead of retrying forever. */
export class PoisonMessageError extends Error {}

const decoder = new TextDecoder();

export function decodeEvent<T = unknown>(m: IncomingMessage): WalletEvent<T> {
  const h = m.headers;
  const id = h?.get('ce-id') || h?.get('Nats-Msg-Id');
  if (!id) throw new PoisonMessageError(`${m.subject}: no ce-id header`);
  const contentType = h?.get('content-type');
  if (contentType && !contentType.startsWith('application/json')) throw new PoisonMessageError(`${m.subject}: content-type ${contentType}`);
  let data: T;
  try {
    data = JSON.parse(decoder.decode(m.data)) as T;
  } catch {
    throw new PoisonMessageError(`${m.subject}: body is not JSON`);
  }
  const traceparent = h?.get('traceparent');
  return {
    id,
    type: h?.get('ce-type') || m.subject,
    source: h?.get('ce-source') ?? '',
    time: h?.get('ce-time') ?? '',
    ...(traceparent ? { traceparent } : {}),
    data,
  };
}

/**
 * Ids of the events already handled. In production keep them where the effect is written, in the
 * same transaction (e.g. a `handled_events(event_id primary key)` table), so "done" and "recorded
 * as done" cannot disagree after a crash. This in-memory one is bounded and forgets across restarts.
 */
export interface SeenIds {
  has(id: string): boolean | Promise<boolean>;
  add(id: string): void | Promise<void>;
}

export class MemorySeenIds implements SeenIds {
  private readonly ids = new Set<string>();
  constructor(private readonly max = 100_000) {}
  has(id: string): boolean {
    return this.ids.has(id);
  }
  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value as string); // oldest first
  }
}

export type Outcome = 'handled' | 'duplicate' | 'poison';

/**
 * Handles one message: decode, skip if already handled, run the effect, remember the id.
 * An exception from `onEvent` propagates: the caller leaves the message unacknowledged (nak), and
 * JetStream redelivers it.
 */
export async function handleMessage<T>(m: IncomingMessage, seen: SeenIds, onEvent: (e: WalletEvent<T>) => Promise<void>): Promise<Outcome> {
  let event: WalletEvent<T>;
  try {
    event = decodeEvent<T>(m);
  } catch (err) {
    if (err instanceof PoisonMessageError) return 'poison';
    throw err;
  }
  if (await seen.has(event.id)) return 'duplicate';
  await onEvent(event);
  await seen.add(event.id);
  return 'handled';
}
