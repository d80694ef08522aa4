import type { reconciliationV1 } from '@wallet/proto';
import { formatInstant } from '../time/instant.js';

/** A recorded side of a break (`oursJson`, `theirsJson`): an object, or `{}` when the text is not one. */
const parseSide = (json: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(json) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};
const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);

/**
 * A reconciliation run as `GET /admin/reconciliations/{id}` shows it and the `reconciliation.completed`
 * webhook carries it: cents as decimal strings, counts as numbers, instants as the API writes them.
 */
export function reconciliationRunView(r: reconciliationV1.Run) {
  return {
    id: r.id,
    rail: r.rail,
    date: r.date,
    trigger: r.trigger,
    status: r.status,
    requestedBy: r.requestedBy,
    startedAt: formatInstant(r.startedAt ?? new Date(0)),
    finishedAt: iso(r.finishedAt),
    coversUntil: iso(r.coversUntil),
    rejectReason: r.rejectReason ?? null,
    detail: r.detail ?? null,
    report: {
      lines: Number(r.reportLines),
      amountCents: r.reportAmountCents.toString(),
      feeCents: r.reportFeeCents.toString(),
      netCents: r.reportNetCents.toString(),
    },
    ours: { count: Number(r.oursCount), amountCents: r.oursAmountCents.toString(), netCents: r.oursNetCents.toString() },
    matched: { count: Number(r.matchedCount), amountCents: r.matchedAmountCents.toString() },
    breaks: {
      total: Number(r.breaksTotal),
      opened: Number(r.breaksOpened),
      byKind: Object.fromEntries(Object.entries(r.breaksByKind).map(([k, n]) => [k, Number(n)])),
    },
  };
}

/** A reconciliation break as `GET /admin/reconciliations/{id}/breaks` lists it and the `reconciliation.break` webhook carries it. */
export function reconciliationBreakView(b: reconciliationV1.Break) {
  return {
    key: b.key,
    kind: b.kind,
    rail: b.rail,
    date: b.date,
    ourId: b.ourId ?? null,
    providerId: b.providerId ?? null,
    ours: parseSide(b.oursJson),
    theirs: parseSide(b.theirsJson),
    status: b.status,
    runId: b.runId,
    lastSeenRunId: b.lastSeenRunId,
    openedAt: formatInstant(b.openedAt ?? new Date(0)),
    resolvedAt: iso(b.resolvedAt),
    resolution: b.resolution ?? null,
    exceptionId: b.exceptionId,
    differenceCents: b.differenceCents.toString(),
    movement: b.movement ?? null,
    adjustmentState: (b.adjustmentState ?? null) as 'POSTED' | 'REVERSING' | 'REVERSED' | null,
    linkedCase: b.linkedCase ?? null,
  };
}
