import { CompiledPolicy, bogotaClock, policyOf, thresholdDecision, type PolicyDecision, type PolicyFacts } from '../domain/approval-policy.js';
import type { Rail } from '../domain/rails.js';
import type { PolicyStore, PolicyVersionRecord } from './policy-ports.js';

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

export interface PolicyVerdict {
  decision: PolicyDecision;
  /** Gives back the payment's share of the day's total when it is refused before it is accepted (no-op when none was claimed). */
  release: () => Promise<void>;
}

const NOTHING = async () => {};

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
    return { decision, release };
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
    const rows = await this.store.fromInstant(companyId, at);
    const versions = rows.map((r) => ({ effectiveAt: r.effectiveAt!.getTime(), policy: this.compile(r) }));
    if (this.ttlMs > 0) {
      if (this.cache.size >= (this.settings.maxCompanies ?? 10_000)) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(companyId, { from: at.getTime(), until: now + this.ttlMs, versions });
    }
    return versions;
  }

  private compile(r: PolicyVersionRecord): CompiledPolicy {
    let c = this.compiled.get(r.id);
    if (!c) {
      c = new CompiledPolicy(r.version, policyOf(r.document));
      if (this.compiled.size >= 50_000) this.compiled.clear();
      this.compiled.set(r.id, c);
    }
    return c;
  }
}
