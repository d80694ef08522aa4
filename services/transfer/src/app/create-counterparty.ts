import { createHash } from 'node:crypto';
import { AppError } from '@wallet/platform';
import { validateNewCounterparty, type CounterpartyInput, type CounterpartyRecord } from '../domain/counterparty.js';
import { CounterpartyVerifier, newCounterpartyId, type CounterpartyDeps } from './counterparty-verifier.js';
import { IDEMPOTENCY_KEY } from './send-input.js';
import { Problems, orNull, requireCompany } from './validation.js';

export interface CreateCounterpartyCommand extends CounterpartyInput {
  idempotencyKey?: string | undefined;
  requestHash?: string | undefined;
}

/**
 * CreateCounterparty: every problem of the input at once (400), then the counterparty recorded with
 * its first verification attempt (PENDING) in one statement, idempotent on (company, key) + hash.
 * Then the attempt's step: a Bre-B key is looked up now (the answer is VERIFIED or FAILED unless the
 * directory is down); an ACH prenote is submitted and answered PENDING (its callback decides).
 */
export class CreateCounterparty {
  constructor(
    private readonly deps: CounterpartyDeps,
    private readonly verifier: CounterpartyVerifier,
  ) {}

  async execute(caller: string | undefined, cmd: CreateCounterpartyCommand): Promise<CounterpartyRecord> {
    const companyId = requireCompany(caller);
    const key = orNull(cmd.idempotencyKey);
    const p = new Problems();
    if (key !== null && !IDEMPOTENCY_KEY.test(key)) p.add('idempotencyKey', 'must be 1 to 255 visible ASCII characters');
    p.throwIfAny();
    const n = validateNewCounterparty(cmd);
    const now = this.deps.now();
    const attempt = this.verifier.newAttempt(n.rail);
    const record: CounterpartyRecord = {
      id: newCounterpartyId(),
      companyId,
      ...n,
      status: 'UNVERIFIED',
      verificationId: attempt.verificationId,
      prenoteId: attempt.prenoteId,
      prenoteSubmittedAt: null,
      reasonCode: null,
      reason: null,
      requestedAt: now,
      decidedAt: null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
      version: 1,
    };
    const requestHash = orNull(cmd.requestHash) ?? fallbackHash(n);
    const r = await this.deps.counterparties.insert(record, this.verifier.move('verify', 'request'), attempt, key ? { key, requestHash } : null);
    if (!r.inserted) {
      if (!r.sameRequest) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      return r.existing;
    }
    return this.verifier.run(r.counterparty, 'request');
  }
}

function fallbackHash(n: unknown): string {
  return `svc:${createHash('sha256').update(JSON.stringify(n)).digest('hex')}`;
}
