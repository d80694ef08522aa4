import type { SqlTx } from '@wallet/platform';
import type { WebhookEvent } from '../domain/event-types.js';

/**
 * What the webhook's use cases, dispatcher and delivery worker need, in their words: storage
 * (implemented by persistence/webhook.store.ts), the SSRF guard (adapters/target.ts) and the HTTP
 * sender (adapters/http-sender.ts).
 */

export interface EndpointRow {
  id: string;
  companyId: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

export interface DeliveryRow {
  id: string;
  seq: string;
  companyId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  resourceKey: string | null;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  giveUpAt: Date;
  lastAttemptAt: Date | null;
  lastResponseStatus: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  replayOf: string | null;
  createdAt: Date;
}

/** A delivery claimed by the worker, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  companyId: string;
  endpointId: string;
  eventId: string;
  attempts: number;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  body: string;
}

export interface NewEndpoint {
  id: string;
  companyId: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  secretSealed: string;
}

/** The fields an update changes (absent: unchanged; `description: null` clears it). */
export interface EndpointPatch {
  url?: string;
  events?: string[];
  enabled?: boolean;
  description?: string | null;
}

/** A page of a company's delivery log, newest first: `beforeSeq` is the cursor. */
export interface DeliveryFilter {
  endpointId?: string;
  status?: string;
  beforeSeq?: string;
  limit: number;
}

/** Endpoints and the delivery log (the use cases); every read and write is scoped by company. */
export interface EndpointStore {
  /** Inserts it unless the tenant already has `limit` live endpoints (then undefined), decided under a lock per tenant. */
  insertEndpoint(e: NewEndpoint, limit: number): Promise<EndpointRow | undefined>;
  listEndpoints(companyId: string): Promise<EndpointRow[]>;
  getEndpoint(companyId: string, id: string): Promise<EndpointRow | undefined>;
  updateEndpoint(companyId: string, id: string, p: EndpointPatch): Promise<EndpointRow | undefined>;
  /** Soft delete; its pending deliveries end FAILED. False when there was no such live endpoint. */
  deleteEndpoint(companyId: string, id: string): Promise<boolean>;
  /** The new secret signs from now on; the current one keeps signing for `overlapSeconds` (0: not at all). */
  rotateSecret(companyId: string, id: string, newSealed: string, overlapSeconds: number): Promise<EndpointRow | undefined>;
  /** A `webhook.ping` event (its body built from its id and time) and its one delivery (no resource: not ordered). */
  createPing(companyId: string, endpointId: string, body: (eventId: string, createdAt: Date) => string): Promise<DeliveryRow>;
  /** A new delivery of the same event (same event id) to the same endpoint. */
  replay(companyId: string, original: DeliveryRow): Promise<DeliveryRow>;
  getDelivery(companyId: string, id: string): Promise<DeliveryRow | undefined>;
  listDeliveries(companyId: string, f: DeliveryFilter): Promise<DeliveryRow[]>;
}

/** The dispatcher's write: public events and their deliveries, in the inbox consumer's open transaction. */
export interface EventRecorder {
  /** Returns how many deliveries were created (one per enabled endpoint of the company subscribed to the type). */
  recordEvents(tx: SqlTx, events: readonly WebhookEvent[]): Promise<number>;
}

/** A failed attempt to record: retried after `retryInSeconds` (never past the delivery's horizon), or FAILED once past it. */
export interface AttemptFailure {
  responseStatus: number | null;
  latencyMs: number | null;
  error: string;
  retryInSeconds: number;
}

/** A stream's consumer ack floor: every message of the stream up to `seq` is recorded (and acknowledged). */
export interface StreamFloor {
  stream: string;
  seq: number;
}

/** The ack floors of the webhook service's consumers, as recent as the bus can tell (a floor only rises). */
export interface AckFloorSource {
  current(): Promise<StreamFloor[]>;
}

/** The queue of due deliveries (the worker): claimed under a lease, so replicas share it and a crash loses none. */
export interface DeliveryQueue {
  /** Pending deliveries of a disabled endpoint past their horizon end FAILED; how many. */
  expireOverdue(): Promise<number>;
  /** Due deliveries, each after the earlier ones of its resource, and once `floors` has passed its source event. */
  claimDue(batch: number, leaseSeconds: number, floors: readonly StreamFloor[]): Promise<ClaimedDelivery[]>;
  markSucceeded(id: string, responseStatus: number, latencyMs: number): Promise<void>;
  /** The delivery's status after the attempt (null: it was no longer pending). */
  markAttemptFailed(id: string, r: AttemptFailure): Promise<DeliveryStatus | null>;
}

/** The delivery worker, woken once new deliveries are committed (otherwise it polls). */
export interface DeliveryWaker {
  nudge(): void;
}

/** An address a URL's host resolved to: the one a delivery connects to (pinned, no second DNS answer). */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** An endpoint URL the target rules refuse; `reason` is the message the caller sees. */
export class TargetRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TargetRefused';
  }
}

/**
 * The SSRF guard for endpoint URLs (docs/webhooks.md): checked when an endpoint is created or
 * changed and again before each delivery. Both methods throw `TargetRefused` for a refused URL.
 */
export interface TargetGuard {
  /** Production rules: https only, public addresses only. */
  readonly strict: boolean;
  /** The URL's shape, without DNS; returns the parsed URL. */
  checkShape(raw: string): URL;
  /** Resolves the URL's host (refusing non-public addresses when strict); returns the address to connect to. */
  resolve(url: URL): Promise<ResolvedAddress>;
}

export interface SendResult {
  status: number;
}

/**
 * One HTTP POST of a delivery to `url`, connecting to `pinned`, aborted after `timeoutMs`; resolves
 * with the response status, rejects on a network error or time-out; never follows redirects.
 */
export interface WebhookSender {
  post(url: URL, pinned: ResolvedAddress, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult>;
}
