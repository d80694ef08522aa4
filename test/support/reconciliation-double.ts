import { randomBytes } from 'node:crypto';
import {
  AppError,
  asyncService,
  createLogger,
  devMeshTls,
  listExceptionsPage,
  moneyExceptionToProto,
  resolveMoneyException,
  startGrpcServer,
  type AccessPolicy,
  type AsyncService,
  type CallContext,
  type GrpcServerHandle,
  type MoneyException,
} from '@wallet/platform';
import { reconciliationV1 } from '@wallet/proto';

/**
 * TEST DOUBLE of the remote reconciliation service (services/reconciliation, built on its own
 * branch): a real gRPC server speaking `wallet.reconciliation.v1.ReconciliationService` over the
 * mesh's mutual TLS with the identity `reconciliation` and the same access policy (operators
 * through the gateway only), so the gateway's client, caller context and error mapping are the
 * real ones. Its state is in memory and the tests script it (seed runs and breaks, say whether a
 * re-run still finds a break). It is never used outside tests.
 */
type Impl = AsyncService<reconciliationV1.ReconciliationServiceServer>;

const ADMIN_ONLY = ['gateway:admin'] as const;
const POLICY: AccessPolicy<Impl> = {
  startRun: ADMIN_ONLY,
  getRun: ADMIN_ONLY,
  listRuns: ADMIN_ONLY,
  listBreaks: ADMIN_ONLY,
  listExceptions: ADMIN_ONLY,
  resolveException: ADMIN_ONLY,
};
const RAILS = ['breb', 'ach', 'pse', 'breb-inbound'];
const KIND_ACTIONS = ['accept_provider', 'explain', 'rerun'];
const hex = () => randomBytes(16).toString('hex');

export interface SeededBreak {
  kind: string;
  ourId?: string;
  providerId?: string;
  ours: Record<string, unknown>;
  theirs: Record<string, unknown>;
  differenceCents: bigint;
  companyId?: string;
}

export interface ReconciliationDouble {
  address: string;
  runs: reconciliationV1.Run[];
  breaks: reconciliationV1.Break[];
  exceptions: MoneyException[];
  /** Every call as received: method, request, the caller's actor. */
  calls: Array<{ method: string; req: unknown; actor: string | undefined }>;
  /** Break keys a `rerun` still finds (BREAK_STILL_PRESENT). */
  stillPresent: Set<string>;
  /** Adds a finished run with its breaks (and their money exceptions); returns the run. */
  seedRun(rail: string, date: string, breaks: SeededBreak[], openedAt?: Date): reconciliationV1.Run;
  stop(): Promise<void>;
}

export async function startReconciliationDouble(): Promise<ReconciliationDouble> {
  const runs: reconciliationV1.Run[] = [];
  const breaks: reconciliationV1.Break[] = [];
  const exceptions: MoneyException[] = [];
  const calls: ReconciliationDouble['calls'] = [];
  const stillPresent = new Set<string>();
  const record = (method: string, req: unknown, ctx: CallContext) => calls.push({ method, req, actor: ctx.actor });

  const newRun = (rail: string, date: string, trigger: string, requestedBy: string): reconciliationV1.Run => ({
    id: `run_${hex()}`,
    rail,
    date,
    trigger,
    status: 'RUNNING',
    startedAt: new Date(),
    requestedBy,
    reportLines: 0n,
    reportAmountCents: 0n,
    reportFeeCents: 0n,
    oursCount: 0n,
    oursAmountCents: 0n,
    matchedCount: 0n,
    matchedAmountCents: 0n,
    breaksTotal: 0n,
    breaksOpened: 0n,
    breaksByKind: {},
    reportNetCents: 0n,
    oursNetCents: 0n,
  });
  const page = <T>(items: T[], limit: number, cursor: string | undefined) => {
    const from = cursor ? Number(Buffer.from(cursor, 'base64url').toString()) : 0;
    if (!Number.isInteger(from) || from < 0) throw new AppError('INVALID_REQUEST');
    const size = limit > 0 ? limit : 50;
    const slice = items.slice(from, from + size);
    return { items: slice, ...(from + size < items.length ? { nextCursor: Buffer.from(String(from + size)).toString('base64url') } : {}) };
  };
  // Newest first, then id descending, strictly after the cursor's (opened_at, id): as the services' SQL.
  const exceptionList: Parameters<typeof listExceptionsPage>[0] = async (q) => {
    const before = q.before ? { at: new Date(q.before.openedAt).getTime(), id: q.before.id } : undefined;
    return exceptions
      .filter((e) => (!q.status || e.status === q.status) && (!q.kind || e.kind === q.kind) && (!q.resourceIds || q.resourceIds.includes(e.resourceId)))
      .filter((e) => !before || e.openedAt.getTime() < before.at || (e.openedAt.getTime() === before.at && e.id < before.id))
      .sort((x, y) => y.openedAt.getTime() - x.openedAt.getTime() || (x.id < y.id ? 1 : -1))
      .slice(0, q.limit)
      .map((e) => ({ ...e, cursor: `${e.openedAt.toISOString().replace('Z', '000Z')}|${e.id}` }));
  };

  const impl: Impl = {
    async startRun(req, ctx) {
      record('startRun', req, ctx);
      if (!RAILS.includes(req.rail) || !/^\d{4}-\d{2}-\d{2}$/.test(req.date)) throw new AppError('INVALID_REQUEST');
      const running = runs.find((r) => r.rail === req.rail && r.date === req.date && r.status === 'RUNNING');
      if (running) return { run: running, alreadyRunning: true };
      const run = newRun(req.rail, req.date, 'ON_DEMAND', req.requestedBy);
      runs.unshift(run);
      return { run, alreadyRunning: false };
    },
    async getRun(req, ctx) {
      record('getRun', req, ctx);
      const run = runs.find((r) => r.id === req.id);
      if (!run) throw new AppError('RECONCILIATION_NOT_FOUND');
      return run;
    },
    async listRuns(req, ctx) {
      record('listRuns', req, ctx);
      const items = runs.filter((r) => (!req.rail || r.rail === req.rail) && (!req.date || r.date === req.date) && (!req.status || r.status === req.status));
      return page(items, req.limit, req.cursor);
    },
    async listBreaks(req, ctx) {
      record('listBreaks', req, ctx);
      const items = breaks.filter(
        (b) =>
          (!req.runId || b.runId === req.runId || b.lastSeenRunId === req.runId) &&
          (!req.status || b.status === req.status) &&
          (!req.kind || b.kind === req.kind),
      );
      return page(items, req.limit, req.cursor);
    },
    async listExceptions(req, ctx) {
      record('listExceptions', req, ctx);
      const res = await listExceptionsPage(
        exceptionList,
        ['MISSING_AT_PROVIDER', 'MISSING_IN_OUR_BOOKS', 'AMOUNT_MISMATCH', 'STATUS_MISMATCH', 'DUPLICATE', 'VALUE_DATE_MISMATCH'],
        (e) => moneyExceptionToProto({ ...e, actions: KIND_ACTIONS }),
        req,
      );
      return { items: res.items, ...(res.nextCursor ? { nextCursor: res.nextCursor } : {}) };
    },
    async resolveException(req, ctx) {
      record('resolveException', req, ctx);
      const exc = exceptions.find((e) => e.id === req.id);
      const brk = breaks.find((b) => b.exceptionId === req.id);
      if (exc && brk && exc.status === 'OPEN' && req.action === 'rerun' && stillPresent.has(brk.key)) throw new AppError('BREAK_STILL_PRESENT');
      const done = await resolveMoneyException(
        {
          get: async (id) => exceptions.find((e) => e.id === id),
          begin: async (id, r) => {
            const e = exceptions.find((x) => x.id === id && (x.status === 'OPEN' || (x.status === 'RESOLVING' && x.action === r.action)));
            if (!e) return undefined;
            Object.assign(e, { status: 'RESOLVING', action: r.action, note: r.note, resolvedBy: r.resolvedBy });
            return { ...e };
          },
          finish: async (id) => {
            const e = exceptions.find((x) => x.id === id && x.status === 'RESOLVING');
            if (!e) return undefined;
            Object.assign(e, { status: 'RESOLVED', resolvedAt: new Date() });
            if (brk) Object.assign(brk, { status: 'RESOLVED', resolvedAt: e.resolvedAt, resolution: e.action });
            return { ...e };
          },
          reopen: async (id, action) => {
            const e = exceptions.find((x) => x.id === id && x.status === 'RESOLVING' && x.action === action);
            if (e) Object.assign(e, { status: 'OPEN', action: null, note: null, resolvedBy: null });
          },
        },
        req,
        () => KIND_ACTIONS,
        async () => undefined,
      );
      return moneyExceptionToProto(done);
    },
  };

  const tls = devMeshTls('reconciliation');
  const log = createLogger('reconciliation-double', 'silent');
  const server: GrpcServerHandle = await startGrpcServer(
    '127.0.0.1',
    0,
    [{ definition: reconciliationV1.ReconciliationServiceService, implementation: asyncService(impl, log, POLICY, tls) }],
    tls,
  );

  let stopping: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${server.port}`,
    runs,
    breaks,
    exceptions,
    calls,
    stillPresent,
    seedRun(rail, date, seeded, openedAt = new Date()) {
      const run = newRun(rail, date, 'SCHEDULE', 'scheduler');
      const byKind: Record<string, bigint> = {};
      seeded.forEach((s, i) => {
        const key = `${rail}:${date}:${s.kind}:${s.ourId ?? s.providerId ?? i}`;
        const exceptionId = `exc_${hex()}`;
        byKind[s.kind] = (byKind[s.kind] ?? 0n) + 1n;
        const at = new Date(openedAt.getTime() + i);
        breaks.push({
          key,
          kind: s.kind,
          rail,
          date,
          ...(s.ourId ? { ourId: s.ourId } : {}),
          ...(s.providerId ? { providerId: s.providerId } : {}),
          oursJson: JSON.stringify(s.ours),
          theirsJson: JSON.stringify(s.theirs),
          status: 'OPEN',
          runId: run.id,
          lastSeenRunId: run.id,
          openedAt: at,
          exceptionId,
          differenceCents: s.differenceCents,
          movement: `${rail}:our:${s.ourId ?? i}`,
        });
        exceptions.push({
          id: exceptionId,
          kind: s.kind.toUpperCase(),
          companyId: s.companyId ?? '',
          rail: rail === 'breb-inbound' ? 'BREB' : rail.toUpperCase(),
          resourceId: key,
          ours: s.ours,
          theirs: s.theirs,
          status: 'OPEN',
          openedAt: at,
          resolvedAt: null,
          resolvedBy: null,
          action: null,
          note: null,
        });
      });
      Object.assign(run, {
        status: 'RECONCILED',
        finishedAt: new Date(),
        reportLines: 3n,
        reportAmountCents: 450_000n,
        reportFeeCents: 1_500n,
        reportNetCents: 450_000n,
        oursCount: 3n,
        oursAmountCents: 400_000n,
        oursNetCents: 400_000n,
        matchedCount: 2n,
        matchedAmountCents: 300_000n,
        breaksTotal: BigInt(seeded.length),
        breaksOpened: BigInt(seeded.length),
        breaksByKind: byKind,
        coversUntil: run.startedAt,
      });
      runs.unshift(run);
      return run;
    },
    stop: () => (stopping ??= server.stop(1000)),
  };
}
