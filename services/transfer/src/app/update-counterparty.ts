import { AppError } from '@wallet/platform';
import { validateCounterpartyChange, type CounterpartyInput, type CounterpartyRecord } from '../domain/counterparty.js';
import { CAS_ATTEMPTS, counterpartyOf } from './counterparty-lookup.js';
import type { CounterpartyDeps, CounterpartyVerifier } from './counterparty-verifier.js';
import { requireCompany } from './validation.js';

/**
 * UpdateCounterparty: only the fields given change. A new key, account or holder is a new
 * verification (identity_changed: PENDING with a fresh attempt, the old result and any prenote in
 * flight forgotten), run at once as at creation; name and tags keep the verification.
 */
export class UpdateCounterparty {
  constructor(
    private readonly deps: CounterpartyDeps,
    private readonly verifier: CounterpartyVerifier,
  ) {}

  async execute(caller: string | undefined, id: string, input: CounterpartyInput & { replaceTags: boolean }): Promise<CounterpartyRecord> {
    const companyId = requireCompany(caller);
    for (let i = 0; i < CAS_ATTEMPTS; i++) {
      const current = await counterpartyOf(this.deps, companyId, id);
      const change = validateCounterpartyChange(current, input);
      if (!change.name && !change.tags && !change.identity) return current;
      const identity = change.identity;
      const move = identity ? this.verifier.move('identity_changed', 'request') : null;
      const attempt = identity ? this.verifier.newAttempt(identity.rail) : null;
      const next = await this.deps.counterparties.update(
        current,
        { ...(change.name ? { name: change.name } : {}), ...(change.tags ? { tags: change.tags } : {}), ...(identity ? { identity } : {}) },
        move,
        attempt,
      );
      if (!next) continue;
      return identity ? this.verifier.run(next, 'request') : next;
    }
    throw new AppError('SERVICE_UNAVAILABLE', 'La contraparte cambió varias veces mientras se actualizaba; intente de nuevo.');
  }
}
