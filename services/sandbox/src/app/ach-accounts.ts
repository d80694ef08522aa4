import { INVALID_ACH_ACCOUNT } from '../domain/rails.js';
import { railDown } from './errors.js';
import type { FaultSwitches } from './ports.js';
import { invalidAchAccount } from './rail-transfers.js';

/** ACH account pre-validation: every account exists except `0000000000`. */
export class ValidateAchAccount {
  constructor(private readonly store: FaultSwitches) {}

  async execute(accountNumber: string): Promise<{ valid: true }> {
    if ((await this.store.fault('achRail')) === 'down') throw railDown('ACH');
    if (accountNumber === INVALID_ACH_ACCOUNT) throw invalidAchAccount();
    return { valid: true };
  }
}
