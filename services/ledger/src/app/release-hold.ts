import { AppError } from '@wallet/platform';
import { RELEASE_STATUSES, type MovementStatus } from '../domain/movements.js';
import { releasePosting } from '../domain/postings.js';
import type { LedgerDeps } from './deps.js';
import { isKind, type HoldKind } from './commit-hold.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { isUnspecified } from './movement-spec.js';
import { replayHold, type HoldResult } from './results.js';
import { requestHash } from './request-hash.js';
import { MAX_ERROR_MESSAGE, Problems, checkIdempotencyKey, checkText, isUuid, orNull, requireCompany } from './validation.js';

export interface ReleaseCommand {
  idempotencyKey: string;
  holdId: string;
  /** 'FAILED' (default) or 'EXPIRED'. */
  finalStatus: string;
  errorMessage?: string;
}

/**
 * A send failed, was rejected or expired: pending_out −T; wallet_available +T; movement FAILED or
 * EXPIRED with the reason. Guarded by the hold being OPEN, like commit.
 */
export class ReleaseHold {
  /** `send`: Release (the transfer service's holds); `return`: ReleaseReturn (holds made by ReserveReturn, whose claim on the inflow is given back). */
  constructor(
    private readonly deps: LedgerDeps,
    private readonly holds: HoldKind = 'send',
  ) {}

  async execute(caller: string | undefined, cmd: ReleaseCommand): Promise<HoldResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!cmd.holdId) p.add('holdId', 'is required');
    if (!isUnspecified(cmd.finalStatus) && !RELEASE_STATUSES.includes(cmd.finalStatus as MovementStatus)) p.add('finalStatus', 'must be FAILED or EXPIRED');
    checkText(p, 'errorMessage', cmd.errorMessage, MAX_ERROR_MESSAGE);
    p.throwIfAny();
    const finalStatus: MovementStatus = isUnspecified(cmd.finalStatus) ? 'FAILED' : (cmd.finalStatus as MovementStatus);

    const deps = this.deps;
    const hold = isUuid(cmd.holdId) ? await deps.store.getHold(companyId, cmd.holdId.toLowerCase()) : undefined;
    if (!hold || !isKind(hold, this.holds)) throw new AppError('HOLD_NOT_FOUND');
    const hash = requestHash('release', companyId, cmd);
    const closed = () => {
      throw new AppError('INVALID_STATE_TRANSITION', `La reserva ya no está abierta (${hold.status}).`);
    };
    const replay = (existing: Parameters<typeof replayHold>[2]) => replayHold(deps, companyId, existing);

    if (hold.status !== 'OPEN') {
      return runIdempotentPosting(deps, {
        idempotencyKey: cmd.idempotencyKey,
        requestHash: hash,
        write: null,
        applied: () => closed(),
        replay,
        rejected: closed,
      });
    }
    const postingId = deps.newId();
    const draft = releasePosting(companyId, hold.rail, hold);
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
          rail: hold.rail,
          movementId: hold.movementId,
          holdId: hold.id,
        },
        entries: draft.entries,
        wallet: draft.wallet,
        closeHold: { id: hold.id, companyId, status: 'RELEASED' },
        movementUpdate: { id: hold.movementId, companyId, status: finalStatus, completed: false, errorMessage: orNull(cmd.errorMessage) },
        ...(hold.returnOf ? { returnClaim: { movementId: hold.returnOf, companyId, delta: -hold.amount } } : {}),
        event: postingEvent(deps, {
          postingId,
          kind: draft.kind,
          companyId,
          rail: hold.rail,
          movementId: hold.movementId,
          holdId: hold.id,
          entries: draft.entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      },
      applied: (o) => ({ hold: o.hold!, movement: o.movement, replayed: false }),
      replay,
      rejected: closed,
    });
  }
}
