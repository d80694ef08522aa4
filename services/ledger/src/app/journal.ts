import { PeriodicTask, Problems, addDays, bogotaClock, type Logger } from '@wallet/platform';
import { eventsV1 } from '@wallet/proto';
import { ChainVerifier, GENESIS, type BrokenPosting, type JournalBreak, type JournalHead, type SealedRow } from '../domain/journal.js';
import type { LedgerDeps } from './deps.js';
import type { OutboxEvent } from './ports.js';

/** The subject of a recorded daily head (LEDGER stream, docs/events.md). */
export const JOURNAL_HEAD_SUBJECT = 'ledger.journal_head_recorded';

export interface SealOutcome {
  /** false: another replica's sealer held the lock; nothing done */
  locked: boolean;
  sealed: number;
  /** the chain's head after this pass */
  head: JournalHead;
  /** the daily heads recorded in this pass, oldest first (more than one when days were left unclosed) */
  recorded: Array<JournalHead & { day: string }>;
}

export interface RecordedHead extends JournalHead {
  day: string;
  recordedAt: string;
}

/** The journal's tables (persistence/journal.store.ts). */
export interface JournalPort {
  seal(limit: number, closeDay: string | null, headEvent: (h: JournalHead & { day: string }) => OutboxEvent): Promise<SealOutcome>;
  hashAt(seq: bigint): Promise<string | undefined>;
  sealedPage(afterSeq: bigint, limit: number): Promise<SealedRow[]>;
  pending(): Promise<number>;
  outsideJournal(limit: number): Promise<string[]>;
  heads(fromDay?: string, toDay?: string): Promise<RecordedHead[]>;
}

/** Postings sealed per transaction (the sealer loops while a pass fills it). */
export const SEAL_BATCH = 2000;

export function journalHeadEvent(deps: Pick<LedgerDeps, 'newId' | 'now'>, h: JournalHead & { day: string }): OutboxEvent {
  const id = deps.newId();
  const payload = eventsV1.LedgerJournalHeadRecorded.toJSON({ eventId: id, day: h.day, seq: h.seq, hash: h.hash, occurredAt: deps.now() });
  return { id, subject: JOURNAL_HEAD_SUBJECT, payload };
}

/** The Bogotá day before the one `at` falls on: the last day closed. */
export function lastClosedDay(at: Date): string {
  return addDays(bogotaClock(at).date, -1);
}

/**
 * Seals committed postings into the journal's chain, beside the posting path (never in it): every
 * `intervalMs`, and at once when asked (`nudge`). One replica seals at a time (an advisory lock);
 * the others' passes return at once. Records the last closed Bogotá day's head once every posting
 * created up to its end is sealed, and before it the head of every day since the last recorded one
 * that no pass closed (a ledger stopped across a whole day): no day is left without a head.
 */
export class JournalSealer {
  private readonly task: PeriodicTask;

  constructor(
    private readonly journal: JournalPort,
    private readonly deps: Pick<LedgerDeps, 'newId' | 'now'>,
    o: { intervalMs: number; batch?: number },
    private readonly log: Logger,
  ) {
    const batch = o.batch ?? SEAL_BATCH;
    this.task = new PeriodicTask('journal-sealer', o.intervalMs, () => this.drain(batch), log);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Seals until the queue is empty (or another replica holds the lock). */
  async drain(batch = SEAL_BATCH): Promise<{ sealed: number; head: JournalHead; recorded: Array<JournalHead & { day: string }> }> {
    let sealed = 0;
    let head = GENESIS;
    const recorded: Array<JournalHead & { day: string }> = [];
    for (;;) {
      const out = await this.journal.seal(batch, lastClosedDay(this.deps.now()), (h) => journalHeadEvent(this.deps, h));
      if (!out.locked) break;
      sealed += out.sealed;
      head = out.head;
      for (const r of out.recorded) {
        recorded.push(r);
        this.log.info({ day: r.day, seq: r.seq.toString(), hash: r.hash }, 'journal daily head recorded');
      }
      if (out.sealed < batch) break;
    }
    return { sealed, head, recorded };
  }
}

export interface JournalVerification {
  ok: boolean;
  from: JournalHead;
  head: JournalHead;
  verified: number;
  pending: number;
  headsChecked: number;
  firstBroken: (Omit<BrokenPosting, 'reason'> & { reason: JournalBreak | 'OUTSIDE_JOURNAL' }) | null;
  broken: number;
  outsideJournal: string[];
  durationMs: number;
}

/** Rows read per page while verifying. */
const VERIFY_PAGE = 5000;
const MAX_OUTSIDE = 20;

/**
 * Verifies the journal from genesis or from a head the caller trusts (docs/journal.md
 * "Verifying"): every sealed posting's content is recomputed from its rows as they are now, every
 * link from the previous hash; recorded daily heads must lie on the chain; no posting may exist
 * outside it (neither sealed nor queued). Names the first broken posting.
 */
export async function verifyJournal(journal: JournalPort, from: JournalHead = GENESIS, clock: () => number = Date.now): Promise<JournalVerification> {
  const started = clock();
  const v = new ChainVerifier(from);
  let trustedOk = true;
  const stored = await journal.hashAt(from.seq);
  if (stored !== from.hash) {
    trustedOk = false;
    v.first = { seq: from.seq, postingId: null, reason: 'HEAD_MISMATCH' };
    v.broken += 1;
  }
  const recorded = (await journal.heads()).filter((h) => h.seq > from.seq);
  let headsChecked = 0;
  let next = 0;
  const checkHeadsUpTo = (seq: bigint) => {
    while (next < recorded.length && recorded[next]!.seq <= seq) {
      const h = recorded[next]!;
      if (h.seq === v.head.seq) {
        v.checkHead(h);
        headsChecked += 1;
      }
      next += 1;
    }
  };
  // the next page is read while this one is hashed (the database and this process work at once)
  let nextPage: Promise<SealedRow[]> = journal.sealedPage(from.seq, VERIFY_PAGE);
  for (;;) {
    const page = await nextPage;
    if (page.length === VERIFY_PAGE) nextPage = journal.sealedPage(page[page.length - 1]!.seq, VERIFY_PAGE);
    for (const row of page) {
      // a head recorded at a position the page skips (a deleted row) cannot be checked: the gap is the break
      checkHeadsUpTo(row.seq - 1n);
      v.feed(row);
      checkHeadsUpTo(row.seq);
    }
    if (page.length < VERIFY_PAGE) break;
  }
  // heads recorded past the chain's end: the chain was cut (rows deleted at its end)
  for (; next < recorded.length; next += 1) {
    v.broken += 1;
    v.first ??= { seq: recorded[next]!.seq, postingId: null, reason: 'HEAD_MISMATCH' };
  }
  const outside = await journal.outsideJournal(MAX_OUTSIDE);
  const pending = await journal.pending();
  const firstBroken: JournalVerification['firstBroken'] =
    v.first ?? (outside.length > 0 ? { seq: 0n, postingId: outside[0]!, reason: 'OUTSIDE_JOURNAL' } : null);
  return {
    ok: trustedOk && v.broken === 0 && outside.length === 0,
    from,
    head: v.head,
    verified: v.checked,
    pending,
    headsChecked,
    firstBroken,
    broken: v.broken + outside.length,
    outsideJournal: outside,
    durationMs: clock() - started,
  };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const HEX64 = /^[0-9a-f]{64}$/;

/** VerifyJournal: from genesis, or from a head the caller trusts (both of its fields, or neither). */
export class VerifyJournal {
  constructor(private readonly journal: JournalPort) {}

  execute(req: { fromSeq?: bigint; fromHash?: string }): Promise<JournalVerification> {
    const p = new Problems();
    if ((req.fromSeq === undefined) !== (req.fromHash === undefined)) p.add('fromSeq', 'un encabezado de confianza lleva fromSeq y fromHash');
    if (req.fromSeq !== undefined && req.fromSeq < 0n) p.add('fromSeq', 'debe ser 0 o mayor');
    if (req.fromHash !== undefined && !HEX64.test(req.fromHash)) p.add('fromHash', 'debe ser un SHA-256 en 64 dígitos hexadecimales en minúscula');
    p.throwIfAny();
    return verifyJournal(this.journal, req.fromSeq !== undefined && req.fromHash !== undefined ? { seq: req.fromSeq, hash: req.fromHash } : GENESIS);
  }
}

/** GetJournalHeads: the recorded daily heads of Bogotá days in [fromDay, toDay] (at most 400 days). */
export class GetJournalHeads {
  constructor(private readonly journal: JournalPort) {}

  async execute(fromDay: string, toDay: string): Promise<RecordedHead[]> {
    const p = new Problems();
    if (!DAY.test(fromDay) || Number.isNaN(Date.parse(fromDay))) p.add('fromDay', 'debe ser una fecha AAAA-MM-DD');
    if (!DAY.test(toDay) || Number.isNaN(Date.parse(toDay))) p.add('toDay', 'debe ser una fecha AAAA-MM-DD');
    else if (p.empty && (toDay < fromDay || Date.parse(toDay) - Date.parse(fromDay) > 400 * 86_400_000))
      p.add('toDay', 'debe estar entre fromDay y 400 días después');
    p.throwIfAny();
    return this.journal.heads(fromDay, toDay);
  }
}
