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
    let b = await ownBatch(deps, caller.companyId, batchId);
    if (b.state === 'VALIDATED' && b.expiresAt.getTime() <= deps.now().getTime()) {
      await this.saga.transition(b, 'expire', 'request', { patch: { nextAttemptInMs: null }, items: 'not_executed' });
      throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.expired);
    }
    if (b.state === 'REJECTED' || b.state === 'EXPIRED' || b.state === 'CANCELLED') {
      throw new AppError('INVALID_STATE_TRANSITION', BATCH_MESSAGES.notExecutable(b.state));
    }
    if (b.state !== 'VALIDATED') return (await deps.batches.summaries([b]))[0]!; // already executed: as it is now
    // A multi-signature company's batch waits for ONE approval of all its items (opened when the funds are reserved).
    const approval: ApprovalRef | null =
      company.multiSigThreshold >= 2
        ? {
            id: deps.newApprovalId(),
            threshold: company.multiSigThreshold,
            expiresAt: new Date(deps.now().getTime() + deps.settings.approvalTtlSeconds * 1000),
          }
        : null;

    const items = await deps.batches.executableItems(b.id);
    for (const it of items) it.destinationFingerprint = it.destination ? deps.destinationFingerprint(it.destination) : null;
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
          const limited = limitVerdicts(deps, company, amlOk, usage);
          const picks: Array<ExecutionPick & { transfer: TransferRecord; counterparty: string }> = [];
          for (const it of amlOk) {
            const code = limited.get(it.seq);
            if (code) {
              refusals.push({ seq: it.seq, code, message: new AppError(code as 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED').message });
              continue;
            }
            const transfer = transferOf(deps, b, { ...it, fee: fees.get(it.seq)! }, approval);
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
function transferOf(deps: TransferDeps, b: BatchRecord, it: BatchItemDraft, approval: ApprovalRef | null): TransferRecord {
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
  };
}
