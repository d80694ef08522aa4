import { formatInstant, scheduleRunView } from '@wallet/platform';
import { Schedules, type RunRow, type ScheduleRow } from '../../app/schedules/schedules.js';

/** An instant kept as text (RFC 3339, any precision) as the API writes instants: UTC, six fraction digits. */
const inst = (s: string) => formatInstant(new Date(s));
/** A stored instant already in the API's form (isoCol) as it is; any other RFC 3339 text in that form. */
const instOf = (s: string) => (/\.\d{6}Z$/.test(s) ? s : inst(s));

const runRef = (r: { seq: number; nominalAt: string; dueAt: string }) => ({ seq: r.seq, nominalAt: instOf(r.nominalAt), dueAt: instOf(r.dueAt) });

/** GET /schedules/{id} and every answer that shows a schedule. */
export function scheduleView(s: ScheduleRow): Record<string, unknown> {
  const rec = s.rule.recurrence;
  return {
    id: s.id,
    status: s.status,
    description: s.description,
    recurrence: rec.kind === 'ONCE' ? { kind: 'ONCE', executeAt: inst(String(rec.executeAt)) } : rec,
    businessDayRule: s.rule.businessDayRule,
    startAt: inst(s.rule.startAt),
    endAt: s.rule.endAt === null ? null : inst(s.rule.endAt),
    maxRuns: s.rule.maxRuns,
    action: s.action,
    runsStarted: s.runsStarted,
    nextRun: s.next ? runRef(s.next) : null,
    upcomingRuns: s.status === 'ACTIVE' ? Schedules.upcoming(s, 5).map(runRef) : [],
    createdAt: instOf(s.createdAt),
    updatedAt: instOf(s.updatedAt),
  };
}

export function scheduleRunOf(r: RunRow): Record<string, unknown> {
  return scheduleRunView({
    id: r.id,
    scheduleId: r.scheduleId,
    seq: r.seq,
    nominalAt: r.nominalAt,
    dueAt: r.dueAt,
    runKey: r.runKey,
    status: r.status,
    amountCents: r.amountCents,
    transferId: r.transferId,
    moveId: r.moveId,
    batchId: r.batchId,
    transferStatus: r.outcomeStatus,
    batchStatus: r.outcomeStatus,
    error: r.errorCode ? { code: r.errorCode, message: r.errorMessage ?? '' } : null,
    claimedAt: r.claimedAt,
    finishedAt: r.finishedAt,
  });
}
