import { AddAmlEntry, RemoveAmlEntry } from './aml-list.js';
import { ListApprovals, RejectApproval, SignApproval } from './approvals.js';
import { HandleRailCallback } from './handle-rail-callback.js';
import { QuoteTransfer } from './quote.js';
import { ResolveKey } from './resolve-key.js';
import { SendTransfer } from './send-transfer.js';
import { Sweeper } from './sweeper.js';
import { TransferSaga } from './transfer-saga.js';
export function transferUseCases(deps) {
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
        saga,
    };
}
export function transferSweeper(deps, saga, opts) {
    return new Sweeper(deps, saga, opts);
}
//# sourceMappingURL=use-cases.js.map