export * from './domain/report.js';
export * from './domain/matching.js';
export * from './app/ports.js';
export * from './app/reconcile.js';
export { SpillSorter, type SpillSorterOptions } from './adapters/spill-sorter.js';
export { csvRecords, fileReportRecords } from './adapters/csv-records.js';
export { HttpReportSource, ReportFetchError, ReportNotAvailableError, type FetchFailure, type HttpReportSourceOptions } from './adapters/http-report-source.js';
export { GrpcOurRecords, ourRecordOf, type GrpcOurRecordsOptions } from './adapters/grpc-our-records.js';
export { ReconcileDay, type ReconcileDayDeps, type Runs, type RunEnded } from './app/reconcile-day.js';
export {
  BreakStore,
  RECONCILIATION_SCHEMA,
  RunStore,
  SUBJECTS,
  SqlBreakSink,
  SqlScheduleClaims,
  exceptionRail,
  reconciliationExceptions,
} from './persistence/reconciliation.store.js';
export type { BreakRecord, RunOutcome, RunRecord, RunStatus, RunTrigger } from './app/ports.js';
export { RECON_ACTIONS, EXCEPTION_KINDS } from './app/exceptions.js';
export type { ClearingLedger, ReconciliationDeps } from './app/deps.js';
export { reconciliationUseCases, type ReconciliationUseCases } from './app/use-cases.js';
export { Scheduler, previousBogotaDay, type TriggerFactory } from './app/scheduler.js';
export { reconciliationAccess, reconciliationHandlers } from './grpc/reconciliation.handlers.js';
export { breakToProto, runToProto } from './app/messages.js';
export { composeReconciliation, type ReconciliationRuntime, type ReconciliationRuntimeOptions } from './compose.js';
export { loadConfig, reconciliationEnvSchema, type ReconciliationConfig } from './config.js';
export { reconciliationMigrations } from './persistence/migrations/index.js';
