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

/** `book`/`idOf`: the owner's records and the id FindSettlements looks them up by (the provider's on breb-inbound, ours on pse). */
function harness(breaks: BreakRecord[], book: OurRecord[] = records, idOf: (r: OurRecord) => string = (r) => r.providerId!) {
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
    ours: { find: async (_rail: string, ids: readonly string[]) => book.filter((r) => ids.includes(idOf(r))) },
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

/**
 * accept_provider on pse breaks about refunds: a deposit refunded several times, in parts, has one
 * break per refund (keyed by the refund's return id); each is checked against its own refund's record
 * and corrected as a movement of its own, `pse:our:<return id>:reversal`, a name the ledger's
 * corrections register accepts.
 */
describe('accept_provider on a pse refund', () => {
  const exc = (n: number) => `exc_${String(n).padStart(32, '1')}`;
  const F1 = 'ret_bbbbbbbbbbbbbbbbbbbbbbb1';
  const F2 = 'ret_bbbbbbbbbbbbbbbbbbbbbbb2';
  const book: OurRecord[] = [
    { ourId: 'dep_p', providerId: 'pse_p', status: 'ASSIGNED', direction: 'IN', amountCents: 10_000n, settledAt: at },
    { ourId: 'dep_p', providerId: 'pse_p', status: 'REVERSED', direction: 'OUT', amountCents: 10_000n, settledAt: at },
    { ourId: F1, providerId: 'pse_p', status: 'REFUNDED', direction: 'OUT', amountCents: 3_000n, settledAt: at },
    // Still being sent to the provider on our side.
    { ourId: F2, providerId: 'pse_p', status: 'PENDING', direction: 'OUT', amountCents: 2_000n, settledAt: null, stepOwed: true },
  ];
  const pseLine = (ourId: string, amountCents: bigint) => ({ ...line(ourId, amountCents), providerId: 'pse_p', status: 'REFUNDED' as const });
  function pseBreak(ours: OurRecord | undefined, lines: Parameters<KeyGroup['add']>[0][], key = recordKey('pse', ours!)): Break {
    const g = new KeyGroup('pse', D, key, ours);
    for (const l of lines) g.add(l);
    const [b] = g.settle().breaks;
    if (!b) throw new Error('no break');
    return b;
  }

  it("each refund is a movement of its own, named by its return id; the deposit's reversal keeps its name", () => {
    const m1 = breakMovement(pseBreak(book[2], []));
    const m2 = breakMovement(pseBreak(book[3], [pseLine(F2, 2_000n)]));
    expect([m1, m2]).toEqual([`pse:our:${F1}:reversal`, `pse:our:${F2}:reversal`]);
    expect(parseExternalMovement(m1)).toEqual({ rail: 'pse', ourId: F1, leg: 'reversal' });
    expect(breakMovement(pseBreak(book[1], []))).toBe('pse:our:dep_p:reversal');
    expect(breakMovement(pseBreak(book[0], []))).toBe('pse:our:dep_p:payment');
  });

  it("reads the owner's record of that refund: a final one is corrected under the refund's movement; one still in flight is refused (CASE_NOT_FINAL)", async () => {
    const missing = stored(pseBreak(book[2], []), exc(1)); // our first refund is not in the provider's report
    const pending = stored(pseBreak(book[3], [pseLine(F2, 2_000n)]), exc(2)); // the second: reported, in flight on our side
    expect(missing.key).toBe(`pse:${D}:missing_at_provider:pse_p:refund:${F1}`);
    expect(pending.key).toBe(`pse:${D}:status_mismatch:pse_p:refund:${F2}`);
    const h = harness([missing, pending], book, (r) => r.ourId);

    const refused = await h.resolve.execute({ id: exc(2), action: 'accept_provider', note: 'PSE lo reembolsó', resolvedBy: 'operator:ana' }).catch((e) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'CASE_NOT_FINAL', details: { reason: 'pending', ourId: F2 } });

    const done = await h.resolve.execute({ id: exc(1), action: 'accept_provider', note: 'PSE no lo reembolsó', resolvedBy: 'operator:ana' });
    expect(done.status).toBe('RESOLVED');
    expect(h.posted).toEqual([
      expect.objectContaining({
        idempotencyKey: `recon:${missing.key}:accept_provider`,
        clearing: 'pse',
        deltaCents: -3_000n,
        movement: `pse:our:${F1}:reversal`,
        caseId: exc(1),
      }),
    ]);
  });
});
