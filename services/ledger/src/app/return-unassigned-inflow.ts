import { AppError } from '@wallet/platform';
import { unassignedReturnPosting } from '../domain/postings.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { replayPosting, type PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { Problems, checkIdempotencyKey, checkPositive, requireCompany } from './validation.js';

export interface ReturnUnassignedInflowCommand {
  idempotencyKey: string;
  /** The RecordInflow key of the held (unassigned) Bre-B inflow being returned to the payer. */
  originalIdempotencyKey: string;
  grossCents: bigint;
}

/**
 * A held Bre-B payment (RecordInflow unassigned: breb_settlement −G, unassigned_funds:BREB +G)
 * returned to the payer through the network: one `reversal` posting, unassigned_funds:BREB −G,
 * breb_settlement +G. No wallet and no movement (the held payment had none). Company-scoped like
 * the hold it returns (another company's, an assigned inflow, or an unknown key: TRANSACTION_NOT_FOUND).
 */
export class ReturnUnassignedInflow {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: ReturnUnassignedInflowCommand): Promise<PostingResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    checkPositive(p, 'grossCents', cmd.grossCents);
    if (!cmd.originalIdempotencyKey) p.add('originalIdempotencyKey', 'is required');
    else if (cmd.originalIdempotencyKey === cmd.idempotencyKey) p.add('originalIdempotencyKey', 'must differ from idempotencyKey');
    p.throwIfAny();

    const deps = this.deps;
    const original = await deps.store.findPosting(cmd.originalIdempotencyKey);
    if (!original || original.companyId !== companyId || original.kind !== 'inflow' || original.movementId) throw new AppError('TRANSACTION_NOT_FOUND');
    const draft = unassignedReturnPosting(cmd.grossCents);
    const postingId = deps.newId();
    const hash = requestHash('unassigned_return', companyId, cmd);
    return runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write: {
        posting: {
          id: postingId,
          kind: draft.kind,
          idempotencyKey: cmd.idempotencyKey,
          requestHash: hash,
          companyId,
          rail: 'BREB',
          movementId: null,
          holdId: null,
        },
        entries: draft.entries,
        wallet: null,
        event: postingEvent(deps, {
          postingId,
          kind: draft.kind,
          companyId,
          rail: 'BREB',
          movementId: null,
          holdId: null,
          entries: draft.entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      },
      applied: (o) => ({ postingId, movement: o.movement, replayed: false }),
      replay: (existing) => replayPosting(deps, companyId, existing),
      rejected: () => {
        throw new AppError('INTERNAL_ERROR');
      },
    });
  }
}
