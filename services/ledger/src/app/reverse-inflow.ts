import { AppError } from '@wallet/platform';
import { reversalPosting } from '../domain/postings.js';
import { inflowRoute, type InflowSource } from '../domain/rails.js';
import { supersedeCorrection } from './corrections.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { replayPosting, type PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { MAX_ERROR_MESSAGE, Problems, checkIdempotencyKey, checkText, orNull, requireCompany } from './validation.js';

/** Why a payment with returns is not reversed (INVALID_STATE_TRANSITION). */
export const RETURNS_CLAIMED = 'El pago tiene devoluciones al pagador, hechas o en curso: su reversión por el proveedor queda para revisión de un operador.';

export interface ReverseInflowCommand {
  idempotencyKey: string;
  /** The RecordInflow idempotency key of the inflow being reversed. */
  originalIdempotencyKey: string;
  errorMessage?: string;
  /** As RecordInflow's (one correction per external movement): "pse:<provider id>:reversal"; not part of the request hash. */
  externalMovement?: string;
}

/**
 * A provider reversal of an assigned inflow (LEDGER.md "PSE reversed"): one posting whose entries
 * negate the inflow posting's (settlement +G; wallet_available −N; fee_revenue −fee; iva_payable −IVA),
 * the movement COMPLETED → REVERSED in the same statement (its guard: an inflow is reversed at most
 * once, and not while a return of it is claimed, `returned_cents` > 0: refused, see RETURNS_CLAIMED). The wallet debit is unconditional: the one posting allowed to take available below zero.
 * Company-scoped: another company's inflow reads like an unknown one (TRANSACTION_NOT_FOUND).
 */
export class ReverseInflow {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: ReverseInflowCommand): Promise<PostingResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (!cmd.originalIdempotencyKey) p.add('originalIdempotencyKey', 'is required');
    else if (cmd.originalIdempotencyKey === cmd.idempotencyKey) p.add('originalIdempotencyKey', 'must differ from idempotencyKey');
    checkText(p, 'errorMessage', cmd.errorMessage, MAX_ERROR_MESSAGE);
    p.throwIfAny();

    const deps = this.deps;
    const original = await deps.store.findPosting(cmd.originalIdempotencyKey);
    if (!original || original.companyId !== companyId || original.kind !== 'inflow' || !original.movementId) {
      throw new AppError('TRANSACTION_NOT_FOUND');
    }
    const movement = await deps.store.getMovement(companyId, original.movementId);
    if (!movement || movement.type !== 'TRANSFER_IN') throw new AppError('TRANSACTION_NOT_FOUND');
    const { externalMovement, ...hashed } = cmd;
    const hash = requestHash('reversal', companyId, hashed);
    const replay = (existing: Parameters<typeof replayPosting>[2]) => replayPosting(deps, companyId, existing);
    const notReversible = () => {
      throw new AppError('INVALID_STATE_TRANSITION', `El movimiento no se puede reversar (${movement.status}).`);
    };
    // A provider that takes back a payment part of which was already returned to the payer (or is being
    // returned) contradicts our books: reversing it whole would debit the company for the return twice.
    // Refused for an operator (the owner parks a REVERSAL_REFUSED money exception); once the return has
    // failed and let go of its claim, the same reversal applies.
    const returnsClaimed = () => {
      throw new AppError('INVALID_STATE_TRANSITION', RETURNS_CLAIMED);
    };
    const refused = async () => {
      const now = await deps.store.inflowReturns(companyId, movement.id);
      return now?.status === 'COMPLETED' && now.returnedCents > 0n ? returnsClaimed() : notReversible();
    };
    if (movement.status !== 'COMPLETED') {
      return runIdempotentPosting(deps, {
        idempotencyKey: cmd.idempotencyKey,
        requestHash: hash,
        write: null,
        applied: () => notReversible(),
        replay,
        rejected: notReversible,
      });
    }
    const source: InflowSource = movement.rail === 'PSE' ? 'PSE' : 'BREB';
    const route = inflowRoute(source);
    const draft = reversalPosting(companyId, source, movement.amount, movement.totalFee, movement.ivaAmount);
    const postingId = deps.newId();
    const result = await runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write: {
        posting: {
          id: postingId,
          kind: draft.kind,
          idempotencyKey: cmd.idempotencyKey,
          requestHash: hash,
          companyId,
          rail: route.walletRail,
          movementId: movement.id,
          holdId: null,
        },
        entries: draft.entries,
        wallet: draft.wallet,
        reverseMovement: { id: movement.id, companyId, errorMessage: orNull(cmd.errorMessage) },
        event: postingEvent(deps, {
          postingId,
          kind: draft.kind,
          companyId,
          rail: route.walletRail,
          movementId: movement.id,
          holdId: null,
          entries: draft.entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      },
      applied: (o) => ({ postingId, movement: o.movement, replayed: false }),
      replay,
      // The guard failed: a concurrent reversal under another key won, or a return of the payment is claimed.
      rejected: refused,
    });
    if (externalMovement && !result.replayed) await supersedeCorrection(deps, externalMovement, cmd.idempotencyKey);
    return result;
  }
}
