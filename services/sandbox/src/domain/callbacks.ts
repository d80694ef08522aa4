import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PrenoteFinalStatus, PrenoteReasonCode } from './prenotes.js';
import type { FinalStatus, Rail } from './rails.js';

/** Outcome callbacks (provider → product): the body, its signature and the retry schedule. */

/** A rail transfer's outcome. */
export interface CallbackBody {
  eventId: string;
  transactionId: string;
  providerTransferId: string;
  rail: Rail;
  status: FinalStatus;
  errorMessage?: string;
  occurredAt: string;
}

/**
 * An ACH prenote's outcome (domain/prenotes.ts). Unlike a transfer's, it names its kind (`type`):
 * the product may receive both at one URL. `reasonCode` and `reason` only when REJECTED.
 */
export interface PrenoteCallbackBody {
  eventId: string;
  type: 'ach.prenote';
  prenoteId: string;
  status: PrenoteFinalStatus;
  reasonCode?: PrenoteReasonCode;
  reason?: string;
  settledAt: string;
}

export const SIGNATURE_HEADER = 'X-Provider-Signature';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; `t` is the time of this attempt. */
export function signCallback(secret: string, rawBody: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** The receiver's side (used by tests and documented for the product): signature and clock tolerance. */
export function verifyCallbackSignature(secret: string, rawBody: string, header: string | undefined, nowSeconds: number, toleranceSeconds = 300): boolean {
  if (!header) return false;
  const parts = new Map(
    header.split(',').map((p) => {
      const i = p.indexOf('=');
      return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !/^[0-9a-f]{64}$/.test(v1)) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}

/**
 * Several rail transfer outcomes in one request (`SANDBOX_BULK_CALLBACKS`): each outcome is the
 * single callback's body as stored, with its own `eventId`. Signed like a single callback.
 */
export interface BulkOutcomesBody {
  type: 'rail.outcomes';
  outcomes: CallbackBody[];
}

/** The most outcomes one bulk request carries (as a bulk submission takes at most 200 transfers). */
export const BULK_OUTCOMES_MAX = 200;

/**
 * Answers to a bulk request that mean the receiver does not take the bulk form (it does not know
 * the body, the route, the method, the size or the type): its outcomes go one by one instead.
 */
export const BULK_NOT_ACCEPTED: ReadonlySet<number> = new Set([400, 404, 405, 413, 415]);

/**
 * Whether a stored callback body is a rail transfer's outcome (CallbackBody), the only kind sent in
 * bulk. The callbacks table also holds ACH prenotes' outcomes (they have `type`), PSE links' and
 * inbound Bre-B payments' notifications (no `rail`); those are always sent alone.
 */
export function isTransferOutcomeBody(rawBody: string): boolean {
  let b: unknown;
  try {
    b = JSON.parse(rawBody);
  } catch {
    return false;
  }
  if (typeof b !== 'object' || b === null || Array.isArray(b)) return false;
  const o = b as Record<string, unknown>;
  return (
    !('type' in o) &&
    (o.rail === 'BREB' || o.rail === 'ACH') &&
    (o.status === 'COMPLETED' || o.status === 'FAILED') &&
    typeof o.eventId === 'string' &&
    typeof o.transactionId === 'string' &&
    typeof o.providerTransferId === 'string'
  );
}

/**
 * The bulk body, `{"type":"rail.outcomes","outcomes":[…]}`, built from the stored bodies as they
 * are (byte for byte, in the given order): each outcome reads exactly as its single callback would.
 */
export function bulkOutcomesBody(rawBodies: readonly string[]): string {
  return `{"type":"rail.outcomes","outcomes":[${rawBodies.join(',')}]}`;
}

export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
}

/** Delay after the n-th failed attempt (n ≥ 1): base, 2·base, 4·base … capped at max (1 s … 60 s). */
export function retryDelayMs(failedAttempts: number, p: RetryPolicy): number {
  const exp = Math.min(Math.max(failedAttempts - 1, 0), 30);
  return Math.min(p.baseMs * 2 ** exp, p.maxMs);
}

/** Deliveries are retried for 24 h after the outcome (or after a redelivery request), then abandoned. */
export const DELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;
