import { WEEKDAYS, bogotaClock, isColombianHoliday, type Weekday } from '@wallet/platform';
import type { Rail } from './rails.js';

export { WEEKDAYS, bogotaClock, isColombianHoliday, type Weekday };

/**
 * A company's approval policy (docs/policies.md): an ordered list of rules, each with conditions and
 * an outcome; the first rule whose conditions all hold decides, and `otherwise` decides when none
 * does. A policy is immutable once proposed: a change is a new version (persistence/policy.store.ts).
 *
 * Evaluation is pure and synchronous over the facts of one payment (`PolicyFacts`); the facts that
 * cost a read (first payment to this payee, the amount sent today) are fetched only when some rule
 * asks for them (`needs`), before evaluation.
 */

export const POLICY_ACTIONS = ['ALLOW', 'REQUIRE_APPROVALS', 'REFUSE'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];
export const APPROVER_ROLES = ['ADMIN', 'OPERATOR'] as const;
export type ApproverRole = (typeof APPROVER_ROLES)[number];

export const MAX_RULES = 100;
export const MAX_APPROVALS = 10;
/** The largest amount a condition may name (a bigint column; far above any rail's cap). */
export const MAX_POLICY_CENTS = 10n ** 15n;

export type PolicyOutcome =
  { action: 'ALLOW' } | { action: 'REQUIRE_APPROVALS'; approvals: number; roles: ApproverRole[] } | { action: 'REFUSE'; code: string; message: string | null };

/** Every condition present must hold; an absent one holds for any payment. */
export interface PolicyConditions {
  /** The payment's gross amount is at least this (cents). */
  amountAtLeastCents?: bigint;
  /** The payment's gross amount is below this (cents). */
  amountBelowCents?: bigint;
  rails?: Rail[];
  /** Paid to a named counterparty whose verification is VERIFIED (true) or to anything else (false). */
  counterpartyVerified?: boolean;
  /** Paid to a counterparty carrying at least one of these tags. */
  counterpartyTags?: string[];
  /** No payment of the company to this destination has completed yet (true), or one has (false). */
  firstPayment?: boolean;
  /** Bogotá wall time in [from, to), "HH:MM"; from > to wraps past midnight (20:00–06:00). */
  timeOfDay?: { from: string; to: string };
  /** Bogotá day of the week. */
  daysOfWeek?: Weekday[];
  /** On a Colombian public holiday (true) or on any other day (false). */
  holiday?: boolean;
  /** The company's amount sent today in Bogotá, this payment included, is at least this (cents). */
  cumulativeTodayAtLeastCents?: bigint;
}

export interface PolicyRule {
  /** Unique in the policy: `[a-z0-9_-]{1,40}`; recorded with every payment it decides. */
  id: string;
  description: string | null;
  when: PolicyConditions;
  then: PolicyOutcome;
}

export interface PolicyDocument {
  rules: PolicyRule[];
  /** What decides when no rule matches. */
  otherwise: PolicyOutcome;
}

/** A fact that costs a read; fetched only when a rule of the policy names it. */
export type PolicyNeed = 'firstPayment' | 'cumulativeToday';

export interface PolicyFacts {
  amount: bigint;
  rail: Rail;
  /** The named counterparty, if the payment named one. */
  counterparty: { verified: boolean; tags: readonly string[] } | null;
  at: Date;
  /** Present when the policy needs it. */
  firstPayment?: boolean;
  /** Present when the policy needs it: the day's amount before this payment plus this payment. */
  cumulativeToday?: bigint;
}

/** What a policy decided for one payment: recorded with the transfer (or the batch line) and shown. */
export interface PolicyDecision {
  policyVersion: number;
  /** The rule that decided; null when none matched (`otherwise`). */
  ruleId: string | null;
  action: PolicyAction;
  /** REQUIRE_APPROVALS: how many signatures, from which roles. 0 and [] otherwise. */
  approvals: number;
  roles: ApproverRole[];
  /** REFUSE: the company's code and message. */
  code: string | null;
  message: string | null;
}

const minuteOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

type Check = (f: PolicyFacts, clock: () => ReturnType<typeof bogotaClock>) => boolean;

/** One rule as a list of cheap checks, built once per policy version. */
function compileConditions(w: PolicyConditions): Check[] {
  const checks: Check[] = [];
  if (w.amountAtLeastCents !== undefined) {
    const min = w.amountAtLeastCents;
    checks.push((f) => f.amount >= min);
  }
  if (w.amountBelowCents !== undefined) {
    const max = w.amountBelowCents;
    checks.push((f) => f.amount < max);
  }
  if (w.rails) {
    const rails = new Set(w.rails);
    checks.push((f) => rails.has(f.rail));
  }
  if (w.counterpartyVerified !== undefined) {
    const want = w.counterpartyVerified;
    checks.push((f) => (f.counterparty?.verified === true) === want);
  }
  if (w.counterpartyTags) {
    const tags = new Set(w.counterpartyTags);
    checks.push((f) => f.counterparty !== null && f.counterparty.tags.some((t) => tags.has(t)));
  }
  if (w.firstPayment !== undefined) {
    const want = w.firstPayment;
    checks.push((f) => {
      if (f.firstPayment === undefined) throw new Error('policy evaluated without the firstPayment fact');
      return f.firstPayment === want;
    });
  }
  if (w.timeOfDay) {
    const from = minuteOf(w.timeOfDay.from);
    const to = minuteOf(w.timeOfDay.to);
    checks.push((_f, clock) => {
      const m = clock().minute;
      return from <= to ? m >= from && m < to : m >= from || m < to;
    });
  }
  if (w.daysOfWeek) {
    const days = new Set(w.daysOfWeek);
    checks.push((_f, clock) => days.has(clock().weekday));
  }
  if (w.holiday !== undefined) {
    const want = w.holiday;
    checks.push((_f, clock) => isColombianHoliday(clock().date) === want);
  }
  if (w.cumulativeTodayAtLeastCents !== undefined) {
    const min = w.cumulativeTodayAtLeastCents;
    checks.push((f) => {
      if (f.cumulativeToday === undefined) throw new Error('policy evaluated without the cumulativeToday fact');
      return f.cumulativeToday >= min;
    });
  }
  return checks;
}

/** A policy version ready to decide: its rules compiled once, the reads it needs listed. */
export class CompiledPolicy {
  readonly needs: ReadonlySet<PolicyNeed>;
  private readonly rules: Array<{ rule: PolicyRule; checks: Check[] }>;

  constructor(
    readonly version: number,
    readonly document: PolicyDocument,
  ) {
    this.rules = document.rules.map((rule) => ({ rule, checks: compileConditions(rule.when) }));
    const needs = new Set<PolicyNeed>();
    for (const r of document.rules) {
      if (r.when.firstPayment !== undefined) needs.add('firstPayment');
      if (r.when.cumulativeTodayAtLeastCents !== undefined) needs.add('cumulativeToday');
    }
    this.needs = needs;
  }

  /** The first rule whose every condition holds decides; `otherwise` when none does. */
  decide(facts: PolicyFacts): PolicyDecision {
    let clock: ReturnType<typeof bogotaClock> | undefined;
    const clockOf = () => (clock ??= bogotaClock(facts.at));
    for (const { rule, checks } of this.rules) {
      if (checks.every((c) => c(facts, clockOf))) return decisionOf(this.version, rule.id, rule.then);
    }
    return decisionOf(this.version, null, this.document.otherwise);
  }
}

function decisionOf(policyVersion: number, ruleId: string | null, o: PolicyOutcome): PolicyDecision {
  return {
    policyVersion,
    ruleId,
    action: o.action,
    approvals: o.action === 'REQUIRE_APPROVALS' ? o.approvals : 0,
    roles: o.action === 'REQUIRE_APPROVALS' ? [...o.roles] : [],
    code: o.action === 'REFUSE' ? o.code : null,
    message: o.action === 'REFUSE' ? o.message : null,
  };
}

/**
 * The decision when the company has no policy in force: its multi-signature threshold as before
 * (≥ 2 signatures from ADMIN or OPERATOR, else allowed), recorded as version 0.
 */
export function thresholdDecision(multiSigThreshold: number): PolicyDecision {
  return multiSigThreshold >= 2
    ? decisionOf(0, null, { action: 'REQUIRE_APPROVALS', approvals: multiSigThreshold, roles: [...APPROVER_ROLES] })
    : decisionOf(0, null, { action: 'ALLOW' });
}

/** The API's form of a policy (integer cents as numbers), validated by `PolicyDocumentSchema`. */
export interface PolicyDocumentJson {
  rules: Array<{
    id: string;
    description?: string | undefined;
    when: Omit<PolicyConditions, 'amountAtLeastCents' | 'amountBelowCents' | 'cumulativeTodayAtLeastCents'> & {
      amountAtLeastCents?: number | undefined;
      amountBelowCents?: number | undefined;
      cumulativeTodayAtLeastCents?: number | undefined;
    };
    then:
      | { action: 'ALLOW' }
      | { action: 'REQUIRE_APPROVALS'; approvals: number; roles?: ApproverRole[] | undefined }
      | { action: 'REFUSE'; code: string; message?: string | undefined };
  }>;
  otherwise: PolicyDocumentJson['rules'][number]['then'];
}

const big = (n: number | undefined): bigint | undefined => (n === undefined ? undefined : BigInt(n));

function outcomeOf(o: PolicyDocumentJson['otherwise']): PolicyOutcome {
  switch (o.action) {
    case 'ALLOW':
      return { action: 'ALLOW' };
    case 'REQUIRE_APPROVALS':
      return { action: 'REQUIRE_APPROVALS', approvals: o.approvals, roles: o.roles ? APPROVER_ROLES.filter((r) => o.roles!.includes(r)) : [...APPROVER_ROLES] };
    case 'REFUSE':
      return { action: 'REFUSE', code: o.code, message: o.message ?? null };
  }
}

/** The domain's policy from its validated API form (stored as that form: the answer is what was written). */
export function policyOf(json: PolicyDocumentJson): PolicyDocument {
  return {
    rules: json.rules.map((r) => {
      const { amountAtLeastCents, amountBelowCents, cumulativeTodayAtLeastCents, ...rest } = r.when;
      const when: PolicyConditions = { ...rest };
      if (amountAtLeastCents !== undefined) when.amountAtLeastCents = big(amountAtLeastCents);
      if (amountBelowCents !== undefined) when.amountBelowCents = big(amountBelowCents);
      if (cumulativeTodayAtLeastCents !== undefined) when.cumulativeTodayAtLeastCents = big(cumulativeTodayAtLeastCents);
      return { id: r.id, description: r.description ?? null, when, then: outcomeOf(r.then) };
    }),
    otherwise: outcomeOf(json.otherwise),
  };
}
