import type { reconciliationV1 } from '@wallet/proto';

// The wire form of runs and breaks: the gRPC answers and the events' payloads (the same messages).
import type { BreakRecord, RunRecord } from '../app/ports.js';

/** A run on the wire (`wallet.reconciliation.v1.Run`); counts of a run that has none yet are 0. */
export function runToProto(r: RunRecord): reconciliationV1.Run {
  return {
    id: r.id,
    rail: r.rail,
    date: r.date,
    trigger: r.trigger,
    status: r.status,
    requestedBy: r.requestedBy,
    startedAt: r.startedAt,
    ...(r.finishedAt ? { finishedAt: r.finishedAt } : {}),
    ...(r.coversUntil ? { coversUntil: r.coversUntil } : {}),
    ...(r.rejectReason ? { rejectReason: r.rejectReason } : {}),
    ...(r.detail ? { detail: r.detail } : {}),
    reportLines: BigInt(r.report?.lines ?? 0),
    reportAmountCents: r.report?.amountCents ?? 0n,
    reportFeeCents: r.report?.feeCents ?? 0n,
    reportNetCents: r.report?.netCents ?? 0n,
    oursCount: BigInt(r.ours?.count ?? 0),
    oursAmountCents: r.ours?.amountCents ?? 0n,
    oursNetCents: r.ours?.netCents ?? 0n,
    matchedCount: BigInt(r.matched?.count ?? 0),
    matchedAmountCents: r.matched?.amountCents ?? 0n,
    breaksTotal: BigInt(r.breaks?.total ?? 0),
    breaksOpened: BigInt(r.breaks?.opened ?? r.openedBeforeFailure ?? 0),
    breaksByKind: Object.fromEntries(Object.entries(r.breaks?.byKind ?? {}).map(([k, n]) => [k, BigInt(n)])),
  };
}

/** A break on the wire (`wallet.reconciliation.v1.Break`): both sides as JSON ("{}" when missing). */
export function breakToProto(b: BreakRecord): reconciliationV1.Break {
  return {
    key: b.key,
    kind: b.kind,
    rail: b.rail,
    date: b.date,
    ...(b.ourId ? { ourId: b.ourId } : {}),
    ...(b.providerId ? { providerId: b.providerId } : {}),
    oursJson: JSON.stringify(b.ours ?? {}),
    theirsJson: JSON.stringify(b.theirs ?? {}),
    status: b.status,
    runId: b.runId,
    lastSeenRunId: b.lastSeenRunId,
    openedAt: b.openedAt,
    ...(b.resolvedAt ? { resolvedAt: b.resolvedAt } : {}),
    ...(b.resolution ? { resolution: b.resolution } : {}),
    exceptionId: b.exceptionId,
    differenceCents: b.differenceCents,
    ...(b.movement ? { movement: b.movement } : {}),
    ...(b.adjustmentState ? { adjustmentState: b.adjustmentState } : {}),
    ...(b.linkedCase ? { linkedCase: b.linkedCase } : {}),
  };
}
