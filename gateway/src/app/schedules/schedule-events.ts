import { createHash } from 'node:crypto';
import { appendOutbox } from '@wallet/platform';
import { scheduleEventsV1 } from '@wallet/proto';
import type { Queryable } from '../../persistence/sql.js';
import type { RunRow } from '../../persistence/schedule.store.js';

/** The SCHEDULES stream's subjects (docs/schedules.md, docs/events.md). */
export const SCHEDULE_RUN_STARTED = 'schedule.run_started';
export const SCHEDULE_RUN_FAILED = 'schedule.run_failed';
export const SCHEDULE_RUN_SKIPPED = 'schedule.run_skipped';

const refOf = (r: RunRow): scheduleEventsV1.ScheduleRunRef => ({
  scheduleId: r.scheduleId,
  companyId: r.companyId,
  runId: r.id,
  seq: r.seq,
  nominalAt: r.nominalAt,
  dueAt: r.dueAt,
  runKey: r.runKey,
  actionKind: r.action.kind,
});

/**
 * The event of a run's outcome, written in the transaction that ends the run (the relay publishes it
 * after commit). Its id is derived from the run, so the outcome of one run is one event.
 */
export async function appendRunEvent(
  tx: Queryable,
  r: RunRow,
  o:
    | { kind: 'started'; transferId: string | null; moveId: string | null; batchId?: string | null; amountCents: bigint; status: string; at: string }
    | { kind: 'failed'; code: string; message: string; amountCents: bigint; at: string }
    | { kind: 'skipped'; reason: string; at: string },
): Promise<void> {
  const id = runEventId(r.id, o.kind);
  if (o.kind === 'started') {
    const payload = scheduleEventsV1.ScheduleRunStarted.toJSON({
      eventId: id,
      run: refOf(r),
      ...(o.transferId ? { transferId: o.transferId } : {}),
      ...(o.moveId ? { moveId: o.moveId } : {}),
      ...(o.batchId ? { batchId: o.batchId } : {}),
      amountCents: o.amountCents,
      status: o.status,
      occurredAt: o.at,
    });
    await appendOutbox(tx, 'gateway', { id, subject: SCHEDULE_RUN_STARTED, payload });
  } else if (o.kind === 'failed') {
    const payload = scheduleEventsV1.ScheduleRunFailed.toJSON({
      eventId: id,
      run: refOf(r),
      errorCode: o.code,
      errorMessage: o.message,
      amountCents: o.amountCents,
      occurredAt: o.at,
    });
    await appendOutbox(tx, 'gateway', { id, subject: SCHEDULE_RUN_FAILED, payload });
  } else {
    const payload = scheduleEventsV1.ScheduleRunSkipped.toJSON({ eventId: id, run: refOf(r), reason: o.reason, occurredAt: o.at });
    await appendOutbox(tx, 'gateway', { id, subject: SCHEDULE_RUN_SKIPPED, payload });
  }
}

/** A UUID derived from the run and its outcome (the outbox and the stream de-duplicate on it): SHA-256, shaped as a version 8 UUID. */
function runEventId(runId: string, kind: string): string {
  const h = createHash('sha256').update(`schedule-run:${runId}:${kind}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
