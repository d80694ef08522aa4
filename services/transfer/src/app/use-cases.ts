import type { TransferDeps } from './deps.js';
import { BatchQueries, BatchRunner, CreateBatch, type BatchDeps } from './batches.js';
import { AddAmlEntry, RemoveAmlEntry } from './aml-list.js';
import { ListApprovals, RejectApproval, SignApproval } from './approvals.js';
import { ListMoneyExceptions, ResolveMoneyException } from './exceptions.js';
import { HandleRailCallback } from './handle-rail-callback.js';
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

export function transferUseCases(deps: TransferDeps): TransferUseCases {
  const saga = new TransferSaga(deps);
  return {
    resolveKey: new ResolveKey(deps),
    quote: new QuoteTransfer(deps),
    send: new SendTransfer(deps, saga),
    handleRailCallback: new HandleRailCallback(deps, saga),
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
  runner: BatchRunner;
  queries: BatchQueries;
}

/** Bulk payouts (issue 22): built on the same saga as single sends. */
export function batchUseCases(deps: BatchDeps, saga: TransferSaga): BatchUseCases {
  return { create: new CreateBatch(deps), runner: new BatchRunner(deps, saga), queries: new BatchQueries(deps) };
}
