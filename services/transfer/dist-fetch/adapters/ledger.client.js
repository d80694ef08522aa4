import { randomUUID } from 'node:crypto';
import { AppError, createAsyncClient } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
const protoRail = (r) => (r === 'BREB' ? ledgerV1.Rail.BREB : ledgerV1.Rail.ACH);
const railOf = (r) => (r === ledgerV1.Rail.BREB ? 'BREB' : r === ledgerV1.Rail.ACH ? 'ACH' : null);
const feeOperation = (r) => (r === 'BREB' ? ledgerV1.FeeOperation.BREB_OUTFLOW : ledgerV1.FeeOperation.ACH_OUTFLOW);
/** Idempotency keys derived from the transfer (ARCHITECTURE rule 2): retries never double-post. */
export const ledgerKeys = {
    reserve: (id) => `transfer:${id}:reserve`,
    commit: (id) => `transfer:${id}:commit`,
    release: (id) => `transfer:${id}:release`,
};
/** The ledger over gRPC, in the application's terms. The company goes in the call metadata. */
export class GrpcLedger {
    client;
    constructor(address, deadlineMs = 5_000) {
        this.client = createAsyncClient(ledgerV1.LedgerServiceClient, address, { deadlineMs });
    }
    ctx(companyId, apiKeyId) {
        return { requestId: randomUUID(), companyId, actor: 'service:transfer', ...(apiKeyId ? { apiKeyId } : {}) };
    }
    async computeFees(companyId, rail, amount, ivaApplicable) {
        const f = await this.client.computeFees({ operation: feeOperation(rail), amount, ivaApplicable }, this.ctx(companyId));
        return {
            fixedFee: f.fixedFee, variableFee: f.variableFee, subtotalFee: f.subtotalFee,
            ivaApplicable: f.ivaApplicable, ivaAmount: f.ivaAmount, totalCharged: f.totalCharged,
        };
    }
    async balances(companyId, ivaApplicable) {
        const res = await this.client.getBalances({ ivaApplicable }, this.ctx(companyId));
        const out = [];
        for (const w of res.wallets) {
            const rail = railOf(w.rail);
            if (rail)
                out.push({ rail, availableCents: w.availableCents, pendingOutCents: w.pendingOutCents });
        }
        return out;
    }
    async reserve(cmd) {
        const d = cmd.details;
        const details = {
            targetName: d.targetName,
            targetDocument: d.targetDocument,
            ...(d.bankName ? { bankName: d.bankName } : {}),
            ...(d.bankAccountType ? { bankAccountType: d.bankAccountType } : {}),
            ...(d.bankAccountNumber ? { bankAccountNumber: d.bankAccountNumber } : {}),
            ...(d.description ? { description: d.description } : {}),
        };
        const res = await this.client.reserve({
            idempotencyKey: ledgerKeys.reserve(cmd.transferId),
            rail: protoRail(cmd.rail),
            amount: cmd.amount,
            fee: { ...cmd.fee },
            movement: {
                id: cmd.transferId,
                status: cmd.awaitingApproval ? ledgerV1.MovementStatus.AWAITING_APPROVAL : ledgerV1.MovementStatus.PENDING,
                ...(cmd.reference ? { reference: cmd.reference } : {}),
                ...(cmd.apiKeyId ? { apiKeyId: cmd.apiKeyId } : {}),
                details,
            },
        }, this.ctx(cmd.companyId, cmd.apiKeyId));
        if (!res.hold)
            throw new AppError('INTERNAL_ERROR');
        return { holdId: res.hold.id };
    }
    async commit(companyId, transferId, holdId) {
        const res = await this.client.commit({ idempotencyKey: ledgerKeys.commit(transferId), holdId }, this.ctx(companyId));
        return { completedAt: res.movement?.completedAt ?? null };
    }
    async release(companyId, transferId, holdId, errorMessage, finalStatus = 'FAILED') {
        await this.client.release({
            idempotencyKey: ledgerKeys.release(transferId), holdId,
            finalStatus: finalStatus === 'EXPIRED' ? ledgerV1.MovementStatus.EXPIRED : ledgerV1.MovementStatus.FAILED,
            errorMessage: errorMessage.slice(0, 1000),
        }, this.ctx(companyId));
    }
    async setMovementStatus(companyId, transferId, status, expected) {
        await this.client.setMovementStatus({
            movementId: transferId, status: ledgerV1.MovementStatus[status], expectedStatus: ledgerV1.MovementStatus[expected],
        }, this.ctx(companyId));
    }
    async movementExists(companyId, transferId) {
        try {
            await this.client.getMovement({ id: transferId }, this.ctx(companyId));
            return true;
        }
        catch (err) {
            if (err instanceof AppError && err.code === 'TRANSACTION_NOT_FOUND')
                return false;
            throw err;
        }
    }
    close() {
        this.client.close();
    }
}
//# sourceMappingURL=ledger.client.js.map