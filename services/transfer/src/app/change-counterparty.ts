import { AppError } from '@wallet/platform';
import { COUNTERPARTY_ID, validateCounterpartyChange, type CounterpartyInput, type CounterpartyRecord } from '../domain/counterparty.js';
import type { CounterpartyDeps, CounterpartyVerifier } from './counterparty-verifier.js';
import { requireCompany } from './validation.js';

/** The company's live counterparty; another company's, an unknown or a malformed id: COUNTERPARTY_NOT_FOUND. */
export async function counterpartyOf(deps: CounterpartyDeps, companyId: string, id: string): Promise<CounterpartyRecord> {
  const c = COUNTERPARTY_ID.test(id) ? await deps.counterparties.get(companyId, id) : undefined;
  if (!c) throw new AppError('COUNTERPARTY_NOT_FOUND');
  return c;
}

/** Tries a compare-and-set write on the version a few times (another change landed between the read and the write). */
const ATTEMPTS = 5;

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
    for (let i = 0; i < ATTEMPTS; i++) {
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

/** VerifyCounterparty: a new attempt from VERIFIED or FAILED (or UNVERIFIED); while PENDING → COUNTERPARTY_VERIFICATION_IN_PROGRESS. */
export class VerifyCounterparty {
  constructor(
    private readonly deps: CounterpartyDeps,
    private readonly verifier: CounterpartyVerifier,
  ) {}

  async execute(caller: string | undefined, id: string): Promise<CounterpartyRecord> {
    const companyId = requireCompany(caller);
    for (let i = 0; i < ATTEMPTS; i++) {
      const current = await counterpartyOf(this.deps, companyId, id);
      if (current.status === 'PENDING') throw new AppError('COUNTERPARTY_VERIFICATION_IN_PROGRESS');
      const next = await this.verifier.apply(current, 'verify', 'request', { attempt: this.verifier.newAttempt(current.rail) });
      if (next) return this.verifier.run(next, 'request');
    }
    throw new AppError('COUNTERPARTY_VERIFICATION_IN_PROGRESS');
  }
}

/** DeleteCounterparty: a soft delete; answers the deleted counterparty (a verification in flight is no longer looked at). */
export class DeleteCounterparty {
  constructor(private readonly deps: CounterpartyDeps) {}

  async execute(caller: string | undefined, id: string): Promise<CounterpartyRecord> {
    const companyId = requireCompany(caller);
    const c = COUNTERPARTY_ID.test(id) ? await this.deps.counterparties.softDelete(companyId, id) : undefined;
    if (!c) throw new AppError('COUNTERPARTY_NOT_FOUND');
    return c;
  }
}
