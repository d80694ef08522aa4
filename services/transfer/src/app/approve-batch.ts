import { AppError } from '@wallet/platform';
import type { BatchSummary } from '../domain/batch.js';
import { rejectReasonOf, requireSigningRole, signerOf } from './approvals.js';
import { BATCH_MESSAGES } from './batch-messages.js';
import type { BatchRunner } from './batch-runner.js';
import type { BatchSaga } from './batch-saga.js';
import type { BatchDeps } from './deps.js';
import { transferEvent } from './events.js';
import type { TransferSaga } from './transfer-saga.js';
import { isUuid, requireCompany } from './validation.js';

/** A signer as the dashboard sends it (checked by `signerOf`). */
type SignerInput = { userId?: string; email?: string; role?: string };

/** The answer to a decision on a batch's approval that could not be taken. */
function decisionRefusal(deps: BatchDeps, kind: string): void {
  switch (kind) {
    case 'not_found':
      throw new AppError('BATCH_NOT_FOUND');
    case 'no_approval':
      throw new AppError('APPROVAL_NOT_PENDING', BATCH_MESSAGES.noApproval);
    case 'expired':
      deps.eventsWritten();
      throw new AppError('APPROVAL_EXPIRED');
    case 'already_signed':
      throw new AppError('ALREADY_SIGNED');
    case 'not_pending':
      throw new AppError('APPROVAL_NOT_PENDING');
    case 'role_not_allowed':
      throw new AppError('INSUFFICIENT_ROLE', 'La política de aprobación pide firmas de otro rol para este lote.');
    default:
  }
}

export class SignBatchApproval {
  constructor(
    private readonly deps: BatchDeps,
    private readonly saga: TransferSaga,
    private readonly batchSaga: BatchSaga,
    private readonly runner: BatchRunner,
  ) {}

  /**
   * POST /dashboard/batches/{id}/sign (CONTRACT §5 for a whole batch). The gateway has checked the
   * session and the TOTP code; the role, the approval's state and the signer's uniqueness are decided
   * under the approval's row lock. The signature that reaches the threshold moves the batch and every
   * item to EXECUTING in that same transaction, then the items are dispatched (the batch sweeper
   * resumes the dispatch should this process stop).
   */
  async execute(caller: string | undefined, input: { batchId: string; signer?: SignerInput; precheck?: boolean }): Promise<BatchSummary> {
    const { deps } = this;
    const companyId = requireCompany(caller);
    const signer = signerOf(input.signer);
    requireSigningRole(signer);
    if (!isUuid(input.batchId)) throw new AppError('BATCH_NOT_FOUND');
    // The signature that reaches quorum moves the batch AWAITING_APPROVAL → EXECUTING (the batch table's
    // `approved`) and every item with it in bulk (the send table's `quorum`), in the approval's transaction.
    const outcome = await this.batchSaga.apply('approved', 'approval', (approved) =>
      this.saga.applyBulk('quorum', 'approval', (quorum) =>
        deps.batches.signApproval(
          companyId,
          input.batchId,
          signer,
          approved,
          quorum,
          (t, emails) => transferEvent(deps, 'approved', { approvedBy: emails })(t),
          deps.batchSettings.pollMs,
          input.precheck === true,
        ),
      ),
    );
    decisionRefusal(deps, outcome.kind);
    const b = (await deps.batches.get(companyId, input.batchId))!;
    if (outcome.kind === 'signed') {
      deps.log.info({ batchId: b.id, userId: signer.userId, quorum: outcome.quorum }, 'batch approval signed');
      if (outcome.quorum) {
        const dispatching = this.runner
          .dispatch(b, 'approval')
          .catch((e: unknown) => deps.log.warn({ batchId: b.id, err: (e as Error).message }, 'approved batch not dispatched yet; the sweepers resume it'));
        if (deps.batchSettings.awaitDispatch) await dispatching;
      }
    }
    return (await deps.batches.summaries([(await deps.batches.get(companyId, b.id)) ?? b]))[0]!;
  }
}

export class RejectBatchApproval {
  constructor(
    private readonly deps: BatchDeps,
    private readonly runner: BatchRunner,
  ) {}

  /** POST /dashboard/batches/{id}/reject: the approval REJECTED, then every item FAILED with its funds released, the batch FAILED. */
  async execute(caller: string | undefined, input: { batchId: string; signer?: SignerInput; reason?: string | undefined }): Promise<BatchSummary> {
    const { deps } = this;
    const companyId = requireCompany(caller);
    const signer = signerOf(input.signer);
    requireSigningRole(signer);
    const reason = rejectReasonOf(input.reason);
    if (!isUuid(input.batchId)) throw new AppError('BATCH_NOT_FOUND');
    const outcome = await deps.batches.rejectApproval(companyId, input.batchId, signer, reason, deps.settings.sweeperGraceSeconds * 1000);
    decisionRefusal(deps, outcome.kind);
    const b = (await deps.batches.get(companyId, input.batchId))!;
    deps.log.info({ batchId: b.id, userId: signer.userId }, 'batch approval rejected');
    const approval = (await deps.batches.summaries([b]))[0]!.approval!;
    // The answer shows the batch after the rejection: its items released and the batch FAILED (the
    // releases run here, bounded; one the ledger cannot take now is left to the sweepers, and the
    // batch then still shows AWAITING_APPROVAL with its approval REJECTED until they finish).
    await this.runner
      .settleApproval(b, approval, 'approval')
      .catch((e: unknown) => deps.log.warn({ batchId: b.id, err: (e as Error).message }, 'rejected batch not released yet; the sweepers finish it'));
    return (await deps.batches.summaries([(await deps.batches.get(companyId, b.id)) ?? b]))[0]!;
  }
}
