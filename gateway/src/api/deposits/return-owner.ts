import { AppError, type CallContext } from '@wallet/platform';
import type { depositV1 } from '@wallet/proto';
import type { CollectKeyClient } from '../../clients/collect-key-client.js';
import type { DepositClient } from '../../clients/deposit-client.js';

/**
 * A deposit's returns are served by the payment's owner: collect-key for a Bre-B payment, pse-deposit
 * for a PSE one. Each answers DEPOSIT_NOT_FOUND for a deposit it does not own (or another company's),
 * so the call goes to collect-key and, when it does not know the deposit, to pse-deposit. The API's
 * returns (returns.routes.ts) and the dashboard's (api/dashboard/returns.routes.ts) both ask this way.
 */
async function byOwner<T>(bre: () => Promise<T>, pse: () => Promise<T>): Promise<T> {
  try {
    return await bre();
  } catch (err) {
    if (err instanceof AppError && err.code === 'DEPOSIT_NOT_FOUND') return pse();
    throw err;
  }
}

export interface DepositReturnsByOwner {
  create(req: depositV1.CreateDepositReturnRequest, call: CallContext): Promise<depositV1.DepositReturn>;
  list(depositId: string, call: CallContext): Promise<depositV1.ListDepositReturnsResponse>;
}

export function depositReturnsByOwner(keys: CollectKeyClient, deposits: DepositClient): DepositReturnsByOwner {
  return {
    create: (req, call) =>
      byOwner(
        () => keys.createDepositReturn(req, call),
        () => deposits.createDepositReturn(req, call),
      ),
    list: (depositId, call) =>
      byOwner(
        () => keys.listDepositReturns({ depositId }, call),
        () => deposits.listDepositReturns({ depositId }, call),
      ),
  };
}
