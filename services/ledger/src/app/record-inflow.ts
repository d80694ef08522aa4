import { AppError } from '@wallet/platform';
import { isZeroFee, type FeeBreakdown } from '../domain/fees.js';
import { inflowAmounts } from '../domain/movements.js';
import { inflowPosting, unassignedInflowPosting } from '../domain/postings.js';
import { inflowRoute, type InflowSource } from '../domain/rails.js';
import { supersedeCorrection } from './corrections.js';
import type { LedgerDeps } from './deps.js';
import { postingEvent } from './events.js';
import { runIdempotentPosting } from './idempotent-posting.js';
import { checkFee, checkMovementSpec, type MovementSpecCommand } from './movement-spec.js';
import type { PostingWrite } from './ports.js';
import { replayPosting, storedDetails, walletMissing, type PostingResult } from './results.js';
import { requestHash } from './request-hash.js';
import { Problems, checkIdempotencyKey, checkPositive, orNull, requireCompany } from './validation.js';

export interface InflowCommand {
  idempotencyKey: string;
  source: string;
  grossCents: bigint;
  fee?: FeeBreakdown;
  assign: boolean;
  movement?: MovementSpecCommand;
  /**
   * The external movement this inflow books (`externalMovementRef`: "pse:our:<deposit id>:payment",
   * "breb-inbound:<provider id>"); not part of the request hash. Once the inflow is written, a live
   * correction of that movement (a break accepted before its owner booked it) is undone.
   */
  externalMovement?: string;
  /** BREB assigned only: the gross comes out of unassigned_funds(BREB) (a held payment assigned later), not breb_settlement. */
  fromUnassigned?: boolean;
}

/**
 * Money received for a company. Assigned (PSE paid, Bre-B to a live key): settlement −G,
 * wallet_available +N, fee_revenue +fee, iva_payable +IVA, and a COMPLETED TRANSFER_IN movement.
 * Unassigned (Bre-B to a deleted or suspended key): breb_settlement −G, unassigned_funds:BREB +G;
 * the company's wallet and listing are untouched, so no movement is created.
 * Assigned from unassigned funds (a held Bre-B payment assigned to its company later, `fromUnassigned`):
 * unassigned_funds:BREB −G, wallet_available +N, fee_revenue +fee, iva_payable +IVA, and its movement.
 */
export class RecordInflow {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: InflowCommand): Promise<PostingResult> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    checkIdempotencyKey(p, cmd.idempotencyKey);
    if (cmd.source !== 'PSE' && cmd.source !== 'BREB') p.add('source', 'must be PSE or BREB');
    checkPositive(p, 'grossCents', cmd.grossCents);
    checkFee(p, 'fee', cmd.fee, cmd.assign);
    if (!cmd.assign && cmd.fee && !isZeroFee(cmd.fee)) p.add('fee', 'must be zero when the inflow is not assigned');
    if (!cmd.assign && cmd.source === 'PSE') p.add('assign', "a PSE inflow is always assigned to its deposit's company");
    if (cmd.fromUnassigned && (!cmd.assign || cmd.source !== 'BREB')) p.add('fromUnassigned', 'only for an assigned BREB inflow');
    checkMovementSpec(p, cmd.movement, ['COMPLETED']);
    p.throwIfAny();
    const source = cmd.source as InflowSource;
    if (cmd.assign && cmd.fee!.totalCharged >= cmd.grossCents) throw new AppError('FEE_EXCEEDS_AMOUNT');

    const deps = this.deps;
    const route = inflowRoute(source);
    const postingId = deps.newId();
    const { externalMovement, ...hashed } = cmd;
    const hash = requestHash('inflow', companyId, hashed);
    let write: PostingWrite;
    if (cmd.assign) {
      const fee = cmd.fee!;
      const spec = cmd.movement;
      const movementId = orNull(spec?.id)?.toLowerCase() ?? deps.newId();
      const draft = inflowPosting(companyId, source, cmd.grossCents, fee.subtotalFee, fee.ivaAmount, cmd.fromUnassigned === true);
      write = {
        posting: {
          id: postingId,
          kind: draft.kind,
          idempotencyKey: cmd.idempotencyKey,
          requestHash: hash,
          companyId,
          rail: route.walletRail,
          movementId,
          holdId: null,
        },
        entries: draft.entries,
        wallet: draft.wallet,
        newMovement: {
          id: movementId,
          companyId,
          type: 'TRANSFER_IN',
          rail: route.movementRail,
          walletRail: route.walletRail,
          status: 'COMPLETED',
          completed: true,
          ...inflowAmounts(cmd.grossCents, fee.subtotalFee, fee.ivaAmount),
          reference: orNull(spec?.reference),
          apiKeyId: orNull(spec?.apiKeyId),
          details: storedDetails(spec?.details),
        },
        event: postingEvent(deps, {
          postingId,
          kind: draft.kind,
          companyId,
          rail: route.walletRail,
          movementId,
          holdId: null,
          entries: draft.entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      };
    } else {
      const draft = unassignedInflowPosting(cmd.grossCents);
      write = {
        posting: {
          id: postingId,
          kind: draft.kind,
          idempotencyKey: cmd.idempotencyKey,
          requestHash: hash,
          companyId,
          rail: route.walletRail,
          movementId: null,
          holdId: null,
        },
        entries: draft.entries,
        wallet: null,
        event: postingEvent(deps, {
          postingId,
          kind: draft.kind,
          companyId,
          rail: route.walletRail,
          movementId: null,
          holdId: null,
          entries: draft.entries,
          idempotencyKey: cmd.idempotencyKey,
        }),
      };
    }
    const result = await runIdempotentPosting(deps, {
      idempotencyKey: cmd.idempotencyKey,
      requestHash: hash,
      write,
      applied: (o) => ({ postingId, movement: o.movement, replayed: false }),
      replay: (existing) => replayPosting(deps, companyId, existing),
      rejected: async () => {
        throw await walletMissing(deps, companyId, route.walletRail);
      },
    });
    if (externalMovement && !result.replayed) await supersedeCorrection(deps, externalMovement, cmd.idempotencyKey);
    return result;
  }
}
