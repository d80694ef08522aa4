import { AppError } from '@wallet/platform';
import type { CounterpartyRecord } from '../domain/counterparty.js';
import { CAS_ATTEMPTS, counterpartyOf } from './counterparty-lookup.js';
import type { CounterpartyDeps, CounterpartyVerifier } from './counterparty-verifier.js';
import { requireCompany } from './validation.js';

/** VerifyCounterparty: a new attempt from VERIFIED or FAILED (or UNVERIFIED); while PENDING → COUNTERPARTY_VERIFICATION_IN_PROGRESS. */
export class VerifyCounterparty {
  constructor(
    private readonly deps: CounterpartyDeps,
    private readonly verifier: CounterpartyVerifier,
  ) {}

  async execute(caller: string | undefined, id: string): Promise<CounterpartyRecord> {
    const companyId = requireCompany(caller);
    for (let i = 0; i < CAS_ATTEMPTS; i++) {
      const current = await counterpartyOf(this.deps, companyId, id);
      if (current.status === 'PENDING') throw new AppError('COUNTERPARTY_VERIFICATION_IN_PROGRESS');
      const next = await this.verifier.apply(current, 'verify', 'request', { attempt: this.verifier.newAttempt(current.rail) });
      if (next) return this.verifier.run(next, 'request');
    }
    throw new AppError('COUNTERPARTY_VERIFICATION_IN_PROGRESS');
  }
}
