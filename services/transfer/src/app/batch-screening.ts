import { AppError } from '@wallet/platform';
import type { BatchItemDraft } from '../domain/batch.js';
import { checkCounterpartyLimits, effectiveLimits, type LimitUsage } from '../domain/counterparty-limits.js';
import { sendAmlCandidates } from '../domain/names.js';
import type { BatchDeps, TransferDeps } from './deps.js';
import type { CompanyProfile } from './send-input.js';

/**
 * The checks a batch's items get both at validation (create-batch.ts) and again at execution
 * (execute-batch.ts): the AML screen and the counterparty limits, counting the batch's own earlier items.
 */

/** An item's refusal as its result shows it (a domain error's code and message, with the fields it names). */
export const refusal = (err: unknown): { code: string; message: string } => {
  if (err instanceof AppError) {
    const fields = (err.details as { fields?: Array<{ path: string; message: string }> } | undefined)?.fields;
    return { code: err.code, message: fields?.length ? `${err.message} ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}` : err.message };
  }
  throw err;
};

/** What a batch line is screened on against the AML list: its document as written, its destination account's fingerprint. */
export interface AmlSubject {
  document: string;
  account: string | null;
}

/**
 * One AML read for a company and its counterparties (the list may change between validation and
 * execution, so both ask): whether a line's send is refused. Each line is screened on exactly the
 * candidates a single send screens (`sendAmlCandidates`), from the document as the line wrote it and
 * its destination account (docs/security.md, "Screening on the destination account").
 */
export async function amlScreen(deps: BatchDeps, nit: string, subjects: Iterable<AmlSubject>): Promise<(s: AmlSubject) => boolean> {
  const candidates = new Set<string>();
  for (const c of subjects) for (const d of sendAmlCandidates(nit, c.document, c.account)) candidates.add(d);
  const hits = await deps.batches.amlHits([...candidates]);
  return (c) => sendAmlCandidates(nit, c.document, c.account).some((d) => hits.has(d));
}

/** An executable item's AML account: its ACH destination's fingerprint (as a single send's `amlAccountOf`). */
export const itemAmlAccount = (it: BatchItemDraft): string | null => (it.destination?.kind === 'ACH' ? (it.destinationFingerprint ?? null) : null);

/** The limit keys of an item: its counterparty document and, when known, its destination fingerprint. */
export const limitKeysOf = (d: BatchItemDraft): string[] => (d.destinationFingerprint ? [d.counterparty!, d.destinationFingerprint] : [d.counterparty!]);

/**
 * Items (in order) that the limits refuse, counting each accepted item towards the next ones. An item
 * must fit within the limits both for its counterparty document and for its destination (the larger
 * usage decides, as `locked_destination_usage` does for a single send).
 */
export function limitVerdicts(deps: TransferDeps, company: CompanyProfile, items: BatchItemDraft[], usage: Map<string, LimitUsage>): Map<number, string> {
  const limits = effectiveLimits(
    { daily: company.counterpartyDailyLimitCents, monthly: company.counterpartyMonthlyLimitCents },
    { daily: deps.settings.counterpartyDailyLimit, monthly: deps.settings.counterpartyMonthlyLimit },
  );
  const running = new Map<string, LimitUsage>();
  const out = new Map<number, string>();
  const max = (a: bigint, b: bigint) => (a > b ? a : b);
  for (const d of items) {
    const keys = limitKeysOf(d);
    const usages = keys.map((k) => running.get(k) ?? usage.get(k) ?? { daySum: 0n, monthSum: 0n });
    const u = usages.reduce((a, b) => ({ daySum: max(a.daySum, b.daySum), monthSum: max(a.monthSum, b.monthSum) }));
    const verdict = checkCounterpartyLimits(d.amount, u, limits);
    if (verdict !== 'OK') {
      out.set(d.seq, verdict);
      continue;
    }
    keys.forEach((k, i) => running.set(k, { daySum: usages[i]!.daySum + d.amount, monthSum: usages[i]!.monthSum + d.amount }));
  }
  return out;
}
