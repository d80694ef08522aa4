import type { Database, Logger } from '@wallet/platform';
import { DELIVERY_WINDOW_MS, type PrenoteCallbackBody } from '../domain/callbacks.js';
import {
  DEFAULT_PRENOTE_REASON,
  PRENOTE_REASONS,
  decidePrenote,
  type PrenoteBehaviour,
  type PrenoteFinalStatus,
  type PrenoteReasonCode,
  type PrenoteStatus,
} from '../domain/prenotes.js';
import { ProviderError, railDown } from './errors.js';
import type { FaultSwitches, PrenoteAccount, PrenoteBehaviourRow, PrenoteBook, PrenoteRow } from './ports.js';

export interface PrenoteSettings {
  /** Delay of a prenote's outcome under the default rules (SANDBOX_ACH_PRENOTE_MS). */
  prenoteMs: number;
}

export interface PrenoteSubmission extends PrenoteAccount {
  prenoteId: string;
  callbackUrl: string;
}

export interface PrenoteView {
  prenoteId: string;
  status: PrenoteStatus;
  reasonCode?: PrenoteReasonCode;
  reason?: string;
  submittedAt: string;
  settledAt?: string;
}

export function prenoteView(p: PrenoteRow): PrenoteView {
  return {
    prenoteId: p.prenoteId,
    status: p.status,
    ...(p.reasonCode ? { reasonCode: p.reasonCode, reason: PRENOTE_REASONS[p.reasonCode] } : {}),
    submittedAt: p.submittedAt,
    ...(p.settledAt ? { settledAt: p.settledAt } : {}),
  };
}

/** The callback body of a settled prenote, serialized once so every delivery sends the same bytes. */
export function prenoteCallbackBody(p: PrenoteRow, eventId: string): string {
  const body: PrenoteCallbackBody = {
    eventId,
    type: 'ach.prenote',
    prenoteId: p.prenoteId,
    status: p.status as PrenoteFinalStatus,
    ...(p.reasonCode ? { reasonCode: p.reasonCode, reason: PRENOTE_REASONS[p.reasonCode] } : {}),
    settledAt: p.settledAt ?? new Date().toISOString(),
  };
  return JSON.stringify(body);
}

/** The transfers' unknown-id answer (same code), about a prenote. */
export const prenoteNotFound = () => new ProviderError(404, 'TRANSFER_NOT_FOUND', 'No existe una prenotificación con ese prenoteId.');
export const behaviourNotFound = () =>
  new ProviderError(404, 'BEHAVIOUR_NOT_FOUND', 'La cuenta no tiene un comportamiento de prenotificación: aplican las reglas por defecto.');

const ACCOUNT_FIELDS = ['bankCode', 'accountTypeId', 'accountNumber', 'documentTypeId', 'documentNumber', 'holderName'] as const;
const sameAccount = (a: PrenoteAccount, b: PrenoteAccount) => ACCOUNT_FIELDS.every((f) => a[f] === b[f]);

/**
 * The ACH rail's prenotes (docs/sandbox.md "ACH prenotes"): accept (idempotent on prenoteId; the
 * same id with another account is a conflict), report status, settle due outcomes (the scheduler)
 * and force outcomes (test switches), plus the per-account behaviour switch. The delay and outcome
 * are decided at submission and stored with the prenote; settling writes the outcome and its
 * callback in one transaction under the row's lock, so a forced outcome racing the scheduler has
 * exactly one winner. No money moves and nothing is reported for settlement.
 */
export class AchPrenotes {
  constructor(
    private readonly db: Database,
    private readonly store: FaultSwitches,
    private readonly book: PrenoteBook,
    private readonly settings: PrenoteSettings,
    private readonly wake: () => void,
    private readonly log: Logger,
  ) {}

  async submit(s: PrenoteSubmission): Promise<{ prenote: PrenoteRow; created: boolean }> {
    if ((await this.store.fault('achRail')) === 'down') throw railDown('ACH');
    const behaviour = await this.book.behaviour(s.accountNumber);
    const { delayMs, outcome } = decidePrenote(s, behaviour, this.settings.prenoteMs);
    const r = await this.book.insertPrenote({ ...s, decided: outcome, delayMs });
    if (!r.created && !sameAccount(r.prenote, s)) {
      throw new ProviderError(409, 'PRENOTE_ID_CONFLICT', 'Ya existe una prenotificación con ese prenoteId para otra cuenta.', { status: r.prenote.status });
    }
    if (r.created) {
      this.log.info({ prenoteId: s.prenoteId, delayMs, behaviour: behaviour !== undefined }, 'ACH prenote accepted');
      // A zero delay is due now: settle it without waiting for the next poll.
      if (delayMs === 0) this.wake();
    }
    return r;
  }

  async get(prenoteId: string): Promise<PrenoteRow> {
    const p = await this.book.findPrenote(prenoteId);
    if (!p) throw prenoteNotFound();
    return p;
  }

  /** Forces the outcome now (404 unknown, 409 already settled); the callback goes out at once. */
  async force(prenoteId: string, status: PrenoteFinalStatus, reasonCode: PrenoteReasonCode = DEFAULT_PRENOTE_REASON): Promise<PrenoteRow> {
    const settled = await this.db.tx(async (tx) => {
      const p = await this.book.lockPrenote(tx, prenoteId);
      if (!p) throw prenoteNotFound();
      if (p.status !== 'PENDING') {
        throw new ProviderError(409, 'OUTCOME_ALREADY_SET', `La prenotificación ya terminó como ${p.status}.`, { status: p.status });
      }
      const outcome = { prenoteId, status, reasonCode: status === 'REJECTED' ? reasonCode : null };
      const [done] = await this.book.settlePrenotes(tx, [outcome], true, prenoteCallbackBody, DELIVERY_WINDOW_MS);
      return done!;
    });
    this.log.info({ prenoteId, status }, 'prenote outcome forced');
    this.wake();
    return settled;
  }

  /** Settles the prenotes whose delay has passed with their decided outcome; returns how many were due. */
  async settleDue(limit = 100): Promise<number> {
    return this.db.tx(async (tx) => {
      const due = await this.book.lockDuePrenotes(tx, limit);
      const outcomes = due.map((p) => ({ prenoteId: p.prenoteId, ...p.decided }));
      const settled = await this.book.settlePrenotes(tx, outcomes, false, prenoteCallbackBody, DELIVERY_WINDOW_MS);
      if (this.log.isLevelEnabled('info')) {
        for (const p of settled) this.log.info({ prenoteId: p.prenoteId, status: p.status, reasonCode: p.reasonCode }, 'prenote settled');
      }
      return due.length;
    });
  }

  // ---- The per-account behaviour switch ---------------------------------------------------

  async behaviour(accountNumber: string): Promise<PrenoteBehaviourRow> {
    const b = await this.book.behaviour(accountNumber);
    if (!b) throw behaviourNotFound();
    return b;
  }

  async setBehaviour(accountNumber: string, b: PrenoteBehaviour): Promise<PrenoteBehaviourRow> {
    const stored = await this.book.setBehaviour(accountNumber, b);
    this.log.info({ delayMs: b.delayMs, rejectionRate: b.rejectionRate, reasonCode: b.reasonCode }, 'prenote behaviour set');
    return stored;
  }

  async clearBehaviour(accountNumber: string): Promise<boolean> {
    return this.book.deleteBehaviour(accountNumber);
  }
}
