import fc from 'fast-check';
import { PolicyDocumentSchema } from '@wallet/platform';
import { CompiledPolicy, bogotaClock, isColombianHoliday, policyOf, thresholdDecision, type PolicyDocumentJson, type PolicyFacts } from './approval-policy.js';

/** Bogotá is UTC−05:00: 15:00 Bogotá is 20:00 UTC. */
const bogota = (isoLocal: string) => new Date(`${isoLocal}-05:00`);

const facts = (o: Partial<PolicyFacts> = {}): PolicyFacts => ({
  amount: 10_000_00n,
  rail: 'BREB',
  counterparty: null,
  at: bogota('2026-11-25T10:00:00'), // a Wednesday, not a holiday
  firstPayment: false,
  cumulativeToday: 10_000_00n,
  ...o,
});

const compile = (json: PolicyDocumentJson, version = 7) => new CompiledPolicy(version, policyOf(PolicyDocumentSchema.parse(json) as PolicyDocumentJson));
const ALLOW = { action: 'ALLOW' } as const;
const two = { action: 'REQUIRE_APPROVALS', approvals: 2 } as const;

describe('approval policy: each condition decides as written', () => {
  const one = (when: PolicyDocumentJson['rules'][number]['when']) =>
    compile({ rules: [{ id: 'r', when, then: { action: 'REFUSE', code: 'NOT_NOW' } }], otherwise: ALLOW });
  const refused = (when: PolicyDocumentJson['rules'][number]['when'], f: Partial<PolicyFacts>) => one(when).decide(facts(f)).action === 'REFUSE';

  it('amount at or above, below (the bound itself: at-or-above holds, below does not)', () => {
    expect(refused({ amountAtLeastCents: 50_000_000_00 }, { amount: 50_000_000_00n })).toBe(true);
    expect(refused({ amountAtLeastCents: 50_000_000_00 }, { amount: 49_999_999_99n })).toBe(false);
    expect(refused({ amountBelowCents: 5_000_000_00 }, { amount: 4_999_999_99n })).toBe(true);
    expect(refused({ amountBelowCents: 5_000_000_00 }, { amount: 5_000_000_00n })).toBe(false);
    expect(refused({ amountAtLeastCents: 100, amountBelowCents: 200 }, { amount: 150n })).toBe(true);
  });

  it('rail', () => {
    expect(refused({ rails: ['ACH'] }, { rail: 'ACH' })).toBe(true);
    expect(refused({ rails: ['ACH'] }, { rail: 'BREB' })).toBe(false);
  });

  it('counterparty verified, and tags (a send naming no counterparty is neither verified nor tagged)', () => {
    const employee = { verified: true, tags: ['employee', 'bogota'] };
    expect(refused({ counterpartyVerified: true }, { counterparty: employee })).toBe(true);
    expect(refused({ counterpartyVerified: true }, { counterparty: { verified: false, tags: [] } })).toBe(false);
    expect(refused({ counterpartyVerified: true }, { counterparty: null })).toBe(false);
    expect(refused({ counterpartyVerified: false }, { counterparty: null })).toBe(true);
    expect(refused({ counterpartyTags: ['supplier', 'employee'] }, { counterparty: employee })).toBe(true);
    expect(refused({ counterpartyTags: ['supplier'] }, { counterparty: employee })).toBe(false);
    expect(refused({ counterpartyTags: ['employee'] }, { counterparty: null })).toBe(false);
  });

  it('first payment to this payee', () => {
    expect(refused({ firstPayment: true }, { firstPayment: true })).toBe(true);
    expect(refused({ firstPayment: true }, { firstPayment: false })).toBe(false);
    expect(refused({ firstPayment: false }, { firstPayment: false })).toBe(true);
  });

  it('time of day in Bogotá, [from, to), wrapping past midnight', () => {
    const night = { timeOfDay: { from: '20:00', to: '06:00' } };
    expect(refused(night, { at: bogota('2026-11-25T20:00:00') })).toBe(true);
    expect(refused(night, { at: bogota('2026-11-25T23:59:00') })).toBe(true);
    expect(refused(night, { at: bogota('2026-11-26T05:59:00') })).toBe(true);
    expect(refused(night, { at: bogota('2026-11-26T06:00:00') })).toBe(false);
    expect(refused(night, { at: bogota('2026-11-25T19:59:00') })).toBe(false);
    const office = { timeOfDay: { from: '08:00', to: '17:30' } };
    expect(refused(office, { at: bogota('2026-11-25T17:29:00') })).toBe(true);
    expect(refused(office, { at: bogota('2026-11-25T17:30:00') })).toBe(false);
    // 01:00 UTC on the 26th is still the 25th at 20:00 in Bogotá.
    expect(refused(night, { at: new Date('2026-11-26T01:00:00Z') })).toBe(true);
  });

  it('day of week in Bogotá (not UTC)', () => {
    expect(refused({ daysOfWeek: ['SAT', 'SUN'] }, { at: bogota('2026-11-28T10:00:00') })).toBe(true);
    expect(refused({ daysOfWeek: ['SAT', 'SUN'] }, { at: bogota('2026-11-27T23:30:00') })).toBe(false); // Friday night, Saturday in UTC
    expect(refused({ daysOfWeek: ['MON'] }, { at: bogota('2026-11-30T00:00:00') })).toBe(true);
  });

  it('Colombian holidays as observed (Ley Emiliani): 8 December, and 6 January moved to Monday the 12th in 2026', () => {
    expect(isColombianHoliday('2026-12-08')).toBe(true);
    expect(isColombianHoliday('2026-01-12')).toBe(true);
    expect(isColombianHoliday('2026-01-06')).toBe(false);
    expect(isColombianHoliday('2026-11-25')).toBe(false);
    expect(refused({ holiday: true }, { at: bogota('2026-12-08T09:00:00') })).toBe(true);
    expect(refused({ holiday: true }, { at: bogota('2026-12-09T09:00:00') })).toBe(false);
    expect(refused({ holiday: false }, { at: bogota('2026-12-08T09:00:00') })).toBe(false);
    // The night before a holiday in UTC is still the day before in Bogotá.
    expect(refused({ holiday: true }, { at: new Date('2026-12-08T03:00:00Z') })).toBe(false);
  });

  it('cumulative amount sent today, this payment included', () => {
    expect(refused({ cumulativeTodayAtLeastCents: 100_000_000_00 }, { cumulativeToday: 100_000_000_00n })).toBe(true);
    expect(refused({ cumulativeTodayAtLeastCents: 100_000_000_00 }, { cumulativeToday: 99_999_999_99n })).toBe(false);
  });

  it('every condition of a rule must hold; a rule without conditions matches every payment', () => {
    const when = { amountAtLeastCents: 100, rails: ['ACH' as const], daysOfWeek: ['WED' as const] };
    expect(refused(when, { amount: 100n, rail: 'ACH' })).toBe(true);
    expect(refused(when, { amount: 100n, rail: 'BREB' })).toBe(false);
    expect(refused(when, { amount: 99n, rail: 'ACH' })).toBe(false);
    expect(refused({}, {})).toBe(true);
  });
});

describe('approval policy: the first matching rule decides', () => {
  // The issue's finance team: none for payroll to verified employees under 5 million, nothing after
  // 8 p.m., three above 500 million, two above 50 million, always two for a payee never paid.
  const finance = compile({
    rules: [
      {
        id: 'after-hours',
        when: { timeOfDay: { from: '20:00', to: '06:00' } },
        then: { action: 'REFUSE', code: 'OUTSIDE_HOURS', message: 'Nada después de las 8 p. m.' },
      },
      { id: 'payroll', when: { counterpartyTags: ['employee'], counterpartyVerified: true, amountBelowCents: 5_000_000_00 }, then: ALLOW },
      { id: 'huge', when: { amountAtLeastCents: 500_000_000_00 }, then: { action: 'REQUIRE_APPROVALS', approvals: 3, roles: ['ADMIN'] } },
      { id: 'big', when: { amountAtLeastCents: 50_000_000_00 }, then: two },
      { id: 'new-payee', when: { firstPayment: true }, then: two },
    ],
    otherwise: ALLOW,
  });

  it('decides each payment by the first rule that matches, and records the version and rule', () => {
    const employee = { verified: true, tags: ['employee'] };
    expect(finance.decide(facts({ at: bogota('2026-11-25T21:00:00'), counterparty: employee, amount: 100n }))).toEqual({
      policyVersion: 7,
      ruleId: 'after-hours',
      action: 'REFUSE',
      approvals: 0,
      roles: [],
      code: 'OUTSIDE_HOURS',
      message: 'Nada después de las 8 p. m.',
    });
    expect(finance.decide(facts({ counterparty: employee, amount: 4_000_000_00n, firstPayment: true })).ruleId).toBe('payroll');
    expect(finance.decide(facts({ counterparty: { verified: false, tags: ['employee'] }, amount: 4_000_000_00n, firstPayment: true })).ruleId).toBe(
      'new-payee',
    );
    expect(finance.decide(facts({ amount: 600_000_000_00n }))).toMatchObject({ ruleId: 'huge', action: 'REQUIRE_APPROVALS', approvals: 3, roles: ['ADMIN'] });
    expect(finance.decide(facts({ amount: 60_000_000_00n }))).toMatchObject({ ruleId: 'big', approvals: 2, roles: ['ADMIN', 'OPERATOR'] });
    expect(finance.decide(facts({ amount: 1_000_00n, firstPayment: false }))).toMatchObject({ ruleId: null, action: 'ALLOW', approvals: 0 });
  });

  it('names the reads it needs (a policy without them costs no query)', () => {
    expect([...finance.needs]).toEqual(['firstPayment']);
    expect([...compile({ rules: [{ id: 'a', when: { cumulativeTodayAtLeastCents: 5 }, then: two }], otherwise: ALLOW }).needs]).toEqual(['cumulativeToday']);
    expect(compile({ rules: [{ id: 'a', when: { rails: ['ACH'] }, then: two }], otherwise: ALLOW }).needs.size).toBe(0);
  });

  it('without a policy, the multi-signature threshold decides (version 0)', () => {
    expect(thresholdDecision(0)).toMatchObject({ policyVersion: 0, ruleId: null, action: 'ALLOW' });
    expect(thresholdDecision(1)).toMatchObject({ action: 'ALLOW' });
    expect(thresholdDecision(3)).toMatchObject({ action: 'REQUIRE_APPROVALS', approvals: 3, roles: ['ADMIN', 'OPERATOR'] });
  });

  it('property: the deciding rule matches alone and no earlier rule does', () => {
    const cents = fc.integer({ min: 1, max: 1_000_000 });
    const rule = fc.record(
      {
        amountAtLeastCents: cents,
        rails: fc.constantFrom<Array<'BREB' | 'ACH'>>(['BREB'], ['ACH'], ['BREB', 'ACH']),
        counterpartyVerified: fc.boolean(),
        firstPayment: fc.boolean(),
        daysOfWeek: fc.subarray(['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const, { minLength: 1 }),
        cumulativeTodayAtLeastCents: cents,
      },
      { requiredKeys: [] },
    );
    const payment = fc.record({
      amount: fc.bigInt({ min: 1n, max: 1_000_000n }),
      rail: fc.constantFrom<'BREB' | 'ACH'>('BREB', 'ACH'),
      counterparty: fc.option(fc.record({ verified: fc.boolean(), tags: fc.constant([] as string[]) }), { nil: null }),
      at: fc.date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2027-12-31T00:00:00Z'), noInvalidDate: true }),
      firstPayment: fc.boolean(),
      cumulativeToday: fc.bigInt({ min: 1n, max: 2_000_000n }),
    });
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 8 }), payment, (whens, f) => {
        const doc: PolicyDocumentJson = { rules: whens.map((when, i) => ({ id: `r${i}`, when, then: two })), otherwise: ALLOW };
        const d = compile(doc).decide(f);
        const alone = (i: number) => compile({ rules: [doc.rules[i]!], otherwise: ALLOW }).decide(f).ruleId === `r${i}`;
        const idx = d.ruleId === null ? doc.rules.length : Number(d.ruleId.slice(1));
        for (let i = 0; i < idx; i++) expect(alone(i)).toBe(false);
        if (d.ruleId !== null) expect(alone(idx)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('reads Bogotá wall time from an instant', () => {
    expect(bogotaClock(new Date('2026-11-26T01:30:00Z'))).toEqual({ minute: 20 * 60 + 30, weekday: 'WED', date: '2026-11-25' });
  });
});

describe('approval policy document (the schema the gateway serves and the service checks)', () => {
  const bad = (doc: unknown) => PolicyDocumentSchema.safeParse(doc).error?.issues.map((i) => i.path.join('.'));

  it('refuses what it cannot decide with, naming each problem', () => {
    expect(bad({ rules: [], otherwise: { action: 'MAYBE' } })).toEqual(['otherwise.action']);
    expect(
      bad({
        rules: [
          { id: 'a', when: {}, then: ALLOW },
          { id: 'a', when: {}, then: ALLOW },
        ],
        otherwise: ALLOW,
      }),
    ).toEqual(['rules.1.id']);
    expect(bad({ rules: [{ id: 'A b', when: { colour: 'red' }, then: ALLOW }], otherwise: ALLOW })).toEqual(['rules.0.id', 'rules.0.when']);
    expect(bad({ rules: [{ id: 'a', when: { amountAtLeastCents: 10, amountBelowCents: 10 }, then: ALLOW }], otherwise: ALLOW })).toEqual([
      'rules.0.when.amountBelowCents',
    ]);
    expect(bad({ rules: [{ id: 'a', when: { timeOfDay: { from: '24:00', to: '8:00' } }, then: ALLOW }], otherwise: ALLOW })).toEqual([
      'rules.0.when.timeOfDay.from',
      'rules.0.when.timeOfDay.to',
    ]);
    expect(bad({ rules: [{ id: 'a', when: { amountAtLeastCents: 1.5 }, then: { action: 'REQUIRE_APPROVALS', approvals: 11 } }], otherwise: ALLOW })).toEqual([
      'rules.0.when.amountAtLeastCents',
      'rules.0.then.approvals',
    ]);
    expect(bad({ rules: [{ id: 'a', when: {}, then: { action: 'REFUSE', code: 'lower' } }], otherwise: ALLOW })).toEqual(['rules.0.then.code']);
    expect(bad({ rules: Array.from({ length: 101 }, (_, i) => ({ id: `r${i}`, when: {}, then: ALLOW })), otherwise: ALLOW })).toEqual(['rules']);
    expect(bad({ rules: [] })).toEqual(['otherwise']);
  });
});
