import { ChargeFee } from './charge-fee.js';
import { GetBalanceAlerts, ListBalanceAlertEvents, SetBalanceAlert, type BalanceAlertEvaluator } from './balance-alerts.js';
import { GetMove, MoveFunds } from './move-funds.js';
import { CheckInvariants } from './check-invariants.js';
import { CommitBatch } from './commit-batch.js';
import { CommitHold } from './commit-hold.js';
import { ComputeFees } from './compute-fees.js';
import { ComputeFeesBatch } from './compute-fees-batch.js';
import { CreditWallet } from './credit-wallet.js';
import type { LedgerDeps } from './deps.js';
import { GetBalanceAt } from './get-balance-at.js';
import { GetBalances } from './get-balances.js';
import { GetMovement } from './get-movement.js';
import { GetJournalHeads, VerifyJournal, type JournalPort } from './journal.js';
import { ListMovements } from './list-movements.js';
import { OpenWallets } from './open-wallets.js';
import { ReverseCorrection } from './corrections.js';
import { PostClearingAdjustment } from './post-clearing-adjustment.js';
import { PostCorrection } from './post-correction.js';
import { RecordInflow } from './record-inflow.js';
import { ReleaseHold } from './release-hold.js';
import { ReserveBatch } from './reserve-batch.js';
import { ReserveFunds } from './reserve-funds.js';
import { ReserveReturn } from './reserve-return.js';
import { ReverseInflow } from './reverse-inflow.js';
import { ReturnUnassignedInflow } from './return-unassigned-inflow.js';
import { SetFeeConfig } from './set-fee-config.js';
import { SetMovementStatus, SetMovementStatuses } from './set-movement-status.js';
import { StreamStatement } from './stream-statement.js';
import { VoidReserve } from './void-reserve.js';

/** Every use case of the ledger, built once from the same ports (the alert evaluator is composed beside them: it runs on its own). */
export function ledgerUseCases(deps: LedgerDeps, alerts: { evaluator: Pick<BalanceAlertEvaluator, 'evaluate'> }, journal: JournalPort) {
  return {
    openWallets: new OpenWallets(deps),
    getBalances: new GetBalances(deps),
    getBalanceAt: new GetBalanceAt(deps),
    streamStatement: new StreamStatement(deps),
    credit: new CreditWallet(deps),
    chargeFee: new ChargeFee(deps),
    // moves between the company's own wallets (docs/wallet-moves.md)
    move: new MoveFunds(deps),
    getMove: new GetMove(deps),
    reserve: new ReserveFunds(deps),
    reserveBatch: new ReserveBatch(deps),
    voidReserve: new VoidReserve(deps),
    postCorrection: new PostCorrection(deps),
    postClearingAdjustment: new PostClearingAdjustment(deps),
    reverseCorrection: new ReverseCorrection(deps),
    commit: new CommitHold(deps),
    // a page of the rail's confirmations in one transaction (docs/batches.md)
    commitBatch: new CommitBatch(deps),
    release: new ReleaseHold(deps),
    // returns (devoluciones) of credited inflows: their own holds (docs/returns.md)
    reserveReturn: new ReserveReturn(deps),
    commitReturn: new CommitHold(deps, 'return'),
    releaseReturn: new ReleaseHold(deps, 'return'),
    setMovementStatus: new SetMovementStatus(deps),
    setMovementStatuses: new SetMovementStatuses(deps),
    recordInflow: new RecordInflow(deps),
    reverseInflow: new ReverseInflow(deps),
    returnUnassignedInflow: new ReturnUnassignedInflow(deps),
    computeFees: new ComputeFees(deps),
    computeFeesBatch: new ComputeFeesBatch(deps),
    setFeeConfig: new SetFeeConfig(deps),
    listMovements: new ListMovements(deps),
    getMovement: new GetMovement(deps),
    checkInvariants: new CheckInvariants(deps),
    // balance alerts (docs/balance-alerts.md)
    setBalanceAlert: new SetBalanceAlert(deps, alerts.evaluator),
    getBalanceAlerts: new GetBalanceAlerts(deps),
    listBalanceAlertEvents: new ListBalanceAlertEvents(deps),
    // the tamper-evident journal (docs/journal.md)
    verifyJournal: new VerifyJournal(journal),
    getJournalHeads: new GetJournalHeads(journal),
  };
}
export type LedgerUseCases = ReturnType<typeof ledgerUseCases>;
