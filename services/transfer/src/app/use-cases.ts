import type { BatchDeps, TransferDeps } from './deps.js';
import { RejectBatchApproval, SignBatchApproval } from './approve-batch.js';
import { BatchQueries } from './batch-queries.js';
import { BatchRunner } from './batch-runner.js';
import { BatchSaga } from './batch-saga.js';
import { CancelBatch } from './cancel-batch.js';
import { CreateBatch } from './create-batch.js';
import { ExecuteBatch } from './execute-batch.js';
import { AddAmlEntry, RemoveAmlEntry } from './aml-list.js';
import { ListApprovals, RejectApproval, SignApproval } from './approvals.js';
import { ListMoneyExceptions, ResolveMoneyException } from './exceptions.js';
import { HandleRailCallback } from './handle-rail-callback.js';
import { CreateCounterparty } from './create-counterparty.js';
import { DeleteCounterparty } from './delete-counterparty.js';
import { UpdateCounterparty } from './update-counterparty.js';
import { VerifyCounterparty } from './verify-counterparty.js';
import { CounterpartyQueries } from './counterparty-queries.js';
import { CounterpartyVerifier, type CounterpartyDeps } from './counterparty-verifier.js';
import { ApplyPrenoteCallback } from './prenote-callback.js';
import { CancelPolicy, PolicyQueries, ProposePolicy, SignPolicy, type PolicyDeps } from './approval-policies.js';
import { QuoteTransfer } from './quote.js';
import { ResolveKey } from './resolve-key.js';
import { SendTransfer } from './send-transfer.js';
import { Sweeper } from './sweeper.js';
import { TransferSaga } from './transfer-saga.js';

export interface TransferUseCases {
  resolveKey: ResolveKey;
  quote: QuoteTransfer;
  send: SendTransfer;
  handleRailCallback: HandleRailCallback;
  addAmlEntry: AddAmlEntry;
  removeAmlEntry: RemoveAmlEntry;
  listApprovals: ListApprovals;
  signApproval: SignApproval;
  rejectApproval: RejectApproval;
  listExceptions: ListMoneyExceptions;
  resolveException: ResolveMoneyException;
  saga: TransferSaga;
}

export function transferUseCases(deps: TransferDeps, prenotes?: ApplyPrenoteCallback): TransferUseCases {
  const saga = new TransferSaga(deps);
  return {
    resolveKey: new ResolveKey(deps),
    quote: new QuoteTransfer(deps),
    send: new SendTransfer(deps, saga),
    handleRailCallback: new HandleRailCallback(deps, saga, prenotes),
    addAmlEntry: new AddAmlEntry(deps),
    removeAmlEntry: new RemoveAmlEntry(deps),
    listApprovals: new ListApprovals(deps),
    signApproval: new SignApproval(deps, saga),
    rejectApproval: new RejectApproval(deps, saga),
    listExceptions: new ListMoneyExceptions(deps),
    resolveException: new ResolveMoneyException(deps),
    saga,
  };
}

export function transferSweeper(deps: TransferDeps, saga: TransferSaga, opts: { intervalMs: number; batch: number }): Sweeper {
  return new Sweeper(deps, saga, opts);
}

export interface BatchUseCases {
  create: CreateBatch;
  execute: ExecuteBatch;
  cancel: CancelBatch;
  sign: SignBatchApproval;
  reject: RejectBatchApproval;
  queries: BatchQueries;
  /** The steps the requests start and the batch sweeper resumes (fund, dispatch, settle an approval). */
  runner: BatchRunner;
}

/** Bulk payouts (docs/batches.md): built on the same saga as single sends. */
export function batchUseCases(deps: BatchDeps, saga: TransferSaga): BatchUseCases {
  const batchSaga = new BatchSaga(deps);
  const runner = new BatchRunner(deps, saga, batchSaga);
  return {
    create: new CreateBatch(deps, batchSaga),
    execute: new ExecuteBatch(deps, runner, batchSaga),
    cancel: new CancelBatch(deps, batchSaga),
    sign: new SignBatchApproval(deps, saga, batchSaga, runner),
    reject: new RejectBatchApproval(deps, runner),
    queries: new BatchQueries(deps),
    runner,
  };
}

export interface CounterpartyUseCases {
  create: CreateCounterparty;
  update: UpdateCounterparty;
  verify: VerifyCounterparty;
  remove: DeleteCounterparty;
  queries: CounterpartyQueries;
  /** The ACH rail's prenote outcomes (through HandleRailCallback). */
  prenoteCallback: ApplyPrenoteCallback;
  verifier: CounterpartyVerifier;
}

/** Counterparties (payees) and their verification (docs/counterparties.md). */
export function counterpartyUseCases(deps: CounterpartyDeps): CounterpartyUseCases {
  const verifier = new CounterpartyVerifier(deps);
  return {
    create: new CreateCounterparty(deps, verifier),
    update: new UpdateCounterparty(deps, verifier),
    verify: new VerifyCounterparty(deps, verifier),
    remove: new DeleteCounterparty(deps),
    queries: new CounterpartyQueries(deps),
    prenoteCallback: new ApplyPrenoteCallback(deps, verifier),
    verifier,
  };
}

export interface PolicyUseCases {
  queries: PolicyQueries;
  propose: ProposePolicy;
  sign: SignPolicy;
  cancel: CancelPolicy;
}

/** Approval policies (docs/policies.md): read, and changed by the company's ADMINs with quorum and delay. */
export function policyUseCases(deps: PolicyDeps): PolicyUseCases {
  return { queries: new PolicyQueries(deps), propose: new ProposePolicy(deps), sign: new SignPolicy(deps), cancel: new CancelPolicy(deps) };
}
