import { randomBytes } from 'node:crypto';
import type { Database, Logger } from '@wallet/platform';
import type { CallbackBody } from '../domain/callbacks.js';
import { DELIVERY_WINDOW_MS } from '../domain/callbacks.js';
import { normalizeKeyValue } from '../domain/keys.js';
import {
  INVALID_ACH_ACCOUNT,
  REJECTED_BY_RECEIVER,
  achOutcome,
  brebOutcome,
  railPrefix,
  type FinalStatus,
  type Outcome,
  type Rail,
  type TransferStatus,
} from '../domain/rails.js';
import type { FaultSwitches, KeyRegistry, TransferBook, TransferRow } from './ports.js';
import { ProviderError, railDown, transferNotFound } from './errors.js';

export interface RailSettings {
  brebConfirmMs: number;
  achConfirmMs: number;
}

export interface TransferSubmission {
  transactionId: string;
  amountCents: bigint;
  callbackUrl: string;
  /** The whole request as received, kept for inspection (and for the Bre-B settlement checks). */
  request: Record<string, unknown>;
}

export interface TransferView {
  transactionId: string;
  providerTransferId: string;
  status: TransferStatus;
  errorMessage?: string;
}

export function transferView(t: TransferRow): TransferView {
  return {
    transactionId: t.transactionId,
    providerTransferId: t.providerTransferId,
    status: t.status,
    ...(t.errorMessage ? { errorMessage: t.errorMessage } : {}),
  };
}

/** The callback body of a settled transfer, serialized once so every delivery sends the same bytes. */
export function callbackBody(t: TransferRow, eventId: string): string {
  const body: CallbackBody = {
    eventId,
    transactionId: t.transactionId,
    providerTransferId: t.providerTransferId,
    rail: t.rail,
    status: t.status as FinalStatus,
    ...(t.errorMessage ? { errorMessage: t.errorMessage } : {}),
    occurredAt: t.outcomeAt ?? new Date().toISOString(),
  };
  return JSON.stringify(body);
}

const railName = (rail: Rail) => (rail === 'BREB' ? 'Bre-B' : 'ACH');
const railFault = (rail: Rail): 'brebRail' | 'achRail' => (rail === 'BREB' ? 'brebRail' : 'achRail');

/**
 * The simulated rails' transfer book: accept (idempotent on transactionId), report status,
 * settle due outcomes (the scheduler) and force outcomes (test switches). Settling writes the
 * outcome and its callback in one transaction; `wake` tells the dispatcher there is work.
 */
export class RailTransfers {
  constructor(
    private readonly db: Database,
    private readonly store: TransferBook & FaultSwitches,
    private readonly settings: RailSettings,
    private readonly wake: () => void,
    private readonly log: Logger,
    /** Participants' registrations: a Bre-B transfer to a registered key settles against its anchor handle. */
    private readonly registrations?: Pick<KeyRegistry, 'liveAnchors'>,
  ) {}

  async submit(rail: Rail, s: TransferSubmission): Promise<{ transfer: TransferRow; created: boolean }> {
    if ((await this.store.fault(railFault(rail))) === 'down') throw railDown(railName(rail));
    if (rail === 'ACH' && s.request.accountNumber === INVALID_ACH_ACCOUNT) throw invalidAchAccount();
    const r = await this.store.insertTransfer(this.newTransfer(rail, s));
    const conflict = this.conflict(rail, s, r);
    if (conflict) throw conflict;
    return r;
  }

  /**
   * A bulk submission (docs/sandbox.md "Bulk submission"): every transfer as `submit` would take it,
   * in one insert. The rail's switch is read once (down: nothing is taken); each transfer's answer
   * is its own (taken, taken before, or refused), in the given order.
   */
  async submitMany(rail: Rail, subs: TransferSubmission[]): Promise<Array<{ transfer: TransferRow; created: boolean } | ProviderError>> {
    if ((await this.store.fault(railFault(rail))) === 'down') throw railDown(railName(rail));
    const answers: Array<{ transfer: TransferRow; created: boolean } | ProviderError | undefined> = subs.map((s) =>
      rail === 'ACH' && s.request.accountNumber === INVALID_ACH_ACCOUNT ? invalidAchAccount() : undefined,
    );
    const taken = subs.filter((_, i) => answers[i] === undefined);
    const stored = await this.store.insertTransfers(taken.map((s) => this.newTransfer(rail, s)));
    let k = 0;
    return answers.map((a, i) => {
      if (a) return a;
      const r = stored[k++]!;
      return this.conflict(rail, subs[i]!, r) ?? r;
    });
  }

  private newTransfer(rail: Rail, s: TransferSubmission) {
    return {
      providerTransferId: `${railPrefix(rail)}_${randomBytes(12).toString('hex')}`,
      transactionId: s.transactionId,
      rail,
      amountCents: s.amountCents,
      callbackUrl: s.callbackUrl,
      request: s.request,
      confirmMs: rail === 'BREB' ? this.settings.brebConfirmMs : this.settings.achConfirmMs,
    };
  }

  /** A repeat of a transactionId with another amount or rail is refused; a new one is logged. */
  private conflict(rail: Rail, s: TransferSubmission, r: { transfer: TransferRow; created: boolean }): ProviderError | undefined {
    if (!r.created && (r.transfer.rail !== rail || r.transfer.amountCents !== s.amountCents)) {
      return new ProviderError(409, 'TRANSACTION_ID_CONFLICT', 'Ya existe una transferencia con ese transactionId y otro monto o red.', {
        providerTransferId: r.transfer.providerTransferId,
      });
    }
    if (r.created) this.log.info({ rail, transactionId: s.transactionId, providerTransferId: r.transfer.providerTransferId }, 'transfer accepted');
    return undefined;
  }

  async get(rail: Rail, transactionId: string): Promise<TransferRow> {
    const t = await this.store.findTransfer(transactionId);
    if (!t || t.rail !== rail) throw transferNotFound();
    return t;
  }

  /** Forces the outcome now (404 unknown, 409 already settled); the callback goes out at once. */
  async force(rail: Rail, transactionId: string, status: FinalStatus, errorMessage?: string): Promise<TransferRow> {
    const settled = await this.db.tx(async (tx) => {
      const t = await this.store.lockTransfer(tx, transactionId);
      if (!t || t.rail !== rail) throw transferNotFound();
      if (t.status !== 'PENDING') {
        throw new ProviderError(409, 'OUTCOME_ALREADY_SET', `La transferencia ya terminó como ${t.status}.`, { status: t.status });
      }
      const outcome: Outcome = status === 'FAILED' ? { status, errorMessage: errorMessage ?? REJECTED_BY_RECEIVER } : { status, errorMessage: null };
      return this.store.settle(tx, transactionId, { ...outcome, forced: true }, callbackBody, DELIVERY_WINDOW_MS);
    });
    this.log.info({ rail, transactionId, status }, 'outcome forced');
    this.wake();
    return settled;
  }

  /** Settles the transfers whose confirm delay has passed; returns how many. */
  async settleDue(limit = 100): Promise<number> {
    const n = await this.db.tx(async (tx) => {
      const due = await this.store.lockDueTransfers(tx, limit);
      const brebKeys = [...new Set(due.filter((t) => t.rail === 'BREB').map((t) => normalizeKeyValue(String(t.request.keyValue ?? ''))))];
      const anchors = this.registrations ? await this.registrations.liveAnchors(tx, brebKeys) : new Map<string, string>();
      const outcomes = due.map((t) => ({
        transactionId: t.transactionId,
        ...(t.rail === 'BREB'
          ? brebOutcome(
              { amountCents: t.amountCents, keyValue: String(t.request.keyValue ?? ''), anchorHandle: String(t.request.anchorHandle ?? '') },
              anchors.get(normalizeKeyValue(String(t.request.keyValue ?? ''))),
            )
          : achOutcome({ amountCents: t.amountCents })),
      }));
      const settled = await this.store.settleMany(tx, outcomes, callbackBody, DELIVERY_WINDOW_MS);
      if (this.log.isLevelEnabled('info')) {
        for (const t of settled) this.log.info({ rail: t.rail, transactionId: t.transactionId, status: t.status }, 'transfer settled');
      }
      return due.length;
    });
    return n;
  }
}

export const invalidAchAccount = () => new ProviderError(422, 'INVALID_BANK_ACCOUNT', 'La cuenta destino no existe o no puede recibir abonos.');
