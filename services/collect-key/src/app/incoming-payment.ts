import { AppError } from '@wallet/platform';
import { verifySignature } from '@wallet/platform';
import { maskKeyValue, newDepositId } from '../domain/collect-key.js';
import { parseIncomingPayment } from '../domain/incoming-payment.js';
import type { CollectKeyDeps } from './deps.js';
import type { PaymentSaga } from './payment-saga.js';
import { ZERO_FEE, type FeeBreakdown, type PaymentRecord } from './ports.js';

export interface IncomingPaymentCommand {
  rawBody: Buffer;
  signature: string;
}
/** `accepted` is always true: what cannot be booked is refused with a retryable error instead. */
export interface IncomingPaymentResult {
  accepted: boolean;
  duplicate: boolean;
}

/**
 * The network's signed notification of an inbound payment. HMAC over the raw bytes (±300 s) →
 * dedupe by event id and provider transfer id → the key of the registration the network routed it to
 * (`anchorHandle`; see below for a registration we do not know) →
 * ACTIVE: ComputeFees(BREB_INFLOW), recorded CREDITING; SUSPENDED/DELETED: recorded HOLDING (zero fee)
 * → PaymentSaga.settle: the ledger step, then the closing transition (ASSIGNED + deposit.paid /
 * UNASSIGNED + deposit.unassigned); a definite refusal of the credit → CREDIT_REFUSED + money
 * exception, acknowledged (the network stops retrying; an operator resolves it).
 * REGISTERING, or no key for the value: SERVICE_UNAVAILABLE (the gateway answers 503, the network
 * retries), never an acknowledgement with nothing booked. IVA applies when the company's tax regime was
 * COMMON when the key was issued (stored with the key from CreateKey's caller context; the notification carries no company).
 */
export class HandleIncomingPayment {
  constructor(
    private readonly deps: CollectKeyDeps,
    private readonly saga: PaymentSaga,
  ) {}

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
      await this.saga.settle(known, 'network'); // a redelivery finishes a money step left unfinished (none owed: nothing)
      return { accepted: true, duplicate: true };
    }
    // Attribution follows the registration the network routed the payment to when it was paid, never
    // whoever holds the value now: a delayed notification for a payment to A's deleted key stays A's
    // (held UNASSIGNED) after B registers the same value. A registration we do not know (a key that
    // went live before registrations were recorded, or one whose answer was lost while REGISTERING),
    // or a notification naming none: among the value's keys without a recorded registration (any key
    // when none is named), the REGISTERING one (retried), else the most recent created by the time it was paid.
    const byAnchor = n.anchorHandle ? await deps.store.byAnchorHandle(n.anchorHandle) : undefined;
    const key = byAnchor ?? (await deps.store.byValueAt(n.keyValue, n.receivedAt, n.anchorHandle !== null));
    if (key && key.keyValue !== n.keyValue) {
      deps.log.error({ providerTransferId: n.providerTransferId, keyId: key.id }, "Bre-B payment: the registration it names is another value's");
      throw new AppError('INVALID_REQUEST', 'La notificación nombra un registro de otra llave.');
    }
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
      depositId: newDepositId(),
      providerTransferId: n.providerTransferId,
      companyId: key.companyId,
      key: { id: key.id, externalId: key.externalId, name: key.name, value: key.keyValue, state: key.state },
      status: assign ? 'CREDITING' : 'HOLDING',
      amount: n.amountCents,
      fee,
      netAmount: n.amountCents - fee.totalCharged,
      payerName: n.payerName,
      payerDocument: n.payerDocument,
      payerBank: n.payerBank,
      receivedAt: n.receivedAt,
      movementId: deps.newId(),
      pendingStep: assign ? 'CREDIT' : 'HOLD',
      createdAt: deps.now(),
      transactionId: n.transactionId,
      cobroId: key.cobro?.cobroId ?? null,
    };
    const { payment, created } = await deps.store.recordIntent(intent, n.eventId);
    if (!created) {
      await this.saga.settle(payment, 'network');
      return { accepted: true, duplicate: true };
    }
    if (!assign) deps.log.warn({ keyId: key.id, state: key.state, providerTransferId: n.providerTransferId }, 'Bre-B payment to an inactive key: UNASSIGNED');
    await this.saga.settle(payment, 'network');
    return { accepted: true, duplicate: false };
  }
}
