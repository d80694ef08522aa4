import type { TransferDeps } from './deps.js';
import { AddAmlEntry, RemoveAmlEntry } from './aml-list.js';
import { ListApprovals, RejectApproval, SignApproval } from './approvals.js';
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
    saga: TransferSaga;
}
export declare function transferUseCases(deps: TransferDeps): TransferUseCases;
export declare function transferSweeper(deps: TransferDeps, saga: TransferSaga, opts: {
    intervalMs: number;
    batch: number;
}): Sweeper;
