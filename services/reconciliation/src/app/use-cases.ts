import type { ReconciliationDeps } from './deps.js';
import { ListReconciliationExceptions, ResolveReconciliationException } from './exceptions.js';
import { GetRun, ListBreaks, ListRuns } from './queries.js';
import { StartRun } from './start-run.js';

export type ReconciliationUseCases = ReturnType<typeof reconciliationUseCases>;

/** Every use case behind the gRPC API, over one set of dependencies; `stop` ends the runs under way. */
export function reconciliationUseCases(deps: ReconciliationDeps) {
  const startRun = new StartRun(deps);
  return {
    startRun,
    getRun: new GetRun(deps),
    listRuns: new ListRuns(deps),
    listBreaks: new ListBreaks(deps),
    listExceptions: new ListReconciliationExceptions(deps),
    resolveException: new ResolveReconciliationException(deps, startRun.abort.signal),
    stop: () => startRun.stop(),
  };
}
