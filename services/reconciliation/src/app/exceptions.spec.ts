import { AppError, createLogger, parseExternalMovement, type MoneyException } from '@wallet/platform';
import { KeyGroup, recordKey, type Break, type OurRecord } from '../domain/matching.js';
import { breakMovement } from '../persistence/reconciliation.store.js';
import type { ClearingLedger, ReconciliationDeps } from './deps.js';
import { ResolveReconciliationException } from './exceptions.js';
import type { BreakRecord } from './ports.js';

/**
 * accept_provider on breb-inbound breaks about returns: a payment returned several times, in parts,
 * has one break per return; each is checked against its own return's record (not the payment's, not
 * another return's) and corrected as a movement of its own.
 */

const D = '2025-03-14';
const R1 = 'ret_aaaaaaaaaaaaaaaaaaaaaaa1';
const R2 = 'ret_aaaaaaaaaaaaaaaaaaaaaaa2';
const at = '2025-03-14T16:00:00.000Z';
const records: OurRecord[] = [
  { ourId: 'dep_p', providerId: 'brb_in_p', status: 'ASSIGNED', direction: 'IN', amountCents: 10_000n, settledAt: at },
  { ourId: R1, providerId: 'brb_in_p', status: 'RETURNED', direction: 'OUT', amountCents: 3_000n, settledAt: at },
  // Still being sent to the network on our side.
  { ourId: R2, providerId: 'brb_in_p', status: 'PENDING', direction: 'OUT', amountCents: 2_000n, settledAt: null, stepOwed: true },
];

/** The break a run opens for one of our records with the report's lines for it. */
function breakOf(ours: OurRecord | undefined, lines: Parameters<KeyGroup['add']>[0][], key = recordKey('breb-inbound', ours!)): Break {
  const g = new KeyGroup('breb-inbound', D, key, ours);
  for (const l of lines) g.add(l);
  const [b] = g.settle().breaks;
  if (!b) throw new Error('no break');
  return b;
}

function stored(b: Break, excId: string): BreakRecord {
  return {
    key: b.key,
    kind: b.kind,
    rail: b.rail,
    date: b.date,
    ourId: b.ourId ?? null,
    providerId: b.providerId ?? null,
    ours: null,
    theirs: null,
    status: 'OPEN',
    runId: 'run_1',
    lastSeenRunId: 'run_1',
    openedAt: new Date(),
    resolvedAt: null,
    resolution: null,
    exceptionId: excId,
    differenceCents: b.differenceCents,
    movement: breakMovement(b),
    adjustmentKey: null,
    adjustmentState: null,
    adjustments: 0,
    linkedCase: null,
  };
}

function harness(breaks: BreakRecord[]) {
  const byKey = new Map(breaks.map((b) => [b.key, { ...b }]));
  const exceptions = new Map<string, MoneyException>(
    breaks.map((b) => [
      b.exceptionId,
      {
        id: b.exceptionId,
        kind: b.kind.toUpperCase(),
        companyId: '',
        rail: 'BREB',
        resourceId: b.key,
        ours: {},
        theirs: {},
        status: 'OPEN',
        openedAt: new Date(),
        resolvedAt: null,
        resolvedBy: null,
        action: null,
        note: null,
      },
    ]),
  );
  const posted: Parameters<ClearingLedger['postClearingAdjustment']>[0][] = [];
  const deps = {
    ours: { find: async (_rail: string, ids: readonly string[]) => records.filter((r) => ids.includes(r.providerId!)) },
    ledger: {
      async postClearingAdjustment(a) {
        posted.push(a);
      },
      async reverseCorrection() {},
    } satisfies ClearingLedger,
    breaks: {
      get: async (key: string) => byKey.get(key),
      resolve: async (key: string, resolution: string) => Object.assign(byKey.get(key)!, { status: 'RESOLVED', resolution }),
      markAdjusted: async (key: string, adjustmentKey: string, n: number) => {
        Object.assign(byKey.get(key)!, { adjustmentKey, adjustmentState: 'POSTED', adjustments: n });
      },
    },
    exceptions: {
      get: async (id: string) => exceptions.get(id),
      begin: async (id: string, r: { action: string; note: string; resolvedBy: string }) => {
        const e = exceptions.get(id);
        if (!e || e.status !== 'OPEN') return undefined;
        return Object.assign(e, { status: 'RESOLVING', ...r });
      },
      finish: async (id: string) => Object.assign(exceptions.get(id)!, { status: 'RESOLVED' }),
      reopen: async (id: string) => {
        Object.assign(exceptions.get(id)!, { status: 'OPEN' });
      },
    },
    log: createLogger('recon-exceptions-spec', 'silent'),
  } as unknown as ReconciliationDeps;
  return { deps, posted, byKey, exceptions, resolve: new ResolveReconciliationException(deps) };
}

const line = (ourId: string | null, amountCents: bigint, direction: 'IN' | 'OUT' = 'OUT') => ({
  lineNo: 1,
  providerId: 'brb_in_p',
  ourId,
  direction,
  amountCents,
  feeCents: 0n,
  status: direction === 'OUT' ? ('RETURNED' as const) : ('RECEIVED' as const),
  valueDate: D,
  acceptedAt: at,
  settledAt: at,
  counterparty: 'Ana',
});

describe('accept_provider on a breb-inbound return leg', () => {
  const exc = (n: number) => `exc_${String(n).padStart(32, '0')}`;

  it('each return is a movement of its own; the full return of a held payment (its id the deposit id) keeps the name it had', () => {
    const m1 = breakMovement(breakOf(records[1], []));
    const m2 = breakMovement(breakOf(records[2], [line(R2, 2_000n)]));
    expect([m1, m2]).toEqual([`breb-inbound:brb_in_p:${R1}:return`, `breb-inbound:brb_in_p:${R2}:return`]);
    // The ledger's corrections register takes these names.
    expect(parseExternalMovement(m1)).toEqual({ rail: 'breb-inbound', providerId: `brb_in_p:${R1}`, leg: 'return' });
    const legacy = { ourId: 'dep_h', providerId: 'brb_in_h', status: 'RETURNED' as const, direction: 'OUT', amountCents: 1n, settledAt: at };
    expect(breakMovement(breakOf(legacy, []))).toBe('breb-inbound:brb_in_h:return');
    // The payment leg: the payment's movement.
    expect(breakMovement(breakOf(undefined, [line(null, 10_000n, 'IN')], 'brb_in_p\u0000IN'))).toBe('breb-inbound:brb_in_p');
  });

  it("reads the owner's record of that return: a final one is corrected under the return's movement; another return still in flight is refused (CASE_NOT_FINAL), the exception OPEN again", async () => {
    const missing = stored(breakOf(records[1], []), exc(1)); // our first return is not in the network's report
    const pending = stored(breakOf(records[2], [line(R2, 2_000n)]), exc(2)); // the second: reported, in flight on our side
    expect(missing.key).toBe(`breb-inbound:${D}:missing_at_provider:brb_in_p:return:${R1}`);
    expect(pending.key).toBe(`breb-inbound:${D}:status_mismatch:brb_in_p:return:${R2}`);
    const h = harness([missing, pending]);

    const refused = await h.resolve.execute({ id: exc(2), action: 'accept_provider', note: 'la red lo devolvió', resolvedBy: 'operator:ana' }).catch((e) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'CASE_NOT_FINAL', details: { reason: 'pending', ourId: R2 } });
    expect(h.exceptions.get(exc(2))!.status).toBe('OPEN');

    const done = await h.resolve.execute({ id: exc(1), action: 'accept_provider', note: 'la red no lo devolvió', resolvedBy: 'operator:ana' });
    expect(done.status).toBe('RESOLVED');
    expect(h.posted).toEqual([
      expect.objectContaining({
        idempotencyKey: `recon:${missing.key}:accept_provider`,
        clearing: 'breb-inbound',
        deltaCents: -3_000n,
        movement: `breb-inbound:brb_in_p:${R1}:return`,
        caseId: exc(1),
      }),
    ]);
    expect(h.byKey.get(missing.key)).toMatchObject({ status: 'RESOLVED', resolution: 'accept_provider', adjustmentState: 'POSTED' });
  });
});
