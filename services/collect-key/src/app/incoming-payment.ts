import { AppError } from '@wallet/platform';
import { verifySignature } from '@wallet/platform';
import { maskKeyValue, newDepositId } from '../domain/collect-key.js';
import { parseIncomingPayment } from '../domain/incoming-payment.js';
import type { CollectKeyDeps } from './deps.js';
import { depositEvent } from './events.js';
import { ZERO_FEE, type FeeBreakdown, type PaymentRecord } from './ports.js';

export interface IncomingPaymentCommand { rawBody: Buffer; signature: string }
/** `accepted` is always true: what cannot be booked is refused with a retryable error instead. */
export interface IncomingPaymentResult { accepted: boolean; duplicate: boolean }

/**
 * The ledger step of a recorded payment, then the deposit event. RecordInflow is idempotent on
 * `collectkey:payment:<providerTransferId>` with the stored amounts, so running it again (a
 * redelivery, the sweeper) posts once; the completion is a compare-and-set, so one runner writes the event.
 */
export class PaymentSteps {
  constructor(private readonly deps: CollectKeyDeps) {}

  async finish(p: PaymentRecord): Promise<PaymentRecord> {
    if (p.pendingStep === null) return p;
    await this.deps.ledger.recordInflow(p);
    const done = await this.deps.store.completePayment(p.depositId, (r) => depositEvent(this.deps, r));
    if (done) this.deps.log.info({ depositId: p.depositId, status: p.status, keyId: p.key.id }, 'Bre-B payment recorded');
    return done ?? p;
  }
}

/**
 * The network's signed notification of an inbound payment. HMAC over the raw bytes (±300 s) →
 * dedupe by event id and provider transfer id → the key by value (live holder, else most recent) →
 * ACTIVE: ComputeFees(BREB_INFLOW) and ASSIGNED (credited); SUSPENDED/DELETED: UNASSIGNED (held in
 * unassigned_funds, zero fee) → intent row (pending step) → ledger → completion + deposit event.
 * REGISTERING, or no key for the value: SERVICE_UNAVAILABLE (the gateway answers 503, the network
 * retries), never an acknowledgement with nothing booked. IVA applies when the company's tax regime was
 * COMMON when the key was issued (stored with the key from CreateKey's caller context; the notification carries no company).
 */
export class HandleIncomingPayment {
  constructor(private readonly deps: CollectKeyDeps, private readonly steps: PaymentSteps) {}

  async execute(cmd: IncomingPaymentCommand): Promise<IncomingPaymentResult> {
    const deps = this.deps;
    const verdict = verifySignature(deps.settings.callbackSecret, cmd.rawBody, cmd.signature ?? '', Math.floor(deps.now().getTime() / 1000));
    if (verdict !== 'OK') {
      deps.log.warn({ verdict }, 'Bre-B incoming payment refused: bad signature');
      throw new AppError('INVALID_SIGNATURE');
    }
    const n = parseIncomingPayment(cmd.rawBody);
    const known = await deps.store.paymentByTransfer(n.providerTransferId);
    if (known) {
      if (known.pendingStep) await this.steps.finish(known); // a redelivery finishes a step left unfinished
      return { accepted: true, duplicate: true };
    }
    const key = await deps.store.byValue(n.keyValue);
    const where = { providerTransferId: n.providerTransferId, eventId: n.eventId, keyValue: maskKeyValue(n.keyValue), amountCents: n.amountCents.toString() };
    if (!key) {
      // The ledger books an unassigned inflow only for a company (RecordInflow requires one), and
      // no company owns this value: nothing is booked, so the network must keep the payment and retry.
      deps.log.error(where, 'Bre-B payment to a key value with no key here: refused as retryable, nothing booked');
      throw new AppError('SERVICE_UNAVAILABLE', 'La llave de destino no está disponible en este participante; reintente la notificación.');
    }
    if (key.state === 'REGISTERING') {
      // The directory routed it to us but the key is not confirmed yet: retried, it is credited once it is.
      deps.log.warn({ ...where, keyId: key.id }, 'Bre-B payment to a key still registering: refused as retryable');
      throw new AppError('SERVICE_UNAVAILABLE', 'La llave de destino aún se está registrando; reintente la notificación.');
    }
    const assign = key.state === 'ACTIVE';
    let fee: FeeBreakdown = ZERO_FEE;
    if (assign) {
      fee = await deps.ledger.computeBrebInflowFees(key.companyId, n.amountCents, key.ivaApplicable);
      if (fee.totalCharged >= n.amountCents) {
        // A fee at or above the payment cannot be charged on money received: credited without fee.
        deps.log.warn({ providerTransferId: n.providerTransferId, fee: fee.totalCharged.toString() }, 'BREB_INFLOW fee ≥ amount: waived');
        fee = ZERO_FEE;
      }
    }
    const intent: PaymentRecord = {
      depositId: newDepositId(), providerTransferId: n.providerTransferId, companyId: key.companyId,
      key: { id: key.id, externalId: key.externalId, name: key.name, value: key.keyValue, state: key.state },
      status: assign ? 'ASSIGNED' : 'UNASSIGNED', amount: n.amountCents, fee, netAmount: n.amountCents - fee.totalCharged,
      payerName: n.payerName, payerDocument: n.payerDocument, payerBank: n.payerBank, receivedAt: n.receivedAt,
      movementId: deps.newId(), pendingStep: assign ? 'CREDIT' : 'HOLD', createdAt: deps.now(),
    };
    const { payment, created } = await deps.store.recordIntent(intent, n.eventId);
    if (!created) {
      if (payment.pendingStep) await this.steps.finish(payment);
      return { accepted: true, duplicate: true };
    }
    if (!assign) deps.log.warn({ keyId: key.id, state: key.state, providerTransferId: n.providerTransferId }, 'Bre-B payment to an inactive key: UNASSIGNED');
    await this.steps.finish(payment);
    return { accepted: true, duplicate: false };
  }
}
