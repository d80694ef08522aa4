import { randomBytes } from 'node:crypto';
import { counterpartyEventsV1 } from '@wallet/proto';
import { COUNTERPARTY_MACHINE, type CounterpartyActor, type CounterpartyEvent } from '../domain/counterparty-machine.js';
import { VERIFICATION_REASONS, directoryVerdict, type CounterpartyRecord } from '../domain/counterparty.js';
import { counterpartyToProto } from './counterparty-view.js';
import type { TransferDeps } from './deps.js';
import type { AchPrenotePort, CounterpartyDecision, CounterpartyMove, CounterpartyStore, OutboxEvent, VerificationAttempt } from './ports.js';

/** Subjects of the counterparties' events (stream COUNTERPARTIES; docs/events.md). */
export const COUNTERPARTY_SUBJECTS = {
  verified: 'counterparty.verified',
  verification_failed: 'counterparty.verification_failed',
} as const;

export interface CounterpartyDeps extends TransferDeps {
  counterparties: CounterpartyStore;
  prenotes: AchPrenotePort;
  counterpartySettings: {
    /** A submitted prenote without a callback for this long is asked about at the rail. */
    prenoteCheckMs: number;
    /** How long a step may be in flight in its request before the sweeper takes it over (and its retry delay). */
    retryMs: number;
  };
}

/** `cpty_` + 24 of [a-z0-9]. */
export function newCounterpartyId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `cpty_${[...randomBytes(24)].map((b) => alphabet[b % 36]).join('')}`;
}

/**
 * The ONE writer of a counterparty's verification (counterparty-machine.ts) and its steps: a
 * directory lookup (Bre-B) or a prenote (ACH). A new attempt is committed first, with its
 * verification id (and prenote id): the row is the intent, so whatever happens after (the rail down,
 * this process gone) the counterparty sweeper finds the PENDING attempt and finishes it. Every
 * decision is a compare-and-set on the status and the attempt's id, with its event in the same
 * statement; an answer for a replaced attempt changes nothing.
 */
export class CounterpartyVerifier {
  constructor(private readonly deps: CounterpartyDeps) {}

  /** A fresh attempt for the counterparty's rail. */
  newAttempt(rail: 'BREB' | 'ACH'): VerificationAttempt {
    const verificationId = `pn_${randomBytes(12).toString('hex')}`;
    return { verificationId, prenoteId: rail === 'ACH' ? verificationId : null, checkInMs: this.deps.counterpartySettings.retryMs };
  }

  move(event: CounterpartyEvent, actor: CounterpartyActor): CounterpartyMove {
    const spec = COUNTERPARTY_MACHINE[event];
    if (!spec.by.includes(actor)) throw new Error(`${actor} may not apply ${event}`);
    return { event, from: spec.from, to: spec.to, actor };
  }

  /** Applies one event of the table; undefined when another writer (or a newer attempt) won. */
  async apply(
    c: CounterpartyRecord,
    event: CounterpartyEvent,
    actor: CounterpartyActor,
    patch: { attempt?: VerificationAttempt; decision?: CounterpartyDecision } = {},
  ): Promise<CounterpartyRecord | undefined> {
    const move = this.move(event, actor);
    const emits = COUNTERPARTY_MACHINE[event].emits;
    const won = await this.deps.counterparties.transition(c, move, patch, emits ? this.event(emits) : null);
    if (won && emits) this.deps.eventsWritten();
    if (won) this.deps.log.info({ counterpartyId: c.id, event, actor, status: won.status, reasonCode: won.reasonCode }, 'counterparty verification moved');
    return won;
  }

  private event(subject: string): (c: CounterpartyRecord) => OutboxEvent {
    const id = this.deps.newId();
    const occurredAt = this.deps.now();
    return (c) => ({
      id,
      subject,
      payload: counterpartyEventsV1.CounterpartyEvent.toJSON({ eventId: id, companyId: c.companyId, counterparty: counterpartyToProto(c), occurredAt }),
    });
  }

  /** Runs the current attempt's step once (the request right after committing it, or the sweeper). Answers the counterparty as it then is. */
  async run(c: CounterpartyRecord, actor: 'request' | 'sweeper'): Promise<CounterpartyRecord> {
    if (c.status !== 'PENDING') return c;
    if (c.rail === 'BREB') return (await this.lookUp(c, actor === 'request' ? 'directory' : 'sweeper')) ?? c;
    if (!c.prenoteSubmittedAt) return this.submit(c);
    return (await this.poll(c)) ?? c;
  }

  /** Bre-B: the directory names the holder given (the send's rules) or not; down → stays PENDING for the sweeper. */
  private async lookUp(c: CounterpartyRecord, actor: 'directory' | 'sweeper'): Promise<CounterpartyRecord | undefined> {
    const { deps } = this;
    if (c.destination.kind !== 'BREB') return undefined;
    let answer;
    try {
      answer = await deps.directory.lookup(c.destination.keyValue, c.destination.keyType);
    } catch (err) {
      deps.log.warn({ counterpartyId: c.id, err: (err as Error).message }, 'directory unavailable for a counterparty verification; the sweeper retries');
      await deps.counterparties.reschedule(c.id, c.verificationId, deps.counterpartySettings.retryMs);
      return undefined;
    }
    const verdict = directoryVerdict(
      c,
      answer.status === 'active' || answer.status === 'inactive'
        ? { status: answer.status, fullName: answer.recipient.fullName, idValue: answer.recipient.idValue }
        : { status: answer.status },
    );
    if (verdict.verified) return this.apply(c, 'verified', actor);
    return this.apply(c, 'verification_failed', actor, { decision: { reasonCode: verdict.code, reason: VERIFICATION_REASONS[verdict.code] } });
  }

  /** ACH: POST the prenote (idempotent on its id at the rail). Unavailable → the sweeper submits again. */
  private async submit(c: CounterpartyRecord): Promise<CounterpartyRecord> {
    const { deps } = this;
    const d = c.destination;
    if (d.kind !== 'ACH' || !c.prenoteId) return c;
    const callbackUrl = `${deps.settings.callbackBaseUrl.replace(/\/$/, '')}/ach`;
    const r = await deps.prenotes.submitPrenote(
      {
        prenoteId: c.prenoteId,
        bankAchCode: d.bankAchCode,
        accountTypeId: d.accountTypeId,
        accountNumber: d.accountNumber,
        documentTypeId: c.documentTypeId,
        documentNumber: c.documentNumber,
        holderName: c.holderName,
      },
      callbackUrl,
    );
    if (r.outcome === 'accepted') {
      await deps.counterparties.markPrenoteSubmitted(c.id, c.prenoteId, deps.counterpartySettings.prenoteCheckMs);
      return { ...c, prenoteSubmittedAt: deps.now() };
    }
    if (r.outcome === 'refused') {
      return (await this.apply(c, 'verification_failed', 'sweeper', { decision: { reasonCode: r.code, reason: r.message } })) ?? c;
    }
    await deps.counterparties.reschedule(c.id, c.verificationId, deps.counterpartySettings.retryMs);
    return c;
  }

  /** ACH, submitted and no callback yet: ask the rail; a settled answer is applied, an unknown prenote submitted again. */
  private async poll(c: CounterpartyRecord): Promise<CounterpartyRecord | undefined> {
    const { deps } = this;
    const st = await deps.prenotes.prenoteStatus(c.prenoteId!);
    if ('unavailable' in st) {
      await deps.counterparties.reschedule(c.id, c.verificationId, deps.counterpartySettings.retryMs);
      return undefined;
    }
    if (!st.found) return this.submit({ ...c, prenoteSubmittedAt: null });
    if (st.status === 'PENDING') {
      await deps.counterparties.reschedule(c.id, c.verificationId, deps.counterpartySettings.prenoteCheckMs);
      return undefined;
    }
    return this.settlePrenote(c, st, 'sweeper');
  }

  /** A settled prenote (callback or status) applied to the counterparty whose current prenote it is. */
  async settlePrenote(
    c: CounterpartyRecord,
    o: { status: 'ACCEPTED' | 'REJECTED'; reasonCode: string | null; reason: string | null },
    actor: 'rail' | 'sweeper',
  ): Promise<CounterpartyRecord | undefined> {
    if (o.status === 'ACCEPTED') return this.apply(c, 'verified', actor);
    return this.apply(c, 'verification_failed', actor, {
      decision: { reasonCode: o.reasonCode ?? 'REJECTED', reason: o.reason ?? 'La red ACH rechazó la prenotificación.' },
    });
  }
}
