export { CHECK_NAMES, formatAge, formatReport } from './report.js';
export type { CheckName, CheckOptions, CheckResult, CheckSources, InvariantReport, OpenException } from './report.js';
export { mapRail, sandboxRail } from './rail.js';
export type { RailTruth, RailTransferStatus, PseLinkStatus, DeliveredInbound } from './rail.js';
export { Snapshot } from './snapshot.js';
export type { Reader, SqlClient, CheckedSchema } from './snapshot.js';
export { checkInvariants, runChecks, sourcesOf, violationLines, type RailChoice } from './run.js';
export { SABOTAGES, selfTest, type Sabotage, type SelfTestResult } from './self-test.js';
export { checkClearing, clearingFigures, type ClearingFigures } from './clearing.js';
