// A run of a schedule (docs/schedules.md) as the API (GET /schedules/{id}/runs) and the webhooks
// (schedule.run_started, schedule.run_failed, schedule.run_skipped) show it: one builder for both.
import { scheduleEventsV1 } from '@wallet/proto';
import { formatInstant } from '../time/instant.js';

export interface ScheduleRunRecord {
  id: string;
  scheduleId: string;
  seq: number;
  nominalAt: string;
  dueAt: string;
  runKey: string;
  status: 'STARTING' | 'STARTED' | 'FAILED' | 'SKIPPED';
  amountCents: bigint | null;
  transferId: string | null;
  moveId: string | null;
  /** The bulk payout a BATCH run made and executed. */
  batchId: string | null;
  /** The transfer's status as the send answered it (a send's run only). */
  transferStatus: string | null;
  /** The batch's status as its execution answered it (a BATCH run only). */
  batchStatus: string | null;
  error: { code: string; message: string } | null;
  /** When a replica claimed it (the API has it; an event does not). */
  claimedAt?: string;
  finishedAt: string | null;
}

/** An instant kept as RFC 3339 text, as the API writes instants (UTC, six fraction digits). */
const inst = (s: string) => (/\.\d{6}Z$/.test(s) ? s : formatInstant(new Date(s)));

export function scheduleRunView(r: ScheduleRunRecord): Record<string, unknown> {
  return {
    id: r.id,
    scheduleId: r.scheduleId,
    seq: r.seq,
    nominalAt: inst(r.nominalAt),
    dueAt: inst(r.dueAt),
    runKey: r.runKey,
    status: r.status,
    amountCents: r.amountCents === null ? null : Number(r.amountCents),
    transferId: r.transferId,
    walletMoveId: r.moveId,
    batchId: r.batchId,
    transferStatus: r.transferId ? r.transferStatus : null,
    batchStatus: r.batchId ? r.batchStatus : null,
    error: r.status === 'FAILED' ? r.error : null,
    ...(r.claimedAt !== undefined ? { claimedAt: inst(r.claimedAt) } : {}),
    finishedAt: r.finishedAt === null ? null : inst(r.finishedAt),
  };
}

/** The run an event of the SCHEDULES stream reports, for its webhook. */
export function scheduleRunOfEvent(subject: string, payload: unknown): { companyId: string; run: ScheduleRunRecord } | null {
  const refOf = (ref: scheduleEventsV1.ScheduleRunRef | undefined): scheduleEventsV1.ScheduleRunRef => {
    if (!ref?.runId || !ref.companyId || !ref.scheduleId) throw new Error(`${subject} without its run`);
    return ref;
  };
  const base = (ref: scheduleEventsV1.ScheduleRunRef) => ({
    id: ref.runId,
    scheduleId: ref.scheduleId,
    seq: ref.seq,
    nominalAt: ref.nominalAt,
    dueAt: ref.dueAt,
    runKey: ref.runKey,
  });
  if (subject === 'schedule.run_started') {
    const e = scheduleEventsV1.ScheduleRunStarted.fromJSON(payload);
    const ref = refOf(e.run);
    return {
      companyId: ref.companyId,
      run: {
        ...base(ref),
        status: 'STARTED',
        amountCents: e.amountCents,
        transferId: e.transferId ?? null,
        moveId: e.moveId ?? null,
        batchId: e.batchId ?? null,
        transferStatus: e.transferId ? e.status : null,
        batchStatus: e.batchId ? e.status : null,
        error: null,
        finishedAt: e.occurredAt,
      },
    };
  }
  if (subject === 'schedule.run_failed') {
    const e = scheduleEventsV1.ScheduleRunFailed.fromJSON(payload);
    const ref = refOf(e.run);
    return {
      companyId: ref.companyId,
      run: {
        ...base(ref),
        status: 'FAILED',
        amountCents: e.amountCents,
        transferId: null,
        moveId: null,
        batchId: null,
        transferStatus: null,
        batchStatus: null,
        error: { code: e.errorCode, message: e.errorMessage },
        finishedAt: e.occurredAt,
      },
    };
  }
  if (subject === 'schedule.run_skipped') {
    const e = scheduleEventsV1.ScheduleRunSkipped.fromJSON(payload);
    const ref = refOf(e.run);
    return {
      companyId: ref.companyId,
      run: {
        ...base(ref),
        status: 'SKIPPED',
        amountCents: null,
        transferId: null,
        moveId: null,
        batchId: null,
        transferStatus: null,
        batchStatus: null,
        error: null,
        finishedAt: e.occurredAt,
      },
    };
  }
  return null;
}
