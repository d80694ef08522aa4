import { createHash } from 'node:crypto';

/**
 * ACH prenotes (docs/sandbox.md "ACH prenotes"): a zero-value test entry the ACH rail accepts, or
 * rejects with an ACH return code, as ACH Colombia's prenotification does. No money moves. The
 * outcome and its delay are decided when the prenote is submitted (the account's behaviour in force
 * then, else the default rules) and kept with it, so a restart or a later behaviour change does not
 * change it.
 */

export type PrenoteStatus = 'PENDING' | 'ACCEPTED' | 'REJECTED';
export type PrenoteFinalStatus = Exclude<PrenoteStatus, 'PENDING'>;

/** The ACH return codes the sandbox answers, with the receiving bank's reason (Spanish, as the rail reports it). */
export const PRENOTE_REASONS = {
  R02: 'Cuenta cerrada',
  R03: 'Cuenta inexistente o no se pudo ubicar',
  R04: 'Número de cuenta inválido',
  R16: 'Cuenta bloqueada',
  R17: 'La identificación del titular no corresponde a la cuenta',
} as const satisfies Record<string, string>;
export type PrenoteReasonCode = keyof typeof PRENOTE_REASONS;
export const PRENOTE_REASON_CODES = Object.keys(PRENOTE_REASONS) as [PrenoteReasonCode, ...PrenoteReasonCode[]];

/** The code of a rejection nobody named (a behaviour without `reasonCode`, a forced `/reject` without a body). */
export const DEFAULT_PRENOTE_REASON: PrenoteReasonCode = 'R03';

/** The account every prenote finds missing (R03), as every ACH validation and transfer refuses it. */
export const MISSING_ACCOUNT = '0000000000';
/** Accounts ending in these digits answer R17: the holder's document does not match the account. */
export const DOCUMENT_MISMATCH_SUFFIX = '17';

export interface PrenoteOutcome {
  status: PrenoteFinalStatus;
  reasonCode: PrenoteReasonCode | null;
}

/** A test or demo switch for one account number: its prenotes' delay and how often they are rejected. */
export interface PrenoteBehaviour {
  /** 0 … 600,000 ms. */
  delayMs: number;
  /** 0 … 1: the share of prenotes rejected (by a deterministic draw from the prenote id). */
  rejectionRate: number;
  reasonCode: PrenoteReasonCode;
}

export const MAX_PRENOTE_DELAY_MS = 600_000;

/** A number in [0, 1) drawn from the prenote id: the first 4 bytes of sha256(prenoteId) / 2^32. The same id always draws the same. */
export function prenoteDraw(prenoteId: string): number {
  return createHash('sha256').update(prenoteId, 'utf8').digest().readUInt32BE(0) / 2 ** 32;
}

/** The default rules: `0000000000` → R03, an account ending in `17` → R17, else accepted. */
export function defaultPrenoteOutcome(accountNumber: string): PrenoteOutcome {
  if (accountNumber === MISSING_ACCOUNT) return { status: 'REJECTED', reasonCode: 'R03' };
  if (accountNumber.endsWith(DOCUMENT_MISMATCH_SUFFIX)) return { status: 'REJECTED', reasonCode: 'R17' };
  return { status: 'ACCEPTED', reasonCode: null };
}

/**
 * A prenote's delay and outcome, decided at submission. With a behaviour for the account, it alone
 * decides (the default rules do not apply): rejected with its code when the draw is below its rate
 * (so rate 0 never rejects and rate 1 always does), after its delay. Without one, the default rules
 * after `defaultDelayMs`.
 */
export function decidePrenote(
  p: { prenoteId: string; accountNumber: string },
  behaviour: PrenoteBehaviour | undefined,
  defaultDelayMs: number,
): { delayMs: number; outcome: PrenoteOutcome } {
  if (!behaviour) return { delayMs: defaultDelayMs, outcome: defaultPrenoteOutcome(p.accountNumber) };
  const rejected = prenoteDraw(p.prenoteId) < behaviour.rejectionRate;
  return {
    delayMs: behaviour.delayMs,
    outcome: rejected ? { status: 'REJECTED', reasonCode: behaviour.reasonCode } : { status: 'ACCEPTED', reasonCode: null },
  };
}

/**
 * The key of a prenote's callback in the callbacks table (whose `transaction_id` the rails, PSE and
 * inbound payments share). A `/` is in no transactionId (`A-Z a-z 0-9 . _ : -`), so a prenote that
 * reuses a transfer's id never takes that transfer's callback slot.
 */
export function prenoteCallbackKey(prenoteId: string): string {
  return `ach-prenote/${prenoteId}`;
}
