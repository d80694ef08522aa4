export * from './domain/report.js';
export * from './domain/matching.js';
export * from './app/ports.js';
export * from './app/reconcile.js';
export { SpillSorter, type SpillSorterOptions } from './adapters/spill-sorter.js';
export { csvRecords, fileReportRecords } from './adapters/csv-records.js';
export {
  HttpReportSource, ReportFetchError, ReportNotAvailableError, type FetchFailure, type HttpReportSourceOptions,
} from './adapters/http-report-source.js';
export { GrpcOurRecords, ourRecordOf, type GrpcOurRecordsOptions } from './adapters/grpc-our-records.js';
export { ReconcileDay, type ReconcileDayDeps, type Runs } from './app/reconcile-day.js';
export {
  RECONCILIATION_SCHEMA, RunStore, SqlBreakSink, reconciliationExceptions,
} from './persistence/reconciliation.store.js';
export type { RunOutcome, RunRecord } from './app/ports.js';
export { reconciliationMigrations } from './persistence/migrations/index.js';
