import { feeChargeAmounts } from '../domain/movements.js';
import { feeChargePosting } from '../domain/postings.js';
import { isFeeOperation, isWalletRail, type FeeOperation, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { debitRefused, replayPosting, storedDetails, type PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { MAX_DESCRIPTION, MAX_REFERENCE, Problems, checkIdempotencyKey, checkPositive, checkText, orNull, requireCompany } from './validation.js';

export interface ChargeFeeCommand {
  idempotencyKey: string;
  rail: string;
  operation: string;
  feeCents: bigint;
  ivaCents: bigint;
  reference?: string;
  description?: string;
}

/** Admin fee charge (FEE_CHARGE): wallet_available −(fee+IVA), only if available covers it. */
export class ChargeFee {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: ChargeFeeCommand): Promise<PostingResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!isWalletRail(cmd.rail)) p.add('rail', 'must be BREB or ACH');
    if (!isFeeOperation(cmd.operation)) p.add('operation', 'must be BREB_OUTFLOW, ACH_OUTFLOW, PSE_INFLOW or BREB_INFLOW');
    checkPositive(p, 'feeCents', cmd.feeCents);
    if (cmd.ivaCents < 0n) p.add('ivaCents', 'must not be negative');
    else if (cmd.ivaCents > cmd.feeCents) p.add('ivaCents', 'must not exceed feeCents');
    checkText(p, 'reference', cmd.reference, MAX_REFERENCE);
    checkText(p, 'description', cmd.description, MAX_DESCRIPTION);
    p.throwIfAny();
    const rail = cmd.rail as WalletRail;
    const operation = cmd.operation as FeeOperation;

    const deps = this.deps;
    const postingId = deps.newId();
    const movementId = deps.newId();
    const draft = feeChargePosting(companyId, rail, operation, cmd.feeCents, cmd.ivaCents);
    const hash = requestHash(draft.kind, companyId, cmd);
    return runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write: {
        posting: { id: postingId, kind: draft.kind, idempotencyKey: cmd.idempotencyKey, requestHash: hash, companyId, rail, movementId, holdId: null },
        entries: draft.entries,
        wallet: draft.wallet,
        newMovement: {
          id: movementId,
          companyId,
          type: 'FEE_CHARGE',
          rail,
          walletRail: rail,
          status: 'COMPLETED',
          completed: true,
          ...feeChargeAmounts(cmd.feeCents, cmd.ivaCents),
          reference: orNull(cmd.reference),
          apiKeyId: null,
          details: storedDetails({ description: cmd.description }),
        },
        event: postingEvent(deps, {
          postingId,
          kind: draft.kind,
          companyId,
          rail,
          movementId,
          holdId: null,
          entries: draft.entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      },
      applied: (o) => ({ postingId, movement: o.movement, replayed: false }),
      replay: (existing) => replayPosting(deps, companyId, existing),
      rejected: () => debitRefused(deps, companyId, rail),
    });
  }
}
