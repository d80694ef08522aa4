import fc from 'fast-check';
import { AppError } from '@wallet/platform';
import {
  bounds,
  cobroTolerance,
  decideMatch,
  decideReversal,
  documentKey,
  validateTolerance,
  isCobroId,
  newCobroId,
  newTransactionId,
  requestFingerprint,
  validateCreateCobro,
  type CobroRecord,
} from './cobro.js';

const NOW = new Date('2026-11-29T12:00:00Z');
const HOUR = 3600_000;
const base = { reference: 'FAC-1', expiresAt: new Date(NOW.getTime() + HOUR), methods: ['BREB_QR'] };

type Facts = Parameters<typeof decideMatch>[0];
const cobro = (over: Partial<Facts> = {}): Facts => ({
  state: 'OPEN',
  amountType: 'FIXED',
  amount: 100_000n,
  minAmount: null,
  maxAmount: null,
  paidAmount: 0n,
  expiresAt: new Date(NOW.getTime() + HOUR),
  overpaymentPolicy: 'accept',
  ...over,
});

describe('cobro ids and documents', () => {
  it('draws distinct ids and transaction ids that fit the QR', () => {
    const ids = new Set(Array.from({ length: 300 }, newCobroId));
    expect(ids.size).toBe(300);
    for (const id of ids) expect(isCobroId(id)).toBe(true);
    for (let i = 0; i < 50; i++) expect(newTransactionId()).toMatch(/^CB[A-Z0-9]{20}$/);
  });
  it('compares documents by their letters and digits, without a type prefix', () => {
    expect(documentKey('CC 79.123.456')).toBe('79123456');
    expect(documentKey('79123456')).toBe('79123456');
    expect(documentKey('NIT 900.123.456-7')).toBe('9001234567');
    expect(documentKey('')).toBeNull();
    expect(documentKey(null)).toBeNull();
  });
});

describe('validateCreateCobro', () => {
  it('reads the amount kind from what is given', () => {
    expect(validateCreateCobro({ ...base, amountCents: 5_000n }, NOW)).toMatchObject({ amountType: 'FIXED', amount: 5_000n });
    expect(validateCreateCobro({ ...base, minAmountCents: 100n, maxAmountCents: 200n }, NOW)).toMatchObject({
      amountType: 'RANGE',
      minAmount: 100n,
      maxAmount: 200n,
    });
    expect(validateCreateCobro(base, NOW)).toMatchObject({ amountType: 'OPEN', amount: null, overpaymentPolicy: 'accept' });
  });
  it('defaults the expiry to 24 hours', () => {
    expect(validateCreateCobro({ ...base, expiresAt: undefined }, NOW).expiresAt).toEqual(new Date(NOW.getTime() + 24 * HOUR));
  });
  it('names every problem at once', () => {
    let err: unknown;
    try {
      validateCreateCobro(
        {
          reference: '-bad',
          amountCents: 5n,
          minAmountCents: 1n,
          expiresAt: new Date(NOW.getTime() + 1000),
          methods: [],
          overpaymentPolicy: 'refund',
          expectedPayer: {},
          metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
        },
        NOW,
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    const paths = ((err as AppError).details as { fields: Array<{ path: string }> }).fields.map((f) => f.path).sort();
    expect([...new Set(paths)]).toEqual(['amountCents', 'expectedPayer', 'expiresAt', 'metadata', 'methods', 'overpaymentPolicy', 'reference']);
  });
  it('refuses a range upside down and an expiry past a year', () => {
    expect(() => validateCreateCobro({ ...base, minAmountCents: 300n, maxAmountCents: 200n }, NOW)).toThrow(AppError);
    expect(() => validateCreateCobro({ ...base, expiresAt: new Date(NOW.getTime() + 367 * 24 * HOUR) }, NOW)).toThrow(AppError);
  });
  it('fingerprints a request: the same request again is equal, any change is not', () => {
    const a = requestFingerprint(validateCreateCobro({ ...base, amountCents: 5_000n, methods: ['BREB_QR', 'BREB_KEY'] }, NOW));
    expect(requestFingerprint(validateCreateCobro({ ...base, amountCents: 5_000n, methods: ['BREB_KEY', 'BREB_QR'] }, NOW))).toBe(a);
    expect(requestFingerprint(validateCreateCobro({ ...base, amountCents: 5_001n, methods: ['BREB_QR', 'BREB_KEY'] }, NOW))).not.toBe(a);
  });
});

describe('decideMatch', () => {
  const inTime = { receivedAt: NOW };
  it('counts toward a fixed amount: partial, then paid; beyond it by the policy', () => {
    expect(decideMatch(cobro(), { ...inTime, amount: 40_000n })).toEqual({
      kind: 'match',
      disposition: 'COUNTED',
      event: 'partially_paid',
      paidAmount: 40_000n,
      returnCents: 0n,
    });
    expect(decideMatch(cobro({ state: 'PARTIALLY_PAID', paidAmount: 40_000n }), { ...inTime, amount: 60_000n })).toEqual({
      kind: 'match',
      disposition: 'COUNTED',
      event: 'paid',
      paidAmount: 100_000n,
      returnCents: 0n,
    });
    expect(decideMatch(cobro({ overpaymentPolicy: 'hold_for_review', paidAmount: 0n }), { ...inTime, amount: 120_000n })).toMatchObject({
      disposition: 'HELD_FOR_REVIEW',
      event: null,
      paidAmount: 0n,
    });
    expect(decideMatch(cobro({ state: 'PAID', paidAmount: 100_000n }), { ...inTime, amount: 1n })).toMatchObject({ disposition: 'EXCESS', event: null });
  });
  it('the policy return counts up to the amount and returns the rest; a payment to a PAID cobro is returned whole', () => {
    expect(decideMatch(cobro({ overpaymentPolicy: 'return', state: 'PARTIALLY_PAID', paidAmount: 70_000n }), { ...inTime, amount: 50_000n })).toEqual({
      kind: 'match',
      disposition: 'COUNTED',
      event: 'paid',
      paidAmount: 100_000n,
      returnCents: 20_000n,
    });
    expect(decideMatch(cobro({ overpaymentPolicy: 'return', state: 'PAID', paidAmount: 100_000n }), { ...inTime, amount: 7_000n })).toEqual({
      kind: 'match',
      disposition: 'RETURNED',
      event: null,
      paidAmount: 100_000n,
      returnCents: 7_000n,
    });
    // Within the amount nothing goes back; an open amount has no "beyond".
    expect(decideMatch(cobro({ overpaymentPolicy: 'return' }), { ...inTime, amount: 100_000n })).toMatchObject({ returnCents: 0n, event: 'paid' });
    expect(decideMatch(cobro({ overpaymentPolicy: 'return', amountType: 'OPEN', amount: null }), { ...inTime, amount: 9_999_999n })).toMatchObject({
      returnCents: 0n,
    });
    const range = cobro({ overpaymentPolicy: 'return', amountType: 'RANGE', amount: null, minAmount: 1_000n, maxAmount: 2_000n });
    expect(decideMatch(range, { ...inTime, amount: 2_500n })).toMatchObject({ paidAmount: 2_000n, returnCents: 500n, event: 'paid' });
  });
  it("a company's amount tolerance: short of the amount by at most it completes the cobro; above it by at most it is no overpayment", () => {
    const t = cobroTolerance({ cents: 500n, bps: 100 }, cobro());
    expect(t).toEqual({ below: 1_000n, above: 1_000n }); // 1 % of 100,000 beats 500
    const c = cobro({ overpaymentPolicy: 'return', toleranceBelow: t.below, toleranceAbove: t.above });
    expect(decideMatch(c, { ...inTime, amount: 99_000n })).toMatchObject({ event: 'paid', paidAmount: 99_000n });
    expect(decideMatch(c, { ...inTime, amount: 98_999n })).toMatchObject({ event: 'partially_paid' });
    expect(decideMatch(c, { ...inTime, amount: 101_000n })).toMatchObject({ event: 'paid', paidAmount: 101_000n, returnCents: 0n });
    expect(decideMatch(c, { ...inTime, amount: 101_001n })).toMatchObject({ event: 'paid', paidAmount: 100_000n, returnCents: 1_001n });
    // Never all of what is due; nothing for an open amount; a range's below on its minimum, above on its maximum.
    expect(cobroTolerance({ cents: 5_000n, bps: 0 }, cobro({ amount: 3_000n }))).toEqual({ below: 2_999n, above: 5_000n });
    expect(cobroTolerance({ cents: 5_000n, bps: 0 }, cobro({ amountType: 'OPEN', amount: null }))).toEqual({ below: 0n, above: 0n });
    expect(cobroTolerance({ cents: 0n, bps: 1000 }, cobro({ amountType: 'RANGE', amount: null, minAmount: 10_000n, maxAmount: 50_000n }))).toEqual({
      below: 1_000n,
      above: 5_000n,
    });
    expect(validateTolerance({ amountToleranceCents: 0n, amountToleranceBps: 1000 })).toEqual({ cents: 0n, bps: 1000 });
    expect(() => validateTolerance({ amountToleranceCents: -1n, amountToleranceBps: 1001 })).toThrow(AppError);
  });
  it('never counts a payment received after expiresAt, nor one for a closed cobro', () => {
    expect(decideMatch(cobro(), { amount: 1n, receivedAt: new Date(NOW.getTime() + 2 * HOUR) })).toEqual({ kind: 'unmatched', reason: 'COBRO_EXPIRED' });
    expect(decideMatch(cobro({ state: 'EXPIRED' }), { ...inTime, amount: 1n })).toEqual({ kind: 'unmatched', reason: 'COBRO_EXPIRED' });
    expect(decideMatch(cobro({ state: 'CANCELLED' }), { ...inTime, amount: 1n })).toEqual({ kind: 'unmatched', reason: 'COBRO_CANCELLED' });
  });
  it('a range is paid from its minimum; an open amount by its first payment', () => {
    const range = cobro({ amountType: 'RANGE', amount: null, minAmount: 1_000n, maxAmount: 2_000n });
    expect(bounds(range)).toEqual({ due: 1_000n, max: 2_000n });
    expect(decideMatch(range, { ...inTime, amount: 999n })).toMatchObject({ event: 'partially_paid' });
    expect(decideMatch(range, { ...inTime, amount: 1_500n })).toMatchObject({ event: 'paid' });
    expect(decideMatch(cobro({ amountType: 'OPEN', amount: null }), { ...inTime, amount: 1n })).toMatchObject({ event: 'paid', paidAmount: 1n });
  });

  it('any sequence of payments: the total counted is the sum of the COUNTED ones, PAID exactly when it reaches what is due', () => {
    const kinds = fc.constantFrom<CobroRecord['amountType']>('FIXED', 'RANGE', 'OPEN');
    fc.assert(
      fc.property(
        kinds,
        fc.constantFrom<CobroRecord['overpaymentPolicy']>('accept', 'hold_for_review', 'return'),
        fc.array(fc.bigInt({ min: 1n, max: 150_000n }), { maxLength: 8 }),
        (kind, policy, amounts) => {
          let c = cobro({
            amountType: kind,
            overpaymentPolicy: policy,
            ...(kind === 'RANGE' ? { amount: null, minAmount: 50_000n, maxAmount: 120_000n } : {}),
            ...(kind === 'OPEN' ? { amount: null } : {}),
          });
          let counted = 0n;
          for (const a of amounts) {
            const d = decideMatch(c, { amount: a, receivedAt: NOW });
            if (d.kind !== 'match') throw new Error('an open cobro in time always matches');
            // What is returned automatically is never counted; nothing goes back but under `return`.
            if (d.disposition === 'COUNTED') counted += a - d.returnCents;
            if (policy !== 'return') expect(d.returnCents).toBe(0n);
            expect(d.returnCents >= 0n && d.returnCents <= a).toBe(true);
            expect(d.paidAmount).toBe(counted);
            const { due, max } = bounds(c);
            if (policy !== 'accept' && max !== null) expect(counted <= max).toBe(true);
            const state = d.event === 'paid' ? 'PAID' : d.event === 'partially_paid' ? 'PARTIALLY_PAID' : c.state;
            expect(state === 'PAID').toBe(c.state === 'PAID' || due === null || counted >= due);
            c = { ...c, state, paidAmount: d.paidAmount };
          }
        },
      ),
    );
  });
});

describe('decideReversal', () => {
  const later = new Date(NOW.getTime() + 2 * HOUR);
  it('a PAID cobro whose counted payment is reversed before its expiry goes back to what is left: OPEN, PARTIALLY_PAID, or still PAID', () => {
    const paid = cobro({ state: 'PAID', paidAmount: 100_000n });
    expect(decideReversal(paid, 100_000n, [], NOW)).toEqual({ paidAmount: 0n, promote: 0, event: 'reversed_to_open' });
    expect(decideReversal(paid, 60_000n, [], NOW)).toEqual({ paidAmount: 40_000n, promote: 0, event: 'reversed_to_partial' });
    // A payment beyond the amount counted (policy accept, before it was PAID): what is left still completes it.
    expect(decideReversal(cobro({ state: 'PAID', paidAmount: 130_000n }), 30_000n, [], NOW)).toEqual({
      paidAmount: 100_000n,
      promote: 0,
      event: 'reversed_still_paid',
    });
    // Within the tolerance it was made with: still PAID.
    expect(decideReversal(cobro({ state: 'PAID', paidAmount: 100_000n, toleranceBelow: 1_000n }), 1_000n, [], NOW)).toMatchObject({
      event: 'reversed_still_paid',
    });
    expect(decideReversal(cobro({ state: 'PARTIALLY_PAID', paidAmount: 70_000n }), 30_000n, [], NOW)).toMatchObject({
      paidAmount: 40_000n,
      event: 'reversed_to_partial',
    });
    expect(decideReversal(cobro({ state: 'PARTIALLY_PAID', paidAmount: 30_000n }), 30_000n, [], NOW)).toMatchObject({
      paidAmount: 0n,
      event: 'reversed_to_open',
    });
    // An open amount: paid by any payment, open again when none is left.
    const open = cobro({ amountType: 'OPEN', amount: null, state: 'PAID', paidAmount: 5_000n });
    expect(decideReversal(open, 5_000n, [], NOW)).toMatchObject({ paidAmount: 0n, event: 'reversed_to_open' });
  });
  it('the payments accepted beyond a PAID cobro count again, in their order, while it is short', () => {
    const paid = cobro({ state: 'PAID', paidAmount: 100_000n });
    expect(decideReversal(paid, 100_000n, [30_000n, 80_000n, 5_000n], NOW)).toEqual({ paidAmount: 110_000n, promote: 2, event: 'reversed_still_paid' });
    expect(decideReversal(paid, 100_000n, [30_000n], NOW)).toEqual({ paidAmount: 30_000n, promote: 1, event: 'reversed_to_partial' });
    expect(decideReversal(paid, 40_000n, [100_000n], later)).toEqual({ paidAmount: 160_000n, promote: 1, event: 'reversed_still_paid' });
  });
  it('a PAID cobro past its expiry that the reversal leaves short is EXPIRED; an open one is left to the sweeper; a closed one keeps its state', () => {
    expect(decideReversal(cobro({ state: 'PAID', paidAmount: 100_000n }), 100_000n, [], later)).toMatchObject({ paidAmount: 0n, event: 'reversed_to_expired' });
    expect(decideReversal(cobro({ state: 'PAID', paidAmount: 130_000n }), 30_000n, [], later)).toMatchObject({ event: 'reversed_still_paid' });
    expect(decideReversal(cobro({ state: 'PARTIALLY_PAID', paidAmount: 70_000n }), 30_000n, [], later)).toMatchObject({ event: 'reversed_to_partial' });
    for (const state of ['EXPIRED', 'CANCELLED'] as const)
      expect(decideReversal(cobro({ state, paidAmount: 70_000n }), 30_000n, [1n], NOW)).toEqual({ paidAmount: 40_000n, promote: 0, event: null });
  });
  it('payments and reversals in any order: the cobro ends as if the reversed payments had never been paid (policy accept, before the expiry)', () => {
    const scenario = fc.record({
      amounts: fc.array(fc.bigInt({ min: 1n, max: 80_000n }), { minLength: 1, maxLength: 6 }),
      reversed: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
      // Where each reversal happens: after that many payments (never before its own).
      at: fc.array(fc.nat(6), { minLength: 6, maxLength: 6 }),
    });
    const to = { reversed_to_open: 'OPEN', reversed_to_partial: 'PARTIALLY_PAID', reversed_still_paid: 'PAID', reversed_to_expired: 'EXPIRED' } as const;
    fc.assert(
      fc.property(scenario, ({ amounts, reversed, at }) => {
        type P = { amount: bigint; disposition: string | null; reversed: boolean };
        let c = cobro();
        const ps: P[] = [];
        const reverse = (i: number) => {
          const p = ps[i]!;
          const counted = p.disposition === 'COUNTED' ? p.amount : 0n;
          p.reversed = true;
          if (p.disposition !== 'COUNTED') return;
          const excess = ps.filter((x) => x.disposition === 'EXCESS' && !x.reversed);
          const r = decideReversal(
            c,
            counted,
            excess.map((x) => x.amount),
            NOW,
          );
          for (const x of excess.slice(0, r.promote)) x.disposition = 'COUNTED';
          c = { ...c, state: r.event ? to[r.event] : c.state, paidAmount: r.paidAmount };
        };
        for (const [n, a] of amounts.entries()) {
          for (const [i, when] of at.entries()) if (reversed[i] && i < n && when === n) reverse(i);
          const d = decideMatch(c, { amount: a, receivedAt: NOW });
          if (d.kind !== 'match') throw new Error('in time');
          ps.push({ amount: a, disposition: d.disposition, reversed: false });
          c = { ...c, state: d.event === 'paid' ? 'PAID' : d.event === 'partially_paid' ? 'PARTIALLY_PAID' : c.state, paidAmount: d.paidAmount };
        }
        for (const [i, r] of reversed.entries()) if (r && i < ps.length && !ps[i]!.reversed) reverse(i);
        // The same payments, the reversed ones never made.
        let alone = cobro();
        for (const p of ps.filter((x) => !x.reversed)) {
          const d = decideMatch(alone, { amount: p.amount, receivedAt: NOW });
          if (d.kind !== 'match') throw new Error('in time');
          alone = { ...alone, state: d.event === 'paid' ? 'PAID' : d.event === 'partially_paid' ? 'PARTIALLY_PAID' : alone.state, paidAmount: d.paidAmount };
        }
        expect([c.state, c.paidAmount]).toEqual([alone.state, alone.paidAmount]);
      }),
    );
  });
});
