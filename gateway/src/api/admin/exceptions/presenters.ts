import { formatInstant } from '@wallet/platform';
import type { exceptionsV1 } from '@wallet/proto';

const parse = (json: string): Record<string, unknown> => {
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return {};
  }
};

type WireException = exceptionsV1.MoneyException;

export function exceptionToApi(e: WireException) {
  return {
    id: e.id,
    kind: e.kind,
    status: e.status,
    rail: e.rail,
    resourceId: e.resourceId,
    companyId: e.companyId,
    ours: parse(e.oursJson),
    theirs: parse(e.theirsJson),
    openedAt: formatInstant(e.openedAt ?? new Date(0)),
    resolvedAt: e.resolvedAt ? formatInstant(e.resolvedAt) : null,
    resolvedBy: e.resolvedBy ?? null,
    action: e.action ?? null,
    note: e.note ?? null,
    actions: e.actions,
    movement: e.movement ?? null,
  };
}
