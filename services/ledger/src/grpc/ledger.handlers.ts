import type { AccessPolicy, AsyncService } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerUseCases } from '../app/use-cases.js';
import type { HoldResult, PostingResult } from '../app/results.js';
import {
  balanceAlertEventToProto,
  balanceAlertToProto,
  feeConfigToProto,
  feeFromProto,
  feeOperationName,
  feeToProto,
  holdToProto,
  inflowSourceName,
  movementSpecFromProto,
  movementStatusName,
  movementToProto,
  moveToProto,
  movementTypeName,
  railName,
  reserveFromProto,
  commitFromProto,
  toProtoRail,
  walletToProto,
} from './mappers.js';

function postingResult(r: PostingResult): ledgerV1.PostingResult {
  return { postingId: r.postingId, ...(r.movement ? { movement: movementToProto(r.movement) } : {}), replayed: r.replayed };
}

function holdResult(r: HoldResult): ledgerV1.HoldResult {
  return { hold: holdToProto(r.hold), ...(r.movement ? { movement: movementToProto(r.movement) } : {}), replayed: r.replayed };
}

const opt = <K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } => (v === undefined ? {} : ({ [key]: v } as { [P in K]?: V }));

/**
 * The LedgerService RPCs: decode, call one use case, encode. The company always comes from the
 * call's `x-company-id` metadata (ctx.companyId), never from the request. Errors are AppErrors
 * that the platform maps to gRPC status + `x-error-code` once.
 */
export function ledgerHandlers(uc: LedgerUseCases): AsyncService<ledgerV1.LedgerServiceServer> {
  return {
    async openWallets(req, ctx) {
      const wallets = await uc.openWallets.execute(ctx.companyId, { rails: req.rails.map(railName) });
      return { wallets: wallets.map(walletToProto) };
    },

    async getBalances(req, ctx) {
      const wallets = await uc.getBalances.execute(ctx.companyId, { ivaApplicable: req.ivaApplicable });
      return { wallets: wallets.map(walletToProto) };
    },

    async reserveBatch(req, ctx) {
      const r = await uc.reserveBatch.execute(ctx.companyId, { items: req.items.map(reserveFromProto) });
      return { holdIds: r.holdIds, replayed: r.replayed };
    },

    async computeFeesBatch(req, ctx) {
      const fees = await uc.computeFeesBatch.execute(ctx.companyId, {
        operation: feeOperationName(req.operation),
        amounts: req.amounts,
        ivaApplicable: req.ivaApplicable,
      });
      return { fees: fees.map(feeToProto) };
    },

    async getBalanceAt(req, ctx) {
      const b = await uc.getBalanceAt.execute(ctx.companyId, { rail: railName(req.rail), at: req.at });
      return {
        rail: toProtoRail(b.rail),
        at: b.at,
        availableCents: b.availableCents,
        pendingOutCents: b.pendingOutCents,
        postings: b.postings,
      };
    },

    async *streamStatement(req, ctx) {
      const pages = await uc.streamStatement.open(ctx.companyId, { rail: railName(req.rail), from: req.from, to: req.to, batchSize: req.batchSize });
      for await (const rows of pages) {
        yield {
          lines: rows.map((l) => {
            const line: ledgerV1.StatementLine = {
              postingId: l.postingId,
              postingKind: l.postingKind,
              postedAt: l.postedAt,
              effectCents: l.effectCents,
              feeCents: l.feeCents,
              ivaCents: l.ivaCents,
            };
            if (l.movement) line.movement = movementToProto(l.movement);
            return line;
          }),
        };
      }
    },

    async credit(req, ctx) {
      return postingResult(
        await uc.credit.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          rail: railName(req.rail),
          amountCents: req.amountCents,
          ...opt('reference', req.reference),
          ...opt('apiKeyId', req.apiKeyId),
          ...opt('description', req.description),
        }),
      );
    },

    async chargeFee(req, ctx) {
      return postingResult(
        await uc.chargeFee.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          rail: railName(req.rail),
          operation: feeOperationName(req.operation),
          feeCents: req.feeCents,
          ivaCents: req.ivaCents,
          ...opt('reference', req.reference),
          ...opt('description', req.description),
        }),
      );
    },

    async move(req, ctx) {
      return moveToProto(
        await uc.move.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          from: railName(req.fromRail),
          to: railName(req.toRail),
          amountCents: req.amountCents,
          ...opt('reference', req.reference),
          ...opt('description', req.description),
          ...opt('apiKeyId', req.apiKeyId),
        }),
      );
    },

    async getMove(req, ctx) {
      return moveToProto(await uc.getMove.execute(ctx.companyId, req.moveId));
    },

    async reserve(req, ctx) {
      return holdResult(await uc.reserve.execute(ctx.companyId, reserveFromProto(req)));
    },

    async voidReserve(req, ctx) {
      const r = await uc.voidReserve.execute(ctx.companyId, { idempotencyKey: req.idempotencyKey, rail: railName(req.rail) });
      return r.voided ? { voided: true } : { voided: false, hold: holdToProto(r.hold) };
    },

    async postCorrection(req, ctx) {
      const type = req.type === ledgerV1.CorrectionType.WRITE_OFF_PAYOUT ? 'WRITE_OFF_PAYOUT' : '';
      return postingResult(
        await uc.postCorrection.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          type,
          rail: railName(req.rail),
          amount: req.amount,
          reason: req.reason,
          movement: req.movement,
          caseId: req.caseId,
        }),
      );
    },

    async postClearingAdjustment(req) {
      // Service level: the caller's company, if any, is not used (the posting belongs to no company).
      return postingResult(
        await uc.postClearingAdjustment.execute({
          idempotencyKey: req.idempotencyKey,
          clearing: req.clearing,
          deltaCents: req.deltaCents,
          reason: req.reason,
          movement: req.movement,
          caseId: req.caseId,
        }),
      );
    },

    async reverseCorrection(req) {
      // Service level, as PostClearingAdjustment: the correction's own company and rail are used.
      return postingResult(await uc.reverseCorrection.execute({ idempotencyKey: req.idempotencyKey, correctionKey: req.correctionKey, reason: req.reason }));
    },

    async commit(req, ctx) {
      return holdResult(await uc.commit.execute(ctx.companyId, commitFromProto(req)));
    },

    async commitBatch(req, ctx) {
      const r = await uc.commitBatch.execute(ctx.companyId, { items: req.items.map(commitFromProto) });
      return { items: r.items.map((i) => (i.completedAt ? { applied: i.applied, completedAt: i.completedAt } : { applied: i.applied })) };
    },

    async reserveReturn(req, ctx) {
      const movement = movementSpecFromProto(req.movement);
      return holdResult(
        await uc.reserveReturn.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          inflowIdempotencyKey: req.inflowIdempotencyKey,
          amount: req.amount,
          ...(movement !== undefined ? { movement } : {}),
        }),
      );
    },

    async commitReturn(req, ctx) {
      return holdResult(await uc.commitReturn.execute(ctx.companyId, { idempotencyKey: req.idempotencyKey, holdId: req.holdId }));
    },

    async releaseReturn(req, ctx) {
      return holdResult(
        await uc.releaseReturn.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          holdId: req.holdId,
          finalStatus: 'FAILED',
          ...opt('errorMessage', req.errorMessage),
        }),
      );
    },

    async release(req, ctx) {
      return holdResult(
        await uc.release.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          holdId: req.holdId,
          finalStatus: movementStatusName(req.finalStatus),
          ...opt('errorMessage', req.errorMessage),
        }),
      );
    },

    async setMovementStatus(req, ctx) {
      return movementToProto(
        await uc.setMovementStatus.execute(ctx.companyId, {
          movementId: req.movementId,
          status: movementStatusName(req.status),
          expectedStatus: movementStatusName(req.expectedStatus),
        }),
      );
    },

    async setMovementStatuses(req, ctx) {
      return uc.setMovementStatuses.execute(ctx.companyId, {
        movementIds: req.movementIds,
        status: movementStatusName(req.status),
        expectedStatus: movementStatusName(req.expectedStatus),
      });
    },

    async recordInflow(req, ctx) {
      return postingResult(
        await uc.recordInflow.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          source: inflowSourceName(req.source),
          grossCents: req.grossCents,
          assign: req.assign,
          ...opt('fee', feeFromProto(req.fee)),
          ...opt('movement', movementSpecFromProto(req.movement)),
          ...opt('externalMovement', req.externalMovement || undefined),
          // Only when set: the request hash of every other inflow stays what it was (replays keep matching).
          ...(req.fromUnassigned ? { fromUnassigned: true } : {}),
        }),
      );
    },

    async returnUnassignedInflow(req, ctx) {
      return postingResult(
        await uc.returnUnassignedInflow.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          originalIdempotencyKey: req.originalIdempotencyKey,
          grossCents: req.grossCents,
        }),
      );
    },

    async reverseInflow(req, ctx) {
      return postingResult(
        await uc.reverseInflow.execute(ctx.companyId, {
          idempotencyKey: req.idempotencyKey,
          originalIdempotencyKey: req.originalIdempotencyKey,
          ...opt('errorMessage', req.errorMessage),
          ...opt('externalMovement', req.externalMovement || undefined),
        }),
      );
    },

    async computeFees(req, ctx) {
      return feeToProto(
        await uc.computeFees.execute(ctx.companyId, {
          operation: feeOperationName(req.operation),
          amount: req.amount,
          ivaApplicable: req.ivaApplicable,
        }),
      );
    },

    async setFeeConfig(req) {
      return feeConfigToProto(
        await uc.setFeeConfig.execute({
          operation: feeOperationName(req.operation),
          fixedFeeCents: req.fixedFeeCents,
          variableBps: req.variableBps,
          ...opt('companyId', req.companyId),
        }),
      );
    },

    async listMovements(req, ctx) {
      const r = await uc.listMovements.execute(ctx.companyId, {
        page: req.page,
        limit: req.limit,
        ...opt('type', req.type === undefined ? undefined : movementTypeName(req.type)),
        ...opt('rail', req.rail === undefined ? undefined : railName(req.rail)),
        ...opt('from', req.from),
        ...opt('to', req.to),
        ...opt('cursor', req.cursor),
      });
      return { items: r.items.map(movementToProto), hasMore: r.hasMore, ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },

    async getMovement(req, ctx) {
      return movementToProto(await uc.getMovement.execute(ctx.companyId, { id: req.id }));
    },

    async setBalanceAlert(req, ctx) {
      return balanceAlertToProto(
        await uc.setBalanceAlert.execute(ctx.companyId, {
          rail: railName(req.rail),
          lowThresholdCents: req.lowThresholdCents,
          ...opt('highThresholdCents', req.highThresholdCents),
          hysteresisCents: req.hysteresisCents,
        }),
      );
    },

    async getBalanceAlerts(_req, ctx) {
      return { alerts: (await uc.getBalanceAlerts.execute(ctx.companyId)).map(balanceAlertToProto) };
    },

    async listBalanceAlertEvents(req, ctx) {
      const r = await uc.listBalanceAlertEvents.execute(ctx.companyId, {
        ...opt('rail', req.rail === undefined ? undefined : railName(req.rail)),
        limit: req.limit,
        ...opt('cursor', req.cursor),
      });
      return { items: r.items.map(balanceAlertEventToProto), hasMore: r.hasMore, ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },

    async verifyJournal(req) {
      const r = await uc.verifyJournal.execute({
        ...opt('fromSeq', req.fromSeq),
        ...opt('fromHash', req.fromHash),
      });
      return {
        ok: r.ok,
        from: headToProto(r.from),
        head: headToProto(r.head),
        verified: BigInt(r.verified),
        pending: BigInt(r.pending),
        headsChecked: BigInt(r.headsChecked),
        ...(r.firstBroken ? { firstBroken: { seq: r.firstBroken.seq, postingId: r.firstBroken.postingId ?? '', reason: r.firstBroken.reason } } : {}),
        broken: BigInt(r.broken),
        outsideJournal: r.outsideJournal,
        durationMs: BigInt(r.durationMs),
      };
    },

    async getJournalHeads(req) {
      return { heads: (await uc.getJournalHeads.execute(req.fromDay, req.toDay)).map(headToProto) };
    },

    async checkInvariants() {
      const r = await uc.checkInvariants.execute();
      return { ok: r.ok, violations: r.violations, postings: r.postings, entries: r.entries, wallets: r.wallets };
    },
  };
}

/** Who may call each RPC of the ledger (mesh identities); everything else is refused before the handler. */
export const ledgerAccess: AccessPolicy<AsyncService<ledgerV1.LedgerServiceServer>> = {
  // provisioning, balances and the movement listing: the gateway, for API clients and operators
  openWallets: ['gateway:admin'],
  getBalances: ['gateway', 'transfer', 'collect-key'],
  // a past balance (GET /wallets/balance/history): API clients through the gateway only
  getBalanceAt: ['gateway'],
  streamStatement: ['gateway'],
  listMovements: ['gateway'],
  getMovement: ['gateway'],
  // money in by an operator, and the fee table: the gateway's /admin only
  credit: ['gateway:admin'],
  setFeeConfig: ['gateway:admin'],
  // the payout saga's postings: only the transfer service
  chargeFee: ['transfer'],
  // moves between a company's own wallets (docs/wallet-moves.md): API clients through the gateway
  move: ['gateway'],
  getMove: ['gateway'],
  reserve: ['transfer'],
  // bulk payouts (docs/batches.md): N holds in one command, and the fees of N amounts
  reserveBatch: ['transfer'],
  computeFeesBatch: ['transfer'],
  voidReserve: ['transfer'],
  postCorrection: ['transfer'],
  // a reconciliation break accepted on the provider's side (docs/reconciliation.md)
  postClearingAdjustment: ['reconciliation'],
  // undoing an accepted break's adjustment a later run matched (docs/reconciliation.md "Break life cycle")
  reverseCorrection: ['reconciliation'],
  commit: ['transfer'],
  commitBatch: ['transfer'],
  release: ['transfer'],
  setMovementStatus: ['transfer'],
  setMovementStatuses: ['transfer'],
  computeFees: ['transfer', 'pse-deposit', 'collect-key'],
  // collections: PSE deposits and Bre-B collect keys
  recordInflow: ['pse-deposit', 'collect-key'],
  reverseInflow: ['pse-deposit'],
  returnUnassignedInflow: ['collect-key'],
  // returns (devoluciones) of credited inflows (docs/returns.md): their own holds, never a send's
  reserveReturn: ['collect-key', 'pse-deposit'],
  commitReturn: ['collect-key', 'pse-deposit'],
  releaseReturn: ['collect-key', 'pse-deposit'],
  // balance alerts (docs/balance-alerts.md): API clients and the dashboard through the gateway
  setBalanceAlert: ['gateway'],
  getBalanceAlerts: ['gateway'],
  listBalanceAlertEvents: ['gateway'],
  // the invariant report: operator tools
  checkInvariants: ['ops'],
  // the tamper-evident journal (docs/journal.md): operators through the gateway's /admin, ops tools;
  // the daily heads: statements through the gateway
  verifyJournal: ['gateway:admin', 'ops'],
  getJournalHeads: ['gateway'],
};

function headToProto(h: { seq: bigint; hash: string; day?: string; recordedAt?: string }): ledgerV1.JournalHead {
  return { seq: h.seq, hash: h.hash, day: h.day ?? '', recordedAt: h.recordedAt ?? '' };
}
