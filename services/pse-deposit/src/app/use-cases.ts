import { CreatePseDeposit } from './create-pse-deposit.js';
import type { DepositDeps } from './deps.js';
import { DepositSaga } from './deposit-saga.js';
import { ListDepositExceptions, ResolveDepositException } from './exceptions.js';
import { HandlePseCallback } from './handle-pse-callback.js';
import { GetDeposit, ListDeposits } from './list-deposits.js';
import { ShareByEmail } from './share-by-email.js';
import { pseReturns } from './returns.js';

/** Every use case of the service, built once from the same ports. */
export function depositUseCases(deps: DepositDeps) {
  const saga = new DepositSaga(deps);
  const returns = pseReturns(deps);
  return {
    saga,
    returnSaga: returns.saga,
    createDepositReturn: returns.create,
    listDepositReturns: returns.list,
    createPse: new CreatePseDeposit(deps),
    handlePseCallback: new HandlePseCallback(deps, saga),
    shareByEmail: new ShareByEmail(deps),
    list: new ListDeposits(deps),
    get: new GetDeposit(deps),
    listExceptions: new ListDepositExceptions(deps),
    resolveException: new ResolveDepositException(deps, saga, returns.saga),
  };
}
export type DepositUseCases = ReturnType<typeof depositUseCases>;
