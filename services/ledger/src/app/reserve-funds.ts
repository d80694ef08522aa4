import { AppError } from '@wallet/platform';
import { computeFees, ZERO_FEE_SCHEDULE, type FeeBreakdown } from '../domain/fees.js';
import { outflowAmounts, RESERVE_STATUSES, type MovementStatus } from '../domain/movements.js';
import { holdTotal, reservePosting } from '../domain/postings.js';
import { RAIL_CAPS, isWalletRail, outflowFeeOperation, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { PostingWrite } from './ports.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { checkFee, checkMovementSpec, isUnspecified, type MovementSpecCommand } from './movement-spec.js';
import { debitRefused, replayHold, storedDetails, type HoldResult } from './results.js';
import { requestHash } from './request-hash.js';
import { Problems, checkIdempotencyKey, checkPositive, orNull, requireCompany } from './validation.js';

export interface ReserveCommand {
  idempotencyKey: string;
  rail: string;
  amount: bigint;
  fee?: FeeBreakdown;
  /**
   * Instead of `fee`: the ledger computes the fee from the company's schedule for the
   * rail's outflow, as ComputeFees would, saving the sender that call. Hashed as sent.
   */
  computeFee?: { ivaApplicable: boolean };
  movement?: MovementSpecCommand;
}

/**
 * A send accepted (or awaiting approval): wallet_available −T, wallet_pending_out +T, with
 * T = amount + fee + IVA, in ONE conditional statement (available ≥ T, never negative, no
 * read-modify-write), together with the hold, the TRANSFER_OUT movement, the idempotency record
 * and the `ledger.reserved` event.
 */
export class ReserveFunds {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: ReserveCommand): Promise<HoldResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkReserveCommand(p, cmd, { computeFee: true });
    p.throwIfAny();
    const rail = cmd.rail as WalletRail;
    const capped = capExceeded(rail, cmd.amount);
    if (capped) throw new AppError(capped);
    const deps = this.deps;
    const fee = cmd.fee ?? (await this.scheduledFee(companyId, rail, cmd.amount, cmd.computeFee!.ivaApplicable));
    const { write, hash } = reserveWrite(deps, companyId, cmd, fee);
    return runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write,
      applied: (o) => ({ hold: o.hold!, movement: o.movement, replayed: false }),
      replay: (existing) => replayHold(deps, companyId, existing),
      rejected: () => debitRefused(deps, companyId, rail),
    });
  }

  /** The fee ComputeFees would answer for this send (the schedules are read from memory). */
  private async scheduledFee(companyId: string, rail: WalletRail, amount: bigint, ivaApplicable: boolean): Promise<FeeBreakdown> {
    const op = outflowFeeOperation(rail);
    const schedule = (await this.deps.store.feeSchedules(companyId, [op])).get(op) ?? ZERO_FEE_SCHEDULE;
    return computeFees(schedule, amount, ivaApplicable);
  }
}

/**
 * What Reserve checks of one send (ReserveBatch checks every item the same way, under `items.<i>.`).
 * The fee is given (`fee`) or, where `allow.computeFee`, asked for (`computeFee`): exactly one.
 */
export function checkReserveCommand(p: Problems, cmd: ReserveCommand, allow: { computeFee: boolean }): void {
  checkIdempotencyKey(p, cmd.idempotencyKey);
  if (!isWalletRail(cmd.rail)) p.add('rail', 'must be BREB or ACH');
  checkPositive(p, 'amount', cmd.amount);
  if (cmd.computeFee && !allow.computeFee) p.add('computeFee', 'is not taken here; send fee');
  else if (cmd.computeFee && cmd.fee) p.add('fee', 'is sent instead of computeFee, not with it');
  else if (!cmd.computeFee) checkFee(p, 'fee', cmd.fee, true);
  checkMovementSpec(p, cmd.movement, RESERVE_STATUSES);
}

/**
 * The rail's per-transfer cap, when the amount is over it. No FEE_EXCEEDS_AMOUNT here: an outflow's
 * fee is charged on top (the wallet is debited amount + fee + IVA, CONTRACT §2), so a fee at or above
 * the amount is legitimate. The check stays for inflows (RecordInflow), where the fee comes out of the gross.
 */
export function capExceeded(rail: WalletRail, amount: bigint): 'AMOUNT_EXCEEDS_BREB_CAP' | 'AMOUNT_EXCEEDS_ACH_CAP' | null {
  if (amount <= RAIL_CAPS[rail]) return null;
  return rail === 'BREB' ? 'AMOUNT_EXCEEDS_BREB_CAP' : 'AMOUNT_EXCEEDS_ACH_CAP';
}

/**
 * The records of one checked reserve: posting, entries, wallet change, hold, TRANSFER_OUT movement
 * and `ledger.reserved` event, with the request hash of the command. Shared by Reserve and
 * ReserveBatch, so that a batch item and a single Reserve under the same key hash alike (a Reserve
 * retry of a batch item replays its hold) and write the same rows.
 */
export function reserveWrite(deps: LedgerDeps, companyId: string, cmd: ReserveCommand, fee: FeeBreakdown = cmd.fee!): { write: PostingWrite; hash: string } {
  const rail = cmd.rail as WalletRail;
  const spec = cmd.movement;
  const status: MovementStatus = isUnspecified(spec?.status) ? 'PENDING' : (spec!.status as MovementStatus);
  const postingId = deps.newId();
  const holdId = deps.newId();
  const movementId = orNull(spec?.id)?.toLowerCase() ?? deps.newId();
  const amounts = { amount: cmd.amount, fee: fee.subtotalFee, iva: fee.ivaAmount };
  const draft = reservePosting(companyId, rail, amounts);
  const hash = requestHash(draft.kind, companyId, cmd);
  const write: PostingWrite = {
    posting: { id: postingId, kind: draft.kind, idempotencyKey: cmd.idempotencyKey, requestHash: hash, companyId, rail, movementId, holdId },
    entries: draft.entries,
    wallet: draft.wallet,
    newHold: {
      id: holdId,
      companyId,
      rail,
      ...amounts,
      total: holdTotal(amounts),
      fixedFee: fee.fixedFee,
      feeOperation: outflowFeeOperation(rail),
      movementId,
    },
    newMovement: {
      id: movementId,
      companyId,
      type: 'TRANSFER_OUT',
      rail,
      walletRail: rail,
      status,
      completed: false,
      ...outflowAmounts(cmd.amount, fee.subtotalFee, fee.ivaAmount),
      reference: orNull(spec?.reference),
      apiKeyId: orNull(spec?.apiKeyId),
      details: storedDetails(spec?.details),
    },
    event: postingEvent(deps, { postingId, kind: draft.kind, companyId, rail, movementId, holdId, entries: draft.entries, idempotencyKey: cmd.idempotencyKey }),
  };
  return { write, hash };
}
