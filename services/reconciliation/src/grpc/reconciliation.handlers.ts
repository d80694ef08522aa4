import { moneyExceptionToProto, type AccessPolicy, type AsyncService } from '@wallet/platform';
import type { reconciliationV1 } from '@wallet/proto';
import type { ReconciliationUseCases } from '../app/use-cases.js';
import { breakToProto, runToProto } from '../app/messages.js';

/** The ReconciliationService RPCs: decode, call one use case, encode. */
export function reconciliationHandlers(uc: ReconciliationUseCases): AsyncService<reconciliationV1.ReconciliationServiceServer> {
  return {
    async startRun(req, ctx) {
      // Who asked: as the gateway says, else the operator of the signed caller context.
      const by = req.requestedBy || (ctx.principal?.kind === 'admin' && ctx.principal.operator ? `operator:${ctx.principal.operator}` : 'admin');
      const r = await uc.startRun.execute(req.rail, req.date, by);
      return { run: runToProto(r.run), alreadyRunning: r.alreadyRunning };
    },
    async getRun(req) {
      return runToProto(await uc.getRun.execute(req.id));
    },
    async listRuns(req) {
      const r = await uc.listRuns.execute({ rail: req.rail, date: req.date, status: req.status, limit: req.limit, cursor: req.cursor });
      return { items: r.items.map(runToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async listBreaks(req) {
      const r = await uc.listBreaks.execute({
        runId: req.runId,
        rail: req.rail,
        date: req.date,
        status: req.status,
        kind: req.kind,
        limit: req.limit,
        cursor: req.cursor,
      });
      return { items: r.items.map(breakToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async listExceptions(req) {
      const r = await uc.listExceptions.execute(req);
      return { items: r.items.map(moneyExceptionToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async resolveException(req) {
      return moneyExceptionToProto(await uc.resolveException.execute({ id: req.id, action: req.action, note: req.note, resolvedBy: req.resolvedBy }));
    },
  };
}

/** Who may call each RPC: the gateway for an operator (admin), nobody else. */
export const reconciliationAccess: AccessPolicy<AsyncService<reconciliationV1.ReconciliationServiceServer>> = {
  startRun: ['gateway:admin'],
  getRun: ['gateway:admin'],
  listRuns: ['gateway:admin'],
  listBreaks: ['gateway:admin'],
  listExceptions: ['gateway:admin'],
  resolveException: ['gateway:admin'],
};
