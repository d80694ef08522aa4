import { AppError } from '@wallet/platform';
import { verifySignature } from '@wallet/platform';
import { isDepositId, paidInTime, type DepositRecord } from '../domain/deposit.js';
import type { DepositDeps } from './deps.js';
import type { DepositSteps } from './deposit-steps.js';
import { depositEvent } from './events.js';

export interface PseCallbackCommand { rawBody: Buffer; signature: string }
export interface PseCallbackResult { accepted: boolean; duplicate: boolean }

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
    eventId, depositId, status, paidAt,
    providerTransferId: str(body.providerTransferId), payerBank: str(body.payerBank, 100), errorMessage: str(body.errorMessage, 500),
  };
}

/**
 * The provider's signed outcome (POST /webhooks/pse through the gateway). HMAC over the raw bytes,
 * ±300 s. Dedupe by event id and by state: only PAID/FAILED on PENDING_CONFIRM and REVERSED on
 * ASSIGNED change anything; every other (late, repeated, out-of-order) outcome changes nothing,
 * except a REVERSED ahead of its PAID, which is refused for now (SERVICE_UNAVAILABLE) so that the
 * provider redelivers it after the payment.
 * Money steps are recorded before the ledger call (pending_step) and finished after it; a failure
 * in between answers an error (the provider retries) and the sweeper finishes it anyway.
 */
export class HandlePseCallback {
  constructor(private readonly deps: DepositDeps, private readonly steps: DepositSteps) {}

  async execute(cmd: PseCallbackCommand): Promise<PseCallbackResult> {
    const deps = this.deps;
    const verdict = verifySignature(deps.settings.callbackSecret, cmd.rawBody, cmd.signature ?? '', Math.floor(deps.now().getTime() / 1000));
    if (verdict !== 'OK') {
      deps.log.warn({ verdict }, 'PSE callback refused: bad signature');
      throw new AppError('INVALID_SIGNATURE');
    }
    const o = parseOutcome(cmd.rawBody);
    const deposit = isDepositId(o.depositId) ? await deps.store.getById(o.depositId) : undefined;
    if (!deposit || deposit.source !== 'PSE') {
      deps.log.warn({ depositId: o.depositId, eventId: o.eventId }, 'PSE callback for an unknown deposit');
      return { accepted: false, duplicate: false };
    }
    if (await deps.store.callbackSeen(o.eventId)) {
      await this.steps.resume(deposit); // a redelivery also finishes a step left unfinished
      return { accepted: true, duplicate: true };
    }
    if (o.status === 'REVERSED' && deposit.status === 'PENDING_CONFIRM') {
      // A reversal ahead of its payment (the two callbacks raced, or PAID is still being retried):
      // not applicable yet. Not remembered, answered as unavailable, so the provider delivers it
      // again once the payment is in; remembering it here would keep a credit the provider took back.
      throw new AppError('SERVICE_UNAVAILABLE');
    }
    const callback = { eventId: o.eventId, status: o.status };
    let changed: DepositRecord | undefined;

    if (o.status === 'PAID' && deposit.status === 'PENDING_CONFIRM' && deposit.pendingStep === null) {
      const paidAt = o.paidAt ?? deps.now();
      if (paidInTime(deposit.expiresAt, paidAt, deps.settings.paidGraceSeconds)) {
        changed = await deps.store.transition({
          id: deposit.id, from: { status: 'PENDING_CONFIRM', step: null }, to: { status: 'PENDING_CONFIRM', step: 'CREDIT' },
          patch: { providerTransferId: o.providerTransferId, providerConfirmedAt: paidAt, payerBank: o.payerBank },
          reason: 'paid at the provider', callback,
        });
        if (changed) await this.steps.finishCredit(changed);
      } else {
        // Paid after the link expired: never credited (the provider refuses those; this is defence in depth).
        deps.log.error({ depositId: deposit.id, paidAt, expiresAt: deposit.expiresAt }, 'PSE payment after expiry: not credited');
        changed = await deps.store.transition({
          id: deposit.id, from: { status: 'PENDING_CONFIRM', step: null }, to: { status: 'EXPIRED', step: null },
          reason: 'paid after expiry: not credited', callback, event: (r) => depositEvent(deps, 'expired', r),
        });
      }
    } else if (o.status === 'FAILED' && deposit.status === 'PENDING_CONFIRM' && deposit.pendingStep === null) {
      changed = await deps.store.transition({
        id: deposit.id, from: { status: 'PENDING_CONFIRM', step: null }, to: { status: 'FAILED', step: null },
        patch: { errorMessage: o.errorMessage ?? 'El pago fue rechazado', ...(o.payerBank ? { payerBank: o.payerBank } : {}) },
        reason: 'payment failed', callback, event: (r) => depositEvent(deps, 'failed', r),
      });
    } else if (o.status === 'REVERSED' && deposit.status === 'ASSIGNED' && deposit.pendingStep === null) {
      changed = await deps.store.transition({
        id: deposit.id, from: { status: 'ASSIGNED', step: null }, to: { status: 'ASSIGNED', step: 'REVERSE' },
        patch: { errorMessage: o.errorMessage ?? 'Pago reversado por el proveedor PSE' }, reason: 'reversed by the provider', callback,
      });
      if (changed) await this.steps.finishReversal(changed);
    }
    if (changed) return { accepted: true, duplicate: false };
    // Late, repeated or out of order: remembered, nothing changes (a step in flight is still finished).
    await deps.store.recordCallback(o.eventId, deposit.id, o.status);
    const current = await deps.store.getById(deposit.id);
    if (current?.pendingStep) await this.steps.resume(current);
    return { accepted: true, duplicate: true };
  }
}
