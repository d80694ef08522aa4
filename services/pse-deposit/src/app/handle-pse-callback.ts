import { AppError, linkActiveSpanToSaga } from '@wallet/platform';
import { verifySignature } from '@wallet/platform';
import { isDepositId } from '../domain/deposit.js';
import type { DepositDeps } from './deps.js';
import type { DepositSaga } from './deposit-saga.js';

export interface PseCallbackCommand {
  rawBody: Buffer;
  signature: string;
}
export interface PseCallbackResult {
  accepted: boolean;
  duplicate: boolean;
}

interface Outcome {
  eventId: string;
  depositId: string;
  providerTransferId: string | null;
  status: 'PAID' | 'FAILED' | 'REVERSED';
  payerBank: string | null;
  paidAt: Date | null;
  errorMessage: string | null;
}

const str = (v: unknown, max = 200): string | null => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : null);

function parseOutcome(raw: Buffer): Outcome {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new AppError('INVALID_REQUEST', 'El cuerpo de la notificación no es JSON válido.');
  }
  const eventId = str(body?.eventId);
  const depositId = str(body?.depositId);
  const status = body?.status;
  if (!eventId || !depositId || (status !== 'PAID' && status !== 'FAILED' && status !== 'REVERSED')) {
    throw new AppError('INVALID_REQUEST', 'La notificación no tiene eventId, depositId o status válidos.');
  }
  const paidAtRaw = str(body.paidAt) ?? (status === 'PAID' ? str(body.occurredAt) : null);
  const paidAt = paidAtRaw && !Number.isNaN(Date.parse(paidAtRaw)) ? new Date(paidAtRaw) : null;
  return {
    eventId,
    depositId,
    status,
    paidAt,
    providerTransferId: str(body.providerTransferId),
    payerBank: str(body.payerBank, 100),
    errorMessage: str(body.errorMessage, 500),
  };
}

/**
 * The provider's signed outcome (POST /webhooks/pse through the gateway). HMAC over the raw bytes,
 * ±300 s. Dedupe by event id; then the outcome goes through the saga's table (`OUTCOME_TABLE` in
 * domain/deposit-machine.ts): applied (PAID on a pending or expired link within expiresAt + grace →
 * credited once; FAILED on a pending link; REVERSED on a credited deposit → debited back), a
 * harmless repeat, a contradiction (a money exception, logged as an error, nothing credited), or
 * "not yet" (a REVERSED ahead of its payment: SERVICE_UNAVAILABLE and not recorded, so the provider
 * delivers it again). A link found pending past expiresAt is expired first (what clients see).
 * Money steps run only after their transition is won; a ledger failure in between answers an
 * error (the provider retries; a retry of a known event id finishes the step) and the sweeper
 * finishes it anyway.
 */
export class HandlePseCallback {
  constructor(
    private readonly deps: DepositDeps,
    private readonly saga: DepositSaga,
  ) {}

  async execute(cmd: PseCallbackCommand): Promise<PseCallbackResult> {
    const deps = this.deps;
    const verdict = verifySignature(deps.settings.callbackSecret, cmd.rawBody, cmd.signature ?? '', Math.floor(deps.now().getTime() / 1000));
    if (verdict !== 'OK') {
      deps.log.warn({ verdict }, 'PSE callback refused: bad signature');
      throw new AppError('INVALID_SIGNATURE');
    }
    const o = parseOutcome(cmd.rawBody);
    const deposit = isDepositId(o.depositId) ? await deps.store.getById(o.depositId) : undefined;
    // The provider's confirmation is a trace of its own: tie it to the payment link's.
    linkActiveSpanToSaga(deposit?.traceparent, { 'wallet.deposit_id': o.depositId });
    if (!deposit || deposit.source !== 'PSE') {
      deps.log.warn({ depositId: o.depositId, eventId: o.eventId }, 'PSE callback for an unknown deposit');
      return { accepted: false, duplicate: false };
    }
    if (await deps.store.callbackSeen(o.eventId)) {
      await this.saga.settle(deposit, 'provider'); // a redelivery also finishes a step left unfinished
      return { accepted: true, duplicate: true };
    }
    const r = await this.saga.providerOutcome(deposit, {
      eventId: o.eventId,
      status: o.status,
      providerTransferId: o.providerTransferId,
      payerBank: o.payerBank,
      paidAt: o.paidAt ?? deps.now(),
      errorMessage: o.errorMessage,
    });
    if (r.kind === 'retry') throw new AppError('SERVICE_UNAVAILABLE');
    deps.log.info({ depositId: deposit.id, eventId: o.eventId, status: o.status, applied: r.applied, state: r.deposit.status }, 'PSE callback handled');
    return { accepted: true, duplicate: !r.applied };
  }
}
