import { AppError } from '@wallet/platform';
import type { BatchItemDraft, BatchRecord, BatchSummary } from '../domain/batch.js';
import { bogotaWindows } from '../domain/counterparty-limits.js';
import type { ApprovalRef, FeeBreakdown, TransferRecord } from '../domain/transfer.js';
import { BATCH_MESSAGES } from './batch-messages.js';
import type { ExecutionPick, ExecutionRefusal } from './batch-ports.js';
import { ownBatch, type CallerOf } from './batch-queries.js';
import type { BatchRunner } from './batch-runner.js';
import type { BatchSaga } from './batch-saga.js';
import { amlScreen, itemAmlAccount, limitKeysOf, limitVerdicts } from './batch-screening.js';
import type { BatchDeps, TransferDeps } from './deps.js';
import type { CompanyProfile } from './send-input.js';
import { thresholdDecision, type PolicyDecision } from '../domain/approval-policy.js';
import type { BatchVerdict } from './policy-book.js';
import { approvalOf, policyRefusal } from './send-transfer.js';

/**
 * POST /transfers/batches/{id}/execute (docs/batches.md §3): the re-checks (AML, counterparty limits
 * under the locks single sends take, the fee of the schedule in force now), the items recorded
 * RECEIVED as transfers owned by the batch (VALIDATED → FUNDING), then the batch funded by the runner.
 */
export class ExecuteBatch {
  constructor(
    private readonly deps: BatchDeps,
    private readonly runner: BatchRunner,
    private readonly saga: BatchSaga,
  ) {}

  async execute(caller: CallerOf, company: CompanyProfile, batchId: string): Promise<BatchSummary> {
    const { deps } = this;
    const b = await ownBatch(deps, caller.companyId, batchId);
    if (b.state === 'VALIDATED' && b.expiresAt.getTime() <= deps.now().getTime()) {
      await this.saga.transition(b, 'expire', 'request', { patch: { nextAttemptInMs: null }, items: 'not_executed' });
      throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.expired);
    }
    if (b.state === 'REJECTED' || b.state === 'EXPIRED' || b.state === 'CANCELLED') {
      throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.notExecutable(b.state));
    }
    if (b.state !== 'VALIDATED') return (await deps.batches.summaries([b]))[0]!; // already executed: as it is now

    const items = await deps.batches.executableItems(b.id);
    for (const it of items) it.destinationFingerprint = it.destination ? deps.destinationFingerprint(it.destination) : null;
    // The approval policy in force now (docs/policies.md "Bulk payouts"): each line, and the total. A
    // refused total refuses the execution (nothing recorded); the batch waits for ONE approval of all
    // its items, the strictest any line or the total asks for (opened when the funds are reserved).
    const now = deps.now();
    const verdict = await decideBatch(deps, company, b.companyId, items, now);
    if (verdict.total.action === 'REFUSE') throw policyRefusal(verdict.total);
    const approval = approvalOf(deps, verdict.combined, now);
    try {
      return await this.executeDecided(b, company, items, verdict, approval);
    } catch (err) {
      await verdict.release().catch((e: unknown) => deps.log.warn({ batchId: b.id, err: (e as Error).message }, 'could not give back the policy day total'));
      throw err;
    }
  }

  private async executeDecided(
    b: BatchRecord,
    company: CompanyProfile,
    items: BatchItemDraft[],
    verdict: BatchVerdict,
    approval: ApprovalRef | null,
  ): Promise<BatchSummary> {
    const { deps } = this;
    // The fee and IVA of the schedule in force now, at execution, as a single send sent now would pay
    // (validation showed an estimate: the schedule may have changed since). One computation per rail.
    const fees = await executionFees(deps, b, items);
    // AML again (the list may have changed since validation); limits again under the locks, in startExecution.
    // Screened on the document as the line wrote it (its `targetDocument`) and on its destination
    // account, as a single send is.
    const listed = await amlScreen(
      deps,
      company.nit,
      items.map((it) => ({ document: it.targetDocument, account: itemAmlAccount(it) })),
    );
    const windows = bogotaWindows(deps.now());
    const started = await this.saga.apply('execute', 'request', (execute) =>
      deps.batches.startExecution(
        b,
        execute,
        [...new Set(items.flatMap(limitKeysOf))],
        windows,
        (usage) => {
          const refusals: ExecutionRefusal[] = [];
          const amlOk = items.filter((it) => {
            if (!listed({ document: it.targetDocument, account: itemAmlAccount(it) })) return true;
            refusals.push({ seq: it.seq, code: 'RECIPIENT_BLACKLISTED', message: new AppError('RECIPIENT_BLACKLISTED').message });
            return false;
          });
          const allowed = amlOk.filter((it) => {
            const d = verdict.lines.get(it.seq)!;
            if (d.action !== 'REFUSE') return true;
            refusals.push({ seq: it.seq, code: 'POLICY_REFUSED', message: lineRefusalMessage(d) });
            return false;
          });
          const limited = limitVerdicts(deps, company, allowed, usage);
          const picks: Array<ExecutionPick & { transfer: TransferRecord; counterparty: string }> = [];
          for (const it of allowed) {
            const code = limited.get(it.seq);
            if (code) {
              refusals.push({ seq: it.seq, code, message: new AppError(code as 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED').message });
              continue;
            }
            const transfer = transferOf(deps, b, { ...it, fee: fees.get(it.seq)! }, approval, verdict.lines.get(it.seq)!);
            picks.push({ seq: it.seq, transferId: transfer.id, transfer, counterparty: it.counterparty! });
          }
          return { picks, refusals };
        },
        deps.batchSettings.fundingLeaseMs,
        approval,
      ),
    );
    if (!started) {
      // Another writer moved the batch first: another execute (answer the batch as it is), or a cancel
      // or the expiry, which this execute lost to: 409, as an execute of a cancelled or expired batch.
      // Either way this execute sends nothing: the policy's day total no longer counts it.
      await verdict.release();
      const now = (await deps.batches.get(b.companyId, b.id)) ?? b;
      if (now.state === 'VALIDATED' && now.expiresAt.getTime() <= deps.now().getTime()) {
        await this.saga.transition(now, 'expire', 'request', { patch: { nextAttemptInMs: null }, items: 'not_executed' });
        throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.expired);
      }
      if (now.state === 'REJECTED' || now.state === 'EXPIRED' || now.state === 'CANCELLED') {
        throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.notExecutable(now.state));
      }
      return (await deps.batches.summaries([now]))[0]!;
    }
    deps.log.info({ batchId: b.id, items: started.picks.length, refused: started.refusals.length }, 'batch executing: items recorded');
    b = { ...b, state: 'FUNDING' };
    b = await this.runner.fund(b, true);
    return (await deps.batches.summaries([b]))[0]!;
  }
}

/** Each executable item's fee and IVA from the company's schedule in force now (one ComputeFeesBatch per rail), by seq. */
async function executionFees(deps: TransferDeps, b: BatchRecord, items: BatchItemDraft[]): Promise<Map<number, FeeBreakdown>> {
  const out = new Map<number, FeeBreakdown>();
  for (const rail of ['BREB', 'ACH'] as const) {
    const mine = items.filter((it) => it.rail === rail);
    if (mine.length === 0) continue;
    const fees = await deps.ledger.computeFeesBatch(
      b.companyId,
      rail,
      mine.map((it) => it.amount),
      b.ivaApplicable,
    );
    mine.forEach((it, k) => out.set(it.seq, fees[k]!));
  }
  return out;
}

/** The transfer an item becomes (its own id, RECEIVED, owned by the batch). */
/** The policy's decisions for the executable lines of a batch (each line's rail and destination). */
async function decideBatch(deps: TransferDeps, company: CompanyProfile, companyId: string, items: BatchItemDraft[], at: Date): Promise<BatchVerdict> {
  const lines = items.map((it) => ({ seq: it.seq, amount: it.amount, rail: it.rail!, destinationFingerprint: it.destinationFingerprint ?? null }));
  if (deps.policies) return deps.policies.decideBatch({ companyId, multiSigThreshold: company.multiSigThreshold, lines, at });
  const decision = thresholdDecision(company.multiSigThreshold);
  return { lines: new Map(lines.map((l) => [l.seq, decision])), total: decision, combined: decision, release: async () => {} };
}

/** A line the policy refuses: the catalogue's message with the company's code (and its message). */
function lineRefusalMessage(d: PolicyDecision): string {
  return `${new AppError('POLICY_REFUSED').message} (${d.code}${d.message ? `: ${d.message}` : ''})`;
}

function transferOf(deps: TransferDeps, b: BatchRecord, it: BatchItemDraft, approval: ApprovalRef | null, decision: PolicyDecision): TransferRecord {
  return {
    id: deps.newId(),
    companyId: b.companyId,
    apiKeyId: b.apiKeyId,
    rail: it.rail!,
    state: 'RECEIVED',
    amount: it.amount,
    fee: it.fee as FeeBreakdown,
    targetName: it.targetName,
    targetDocument: it.targetDocument,
    reference: it.reference,
    description: it.description,
    destination: it.destination!,
    holdId: null,
    providerTransferId: null,
    errorMessage: null,
    dispatchAttempts: 0,
    approval,
    approvedAt: null,
    releaseEvent: null,
    rejectedBy: null,
    createdAt: deps.now(),
    dispatchedAt: null,
    completedAt: null,
    batchId: b.id,
    destinationFingerprint: it.destinationFingerprint ?? (it.destination ? deps.destinationFingerprint(it.destination) : null),
    policyDecision: decision,
  };
}
