import { AppError } from '@wallet/platform';
import { COMMITTABLE_STATUSES } from '../domain/movements.js';
import { commitPosting } from '../domain/postings.js';
import { isWalletRail, outflowFeeOperation, type FeeOperation, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import type { PostingWrite } from './ports.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { replayHold, type HoldResult } from './results.js';
import { requestHash } from './request-hash.js';
import { Problems, checkIdempotencyKey, isUuid, requireCompany } from './validation.js';

export interface CommitCommand {
  idempotencyKey: string;
  holdId: string;
  /**
   * The hold as the caller reserved it (optional). When it is the open hold, the commit is one
   * statement without a read; otherwise the hold is read and the answer is the same as without it.
   * Never part of the request hash.
   */
  expected?: { rail: string; amount: bigint; fee: bigint; iva: bigint; movementId: string };
}

/**
 * The rail confirmed a send: pending_out −T; rail_clearing +amount; fee_revenue +fee;
 * iva_payable +IVA; movement COMPLETED. Applies only while the hold is OPEN (the guard is the
 * conditional hold update), so two commits, or a commit and a release, never both apply.
 */
export class CommitHold {
  /** `send`: Commit (the transfer service's holds); `return`: CommitReturn (holds made by ReserveReturn only). */
  constructor(
    private readonly deps: LedgerDeps,
    private readonly holds: HoldKind = 'send',
  ) {}

  async execute(caller: string | undefined, cmd: CommitCommand): Promise<HoldResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!cmd.holdId) p.add('holdId', 'is required');
    p.throwIfAny();

    const deps = this.deps;
    const hash = commitRequestHash(companyId, cmd);
    const unread = this.holds === 'send' ? await this.commitUnread(companyId, cmd, hash) : undefined;
    if (unread) return unread;
    const hold = isUuid(cmd.holdId) ? await deps.store.getHold(companyId, cmd.holdId.toLowerCase()) : undefined;
    if (!hold || !isKind(hold, this.holds)) throw new AppError('HOLD_NOT_FOUND');
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
    if (!COMMITTABLE_STATUSES.includes(hold.movementStatus)) {
      throw new AppError('INVALID_STATE_TRANSITION', `La transferencia no se puede completar en estado ${hold.movementStatus}.`);
    }
    return runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write: commitWrite(deps, companyId, cmd.idempotencyKey, hash, hold),
      applied: (o) => ({ hold: o.hold!, movement: o.movement, replayed: false }),
      replay,
      rejected: closed,
    });
  }

  /**
   * The common case without a read (docs/benchmarks.md "Cost per send"): the caller's expectation names the open hold, its
   * amounts, rail and movement. The posting is built from the expectation and guarded by it (the
   * hold row must have exactly those columns, be OPEN, and its movement be committable), so when it
   * applies it is the posting the read path would have written. Undefined when it did not apply for
   * any reason (a mismatch, a closed hold, a twin, a replay): the read path then answers.
   */
  private async commitUnread(companyId: string, cmd: CommitCommand, hash: string): Promise<HoldResult | undefined> {
    const write = expectedCommitWrite(this.deps, companyId, cmd, hash);
    if (!write) return undefined;
    const outcome = await this.deps.store.recordPosting(write);
    if (outcome.status !== 'applied') return undefined;
    this.deps.events.nudge();
    return { hold: outcome.hold!, movement: outcome.movement, replayed: false };
  }
}

/** A Commit's request hash (its expectation is not part of it): CommitBatch's items hash the same. */
export function commitRequestHash(companyId: string, cmd: CommitCommand): string {
  return requestHash('commit', companyId, { idempotencyKey: cmd.idempotencyKey, holdId: cmd.holdId });
}

/**
 * The commit of `cmd`'s hold as its caller expects it, written without reading the hold first: the
 * posting is built from the expectation and guarded by it (the hold row must have exactly those
 * columns, be OPEN, and its movement be committable), so when it applies it is the posting the read
 * path would have written. Undefined when the expectation is missing or not a possible hold.
 */
export function expectedCommitWrite(deps: LedgerDeps, companyId: string, cmd: CommitCommand, hash: string): PostingWrite | undefined {
  const x = cmd.expected;
  if (!x || !isUuid(cmd.holdId) || !isUuid(x.movementId) || !isWalletRail(x.rail)) return undefined;
  if (x.amount <= 0n || x.fee < 0n || x.iva < 0n) return undefined;
  const rail: WalletRail = x.rail;
  const hold = {
    id: cmd.holdId.toLowerCase(),
    rail,
    amount: x.amount,
    fee: x.fee,
    iva: x.iva,
    feeOperation: outflowFeeOperation(rail),
    movementId: x.movementId.toLowerCase(),
  };
  const write = commitWrite(deps, companyId, cmd.idempotencyKey, hash, hold);
  write.closeHold!.expect = { ...hold, movementStatuses: COMMITTABLE_STATUSES };
  return write;
}

/** The records of a commit of `hold`: posting, entries, wallet change, hold closed, movement COMPLETED, event. */
function commitWrite(
  deps: LedgerDeps,
  companyId: string,
  idempotencyKey: string,
  hash: string,
  hold: {
    id: string;
    rail: WalletRail;
    amount: bigint;
    fee: bigint;
    iva: bigint;
    feeOperation: FeeOperation;
    movementId: string;
    returnAccount?: string | null;
  },
): PostingWrite {
  const postingId = deps.newId();
  const draft = commitPosting(companyId, hold.rail, hold.feeOperation, hold);
  return {
    posting: { id: postingId, kind: draft.kind, idempotencyKey, requestHash: hash, companyId, rail: hold.rail, movementId: hold.movementId, holdId: hold.id },
    entries: draft.entries,
    wallet: draft.wallet,
    closeHold: { id: hold.id, companyId, status: 'COMMITTED' },
    movementUpdate: { id: hold.movementId, companyId, status: 'COMPLETED', completed: true, errorMessage: null },
    event: postingEvent(deps, {
      postingId,
      kind: draft.kind,
      companyId,
      rail: hold.rail,
      movementId: hold.movementId,
      holdId: hold.id,
      entries: draft.entries,
      idempotencyKey,
    }),
  };
}

/** Which holds a Commit or Release serves: a send's (the transfer service) or a return's (ReserveReturn). */
export type HoldKind = 'send' | 'return';

/** The hold is of the kind the command serves (the other kind reads as not found). */
export function isKind(hold: { returnOf?: string | null }, kind: HoldKind): boolean {
  return Boolean(hold.returnOf) === (kind === 'return');
}
