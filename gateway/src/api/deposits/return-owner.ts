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

/** `source`: the payment's (`Deposit.source`, BREB or PSE) when the caller already read it; its owner is then asked directly. */
export interface DepositReturnsByOwner {
  create(req: depositV1.CreateDepositReturnRequest, call: CallContext, source?: string): Promise<depositV1.DepositReturn>;
  list(depositId: string, call: CallContext, source?: string): Promise<depositV1.ListDepositReturnsResponse>;
}

export function depositReturnsByOwner(keys: CollectKeyClient, deposits: DepositClient): DepositReturnsByOwner {
  // Known source: one call to its owner; unknown (the API's routes): collect-key, then pse-deposit.
  const ask = <T>(source: string | undefined, bre: () => Promise<T>, pse: () => Promise<T>): Promise<T> =>
    source === 'BREB' ? bre() : source === 'PSE' ? pse() : byOwner(bre, pse);
  return {
    create: (req, call, source) =>
      ask(
        source,
        () => keys.createDepositReturn(req, call),
        () => deposits.createDepositReturn(req, call),
      ),
    list: (depositId, call, source) =>
      ask(
        source,
        () => keys.listDepositReturns({ depositId }, call),
        () => deposits.listDepositReturns({ depositId }, call),
      ),
  };
}
