import { AppError } from '@wallet/platform';
import { COMMITTABLE_STATUSES } from '../domain/movements.js';
import { commitPosting } from '../domain/postings.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { replayHold, type HoldResult } from './results.js';
import { requestHash } from './request-hash.js';
import { Problems, checkIdempotencyKey, isUuid, requireCompany } from './validation.js';

export interface CommitCommand {
  idempotencyKey: string;
  holdId: string;
}

/**
 * The rail confirmed a send: pending_out −T; rail_clearing +amount; fee_revenue +fee;
 * iva_payable +IVA; movement COMPLETED. Applies only while the hold is OPEN (the guard is the
 * conditional hold update), so two commits, or a commit and a release, never both apply.
 */
export class CommitHold {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: CommitCommand): Promise<HoldResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!cmd.holdId) p.add('holdId', 'is required');
    p.throwIfAny();

    const deps = this.deps;
    const hold = isUuid(cmd.holdId) ? await deps.store.getHold(companyId, cmd.holdId.toLowerCase()) : undefined;
    if (!hold) throw new AppError('HOLD_NOT_FOUND');
    const hash = requestHash('commit', companyId, cmd);
    const closed = () => { throw new AppError('INVALID_STATE_TRANSITION', `La reserva ya no está abierta (${hold.status}).`); };
    const replay = (existing: Parameters<typeof replayHold>[2]) => replayHold(deps, companyId, existing);

    if (hold.status !== 'OPEN') {
      return runIdempotentPosting(deps, { idempotencyKey: cmd.idempotencyKey, requestHash: hash, write: null, applied: () => closed(), replay, rejected: closed });
    }
    if (!COMMITTABLE_STATUSES.includes(hold.movementStatus)) {
      throw new AppError('INVALID_STATE_TRANSITION', `La transferencia no se puede completar en estado ${hold.movementStatus}.`);
    }
    const postingId = deps.newId();
    const draft = commitPosting(companyId, hold.rail, hold.feeOperation, hold);
    return runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write: {
        posting: { id: postingId, kind: draft.kind, idempotencyKey: cmd.idempotencyKey, requestHash: hash, companyId, rail: hold.rail, movementId: hold.movementId, holdId: hold.id },
        entries: draft.entries,
        wallet: draft.wallet,
        closeHold: { id: hold.id, companyId, status: 'COMMITTED' },
        movementUpdate: { id: hold.movementId, companyId, status: 'COMPLETED', completed: true, errorMessage: null },
        event: postingEvent(deps, { postingId, kind: draft.kind, companyId, rail: hold.rail, movementId: hold.movementId, holdId: hold.id, entries: draft.entries, idempotencyKey: cmd.idempotencyKey }),
      },
      applied: (o) => ({ hold: o.hold!, movement: o.movement, replayed: false }),
      replay,
      rejected: closed,
    });
  }
}
