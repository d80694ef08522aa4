import { CreatePseDeposit } from './create-pse-deposit.js';
import type { DepositDeps } from './deps.js';
import { DepositSteps } from './deposit-steps.js';
import { HandlePseCallback } from './handle-pse-callback.js';
import { GetDeposit, ListDeposits } from './list-deposits.js';
import { ShareByEmail } from './share-by-email.js';

/** Every use case of the service, built once from the same ports. */
export function depositUseCases(deps: DepositDeps) {
  const steps = new DepositSteps(deps);
  return {
    steps,
    createPse: new CreatePseDeposit(deps),
    handlePseCallback: new HandlePseCallback(deps, steps),
    shareByEmail: new ShareByEmail(deps),
    list: new ListDeposits(deps),
    get: new GetDeposit(deps),
  };
}
export type DepositUseCases = ReturnType<typeof depositUseCases>;
