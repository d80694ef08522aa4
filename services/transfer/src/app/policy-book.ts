import {
  CompiledPolicy,
  bogotaClock,
  policyOf,
  thresholdDecision,
  type ApproverRole,
  type PolicyDecision,
  type PolicyFacts,
} from '../domain/approval-policy.js';
import type { Rail } from '../domain/rails.js';
import type { DecidingVersion, PolicyStore } from './policy-ports.js';

/** A compiled version with the instant it takes effect. */
interface Scheduled {
  effectiveAt: number;
  policy: CompiledPolicy;
}

interface CacheEntry {
  /** The entry answers for instants in [from, until) (ms). */
  from: number;
  until: number;
  /** In force at load, then the approved versions not in force yet, by version. */
  versions: Scheduled[];
}

/** One payment as a policy sees it, before the reads the policy may need. */
export interface PaymentToDecide {
  companyId: string;
  multiSigThreshold: number;
  amount: bigint;
  rail: Rail;
  counterparty: { verified: boolean; tags: readonly string[] } | null;
  /** The destination's keyed fingerprint (first payment to this payee). */
  destinationFingerprint: string;
  at: Date;
}

export interface BatchVerdict {
  /** Each line's own decision, by seq. */
  lines: Map<number, PolicyDecision>;
  /** The decision for the batch's total. */
  total: PolicyDecision;
  /** The approval the batch waits for: the strictest of the total's and the accepted lines'. */
  combined: PolicyDecision;
  release: () => Promise<void>;
}

export interface PolicyVerdict {
  decision: PolicyDecision;
  /** Gives back the payment's share of the day's total when it is refused before it is accepted (no-op when none was claimed; at most once). */
  release: () => Promise<void>;
}

const NOTHING = async () => {};

/** A give-back that runs at most once, however many ways out call it. */
function once(f: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= f());
}

/**
 * The strictest of several decisions that allow or ask for approvals: the most approvals, from the
 * roles every one of them accepts (ADMIN when they share none); the decision that asked for the most
 * names the rule. Refusals are handled before (a refused line is refused alone).
 */
export function strictest(ds: PolicyDecision[]): PolicyDecision {
  let top: PolicyDecision | undefined;
  let roles: ApproverRole[] | undefined;
  for (const d of ds) {
    if (d.action !== 'REQUIRE_APPROVALS') continue;
    if (!top || d.approvals > top.approvals) top = d;
    roles = roles ? roles.filter((r) => d.roles.includes(r)) : [...d.roles];
  }
  if (!top) return ds.find((d) => d.action === 'ALLOW') ?? ds[0]!;
  return { ...top, roles: roles && roles.length > 0 ? roles : ['ADMIN'] };
}

/**
 * Which policy version decides a payment, and its decision (docs/policies.md "Which version decides").
 *
 * The version in force at the payment's instant decides, and is recorded with it. Versions are
 * cached per company, and the cache is exact: an entry holds the version in force when it was
 * loaded and every approved version scheduled after it, and it lives for less than the change
 * delay, so a version approved after the load cannot take effect before the entry expires. With no
 * delay (tests), nothing is cached.
 */
export class PolicyBook {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly compiled = new Map<string, CompiledPolicy>();
  private readonly ttlMs: number;

  constructor(
    private readonly store: PolicyStore,
    private readonly settings: { changeDelayMs: number; cacheMs: number; maxCompanies?: number },
    private readonly now: () => Date = () => new Date(),
  ) {
    this.ttlMs = Math.min(settings.cacheMs, Math.floor(settings.changeDelayMs / 2));
  }

  /** The version in force at `at`, or null (the multi-signature threshold decides). */
  async inForce(companyId: string, at: Date): Promise<CompiledPolicy | null> {
    const versions = await this.versions(companyId, at);
    let found: CompiledPolicy | null = null;
    for (const v of versions) if (v.effectiveAt <= at.getTime()) found = v.policy;
    return found;
  }

  /** The decision for one payment, with the reads its version needs made first. */
  async decide(p: PaymentToDecide): Promise<PolicyVerdict> {
    const policy = await this.inForce(p.companyId, p.at);
    if (!policy) return { decision: thresholdDecision(p.multiSigThreshold), release: NOTHING };
    const facts: PolicyFacts = { amount: p.amount, rail: p.rail, counterparty: p.counterparty, at: p.at };
    let release = NOTHING;
    const reads: Array<Promise<void>> = [];
    if (policy.needs.has('firstPayment')) {
      reads.push(this.store.paidBefore(p.companyId, p.destinationFingerprint).then((paid) => void (facts.firstPayment = !paid)));
    }
    if (policy.needs.has('cumulativeToday')) {
      const day = bogotaClock(p.at).date;
      reads.push(
        this.store.claimDayTotal(p.companyId, day, p.amount).then((total) => {
          facts.cumulativeToday = total;
          release = () => this.store.releaseDayTotal(p.companyId, day, p.amount);
        }),
      );
    }
    const settled = await Promise.allSettled(reads);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await release().catch(() => undefined);
      throw failed.reason;
    }
    const decision = policy.decide(facts);
    if (decision.action === 'REFUSE') {
      await release();
      return { decision, release: NOTHING };
    }
    return { decision, release: once(release) };
  }

  /**
   * A bulk payout's decisions (docs/policies.md "Bulk payouts"): each line as a payment of its own
   * (the amount sent today counting the lines in order), then the total of the lines it accepts as
   * one payment of their whole amount (once per rail they use, so a rule on either rail applies). A
   * line refused is refused alone; a refused total refuses the whole batch; the batch waits for the
   * strictest approval the total or an accepted line asks for (`combined`).
   */
  async decideBatch(p: {
    companyId: string;
    multiSigThreshold: number;
    lines: Array<{ seq: number; amount: bigint; rail: Rail; destinationFingerprint: string | null }>;
    at: Date;
    /** false: explain only (the validation report): the day's total is read, not claimed. */
    claim?: boolean;
  }): Promise<BatchVerdict> {
    const policy = await this.inForce(p.companyId, p.at);
    if (!policy) {
      const decision = thresholdDecision(p.multiSigThreshold);
      // Without a policy the batch's threshold decides the batch, and each line records it.
      return { lines: new Map(p.lines.map((l) => [l.seq, decision])), total: decision, combined: decision, release: NOTHING };
    }
    const all = p.lines.reduce((s, l) => s + l.amount, 0n);
    const paid = policy.needs.has('firstPayment')
      ? await this.store.paidBeforeMany(
          p.companyId,
          p.lines.flatMap((l) => (l.destinationFingerprint ? [l.destinationFingerprint] : [])),
        )
      : new Set<string>();
    const day = bogotaClock(p.at).date;
    const claim = p.claim !== false;
    const counted = claim && policy.needs.has('cumulativeToday');
    const before = !policy.needs.has('cumulativeToday')
      ? 0n
      : claim
        ? (await this.store.claimDayTotal(p.companyId, day, all)) - all
        : await this.store.dayTotal(p.companyId, day);
    const lines = new Map<number, PolicyDecision>();
    let running = before;
    for (const l of p.lines) {
      running += l.amount;
      const firstPayment = l.destinationFingerprint === null || !paid.has(l.destinationFingerprint);
      lines.set(l.seq, policy.decide({ amount: l.amount, rail: l.rail, counterparty: null, at: p.at, firstPayment, cumulativeToday: running }));
    }
    // The total: the lines the policy accepts, as one payment of their whole amount on each rail they use.
    const accepted = p.lines.filter((l) => lines.get(l.seq)!.action !== 'REFUSE');
    const total = accepted.reduce((s, l) => s + l.amount, 0n);
    const release = async (amount: bigint) => {
      if (counted && amount > 0n) await this.store.releaseDayTotal(p.companyId, day, amount);
    };
    await release(all - total); // refused lines are not sent
    const totals = [...new Set(accepted.map((l) => l.rail))].map((rail) =>
      policy.decide({ amount: total, rail, counterparty: null, at: p.at, firstPayment: false, cumulativeToday: before + total }),
    );
    const allowed: PolicyDecision = { policyVersion: policy.version, ruleId: null, action: 'ALLOW', approvals: 0, roles: [], code: null, message: null };
    const totalDecision = totals.find((d) => d.action === 'REFUSE') ?? (totals.length > 0 ? strictest(totals) : allowed);
    if (totalDecision.action === 'REFUSE') {
      await release(total);
      return { lines, total: totalDecision, combined: totalDecision, release: NOTHING };
    }
    const decisions = [totalDecision, ...accepted.map((l) => lines.get(l.seq)!)];
    return { lines, total: totalDecision, combined: strictest(decisions), release: once(() => release(total)) };
  }

  /**
   * What the policy in force would decide for a payment, reserving nothing (quotes): the amount sent
   * today is read, not claimed; with no destination known, the payment counts as a first one.
   */
  async explain(p: Omit<PaymentToDecide, 'destinationFingerprint'> & { destinationFingerprint: string | null }): Promise<PolicyDecision> {
    const policy = await this.inForce(p.companyId, p.at);
    if (!policy) return thresholdDecision(p.multiSigThreshold);
    const facts: PolicyFacts = { amount: p.amount, rail: p.rail, counterparty: p.counterparty, at: p.at };
    const fp = p.destinationFingerprint;
    const [paid, today] = await Promise.all([
      policy.needs.has('firstPayment') && fp ? this.store.paidBefore(p.companyId, fp) : Promise.resolve(false),
      policy.needs.has('cumulativeToday') ? this.store.dayTotal(p.companyId, bogotaClock(p.at).date) : Promise.resolve(0n),
    ]);
    facts.firstPayment = !paid;
    facts.cumulativeToday = today + p.amount;
    return policy.decide(facts);
  }

  /** Forget a company's versions (after a change made by this process). */
  forget(companyId: string): void {
    this.cache.delete(companyId);
  }

  private async versions(companyId: string, at: Date): Promise<Scheduled[]> {
    const now = this.now().getTime();
    const hit = this.cache.get(companyId);
    // An entry answers for instants from the one it was loaded for until its expiry; a payment dated
    // outside (a slow request's earlier instant) reads afresh.
    if (hit && now < hit.until && at.getTime() >= hit.from && at.getTime() < hit.until) return hit.versions;
    const rows = await this.store.decidingVersions(companyId, at);
    const versions = rows.map((r) => ({ effectiveAt: r.effectiveAt.getTime(), policy: this.compile(r) }));
    if (this.ttlMs > 0) {
      if (this.cache.size >= (this.settings.maxCompanies ?? 10_000)) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(companyId, { from: at.getTime(), until: now + this.ttlMs, versions });
    }
    return versions;
  }

  private compile(r: DecidingVersion): CompiledPolicy {
    let c = this.compiled.get(r.id);
    if (!c) {
      c = new CompiledPolicy(r.version, policyOf(r.document));
      if (this.compiled.size >= 50_000) this.compiled.clear();
      this.compiled.set(r.id, c);
    }
    return c;
  }
}
