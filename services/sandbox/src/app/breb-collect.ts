import { randomBytes } from 'node:crypto';
import type { Database, Logger } from '@wallet/platform';
import { DELIVERY_WINDOW_MS } from '../domain/callbacks.js';
import type { Holder } from '../domain/holders.js';
import { InvalidQr, readBrebQr, type BrebQr } from '../domain/emvco-qr.js';
import { normalizeKeyValue, type KeyType } from '../domain/keys.js';
import { ProviderError, directoryDown, railDown } from './errors.js';
import type { FaultSwitches, IncomingRow, KeyRegistry, RegistrationRow, ReturnRow } from './ports.js';

/** The bank name a participant-registered key shows in the directory (the participant: our product). */
export const PARTICIPANT_BANK_NAME = 'Wallet';

/** A Colombian NIT: 9 digits (companies start with 8 or 9) with or without its check digit. */
const NIT = /^(?:[89]\d{8}(?:-?\d)?|\d{9}-\d)$/;

/**
 * The registered holder as the directory shows it: the name split into first and last names
 * (one word → first name only; two → one each; three → one given name, two surnames; more →
 * the last two words are the surnames), `NIT` when the document looks like one, else `CC`.
 */
export function registeredHolder(r: Pick<RegistrationRow, 'holderName' | 'holderDocument'>): Holder {
  const words = r.holderName.trim().split(/\s+/).filter(Boolean);
  const surnames = words.length <= 1 ? 0 : words.length === 2 ? 1 : 2;
  const doc = r.holderDocument ?? '';
  return {
    firstName: words.slice(0, words.length - surnames).join(' '),
    lastName: words.slice(words.length - surnames).join(' '),
    idType: NIT.test(doc) ? 'NIT' : 'CC',
    idValue: doc,
    bankName: PARTICIPANT_BANK_NAME,
    bankAccountType: 'Ahorros',
  };
}

export interface InboundCallbackBody {
  eventId: string;
  providerTransferId: string;
  keyValue: string;
  /** The registration the network routed the payment to when it was paid (its anchorHandle): the participant attributes by it. */
  anchorHandle: string;
  amountCents: number;
  payerName: string;
  payerDocument: string;
  payerBank: string;
  receivedAt: string;
  occurredAt: string;
  /** The transaction id of the dynamic QR the payer paid (tag 62/05); absent for a payment by key. */
  transactionId?: string;
}

/** The callback body of an inbound payment, serialized once so every delivery sends the same bytes. */
export function inboundCallbackBody(p: IncomingRow, eventId: string, anchorHandle: string): string {
  const body: InboundCallbackBody = {
    eventId,
    providerTransferId: p.providerTransferId,
    keyValue: p.keyValue,
    anchorHandle,
    amountCents: Number(p.amountCents),
    payerName: p.payerName,
    payerDocument: p.payerDocument,
    payerBank: p.payerBank,
    receivedAt: p.receivedAt,
    occurredAt: p.receivedAt,
    ...(p.transactionId ? { transactionId: p.transactionId } : {}),
  };
  return JSON.stringify(body);
}

export const keyAlreadyRegistered = () =>
  new ProviderError(409, 'KEY_ALREADY_REGISTERED', 'La llave ya está registrada por otro participante o con otra URL de notificación.');
export const keyNotFound = () => new ProviderError(404, 'KEY_NOT_FOUND', 'La llave no está registrada en el directorio Bre-B.');

export interface RegistrationRequest {
  keyValue: string;
  keyType: KeyType;
  holderName: string;
  holderDocument: string | null;
  participantCallbackUrl: string;
}

export interface InboundPaymentRequest {
  keyValue: string;
  amountCents: bigint;
  payerName: string;
  payerDocument: string;
  payerBank: string;
  /** The paid QR's transaction id (62/05), carried in the notification. */
  transactionId?: string | null;
}

/** A payer paying a QR by its payload: the amount typed (overrides the QR's tag 54), and whether to pay a QR past its expiry. */
export interface QrPaymentRequest {
  qrPayload: string;
  amountCents?: bigint | undefined;
  ignoreExpiry?: boolean | undefined;
  payerName: string;
  payerDocument: string;
  payerBank: string;
}

export const returnIdTaken = () => new ProviderError(409, 'ALREADY_RETURNED', 'El returnId ya se usó para otra devolución (otro pago o otro valor).');
export const returnExceedsPayment = (remainingCents: bigint) =>
  new ProviderError(
    409,
    'RETURN_EXCEEDS_PAYMENT',
    remainingCents > 0n ? `La devolución supera el saldo por devolver del pago (quedan ${remainingCents} centavos).` : 'El pago ya fue devuelto por completo.',
    { remainingCents: Number(remainingCents) },
  );

export const qrExpired = () => new ProviderError(422, 'QR_EXPIRED', 'El QR está vencido.');

/**
 * Keys registered in the directory by participants (collect keys) and the payments the network
 * routes to them: each inbound payment is written with its signed callback in one transaction;
 * the dispatcher delivers it (same signing, retries, `callbacks` fault and redelivery as the rails).
 */
export class BrebCollect {
  constructor(
    private readonly db: Database,
    private readonly store: FaultSwitches,
    private readonly registrations: KeyRegistry,
    private readonly wake: () => void,
    private readonly log: Logger,
  ) {}

  /** 201 new or replayed (same value and callback URL); 409 KEY_ALREADY_REGISTERED otherwise; 503 directory down. */
  async register(r: RegistrationRequest): Promise<{ registration: RegistrationRow; created: boolean }> {
    if ((await this.store.fault('directory')) === 'down') throw directoryDown();
    const out = await this.registrations.insertRegistration({ ...r, anchorHandle: `anh_${randomBytes(12).toString('hex')}` });
    if (!out.created && out.registration.participantCallbackUrl !== r.participantCallbackUrl) throw keyAlreadyRegistered();
    if (out.created) this.log.info({ keyValue: r.keyValue, anchorHandle: out.registration.anchorHandle }, 'Bre-B key registered');
    return out;
  }

  /** Soft delete of the live registration; true when there was one (idempotent). 503 directory down. */
  async unregister(keyValue: string): Promise<boolean> {
    if ((await this.store.fault('directory')) === 'down') throw directoryDown();
    const deleted = await this.registrations.deleteLive(keyValue);
    if (deleted) this.log.info({ keyValue, anchorHandle: deleted.anchorHandle }, 'Bre-B key registration deleted');
    return deleted !== undefined;
  }

  /** The live registration of a normalized value (the directory lookup's first source). */
  live(keyValue: string): Promise<RegistrationRow | undefined> {
    return this.registrations.findLive(keyValue);
  }

  /**
   * An inbound payment to the most recent registration of the value, live or deleted (the
   * network delivers to the last holder); 404 KEY_NOT_FOUND when it was never registered.
   */
  async incoming(p: InboundPaymentRequest): Promise<{ payment: IncomingRow; eventId: string; registration: RegistrationRow }> {
    const out = await this.db.tx(async (tx) => {
      const registration = await this.registrations.findLatest(tx, p.keyValue);
      if (!registration) throw keyNotFound();
      const payment = await this.registrations.insertIncoming(tx, registration.id, {
        ...p,
        transactionId: p.transactionId ?? null,
        providerTransferId: `brb_in_${randomBytes(12).toString('hex')}`,
      });
      const eventId = await this.registrations.insertCallback(
        tx,
        payment.providerTransferId,
        registration.participantCallbackUrl,
        (id) => inboundCallbackBody(payment, id, registration.anchorHandle),
        DELIVERY_WINDOW_MS,
      );
      return { payment, eventId, registration };
    });
    this.log.info(
      { keyValue: p.keyValue, providerTransferId: out.payment.providerTransferId, live: out.registration.deletedAt === null },
      'Bre-B inbound payment',
    );
    this.wake();
    return out;
  }

  /**
   * The payer's app pays a Bre-B QR by its payload (domain/emvco-qr.ts): the CRC must check and the QR
   * carry a CO.BREB key (else 400 "QR inválido"); the amount is the one typed, else the QR's (tag 54),
   * else 400; a QR past its expiry (template 80) → 422 QR_EXPIRED unless `ignoreExpiry` (a test paying
   * late). Then an inbound payment to the QR's key (as `incoming`) whose notification carries the
   * QR's transaction id.
   */
  async payQr(q: QrPaymentRequest): Promise<{ payment: IncomingRow; eventId: string; registration: RegistrationRow }> {
    let qr: BrebQr;
    try {
      qr = readBrebQr(q.qrPayload);
    } catch (err) {
      if (err instanceof InvalidQr) throw new ProviderError(400, 'INVALID_REQUEST', 'QR inválido.', { fields: [{ path: 'qrPayload', message: err.message }] });
      throw err;
    }
    const amountCents = q.amountCents ?? qr.amountCents;
    if (amountCents === null) {
      throw new ProviderError(400, 'INVALID_REQUEST', 'El QR no trae valor: indique amountCents.', {
        fields: [{ path: 'amountCents', message: 'Requerido cuando el QR no trae valor (tag 54).' }],
      });
    }
    if (qr.expiresAt && qr.expiresAt.getTime() <= Date.now() && !q.ignoreExpiry) throw qrExpired();
    return this.incoming({
      keyValue: normalizeKeyValue(qr.keyValue),
      amountCents,
      payerName: q.payerName,
      payerDocument: q.payerDocument,
      payerBank: q.payerBank,
      transactionId: qr.transactionId,
    });
  }

  /**
   * A participant returns all or part of an inbound payment to the payer, as many times as it likes
   * while the returns' sum stays within the payment's amount. Each return is recorded under the
   * participant's `returnId`: the same id again with the same payment and amount answers the same
   * return (replayed); with other terms → 409 ALREADY_RETURNED. A return that would take the sum past
   * the payment's amount → 409 RETURN_EXCEEDS_PAYMENT; an unknown payment → 404; `brebRail: down` →
   * 503. Decided under the payment's row lock, so two returns racing for its last peso cannot both pass.
   */
  async returnPayment(r: { returnId: string; providerTransferId: string; amountCents: bigint }): Promise<{ returnedAt: string; replayed: boolean }> {
    if ((await this.store.fault('brebRail')) === 'down') throw railDown('Bre-B');
    const sameTerms = (x: ReturnRow) => x.providerTransferId === r.providerTransferId && x.amountCents === r.amountCents;
    const out = await this.db.tx(async (tx) => {
      const gross = await this.registrations.lockIncoming(tx, r.providerTransferId);
      if (gross === undefined) throw new ProviderError(404, 'TRANSFER_NOT_FOUND', 'No existe un pago entrante con ese providerTransferId.');
      const existing = await this.registrations.findReturn(tx, r.returnId);
      if (existing) {
        if (!sameTerms(existing)) throw returnIdTaken();
        return { row: existing, replayed: true };
      }
      const returned = await this.registrations.returnedCents(tx, r.providerTransferId);
      if (returned + r.amountCents > gross) throw returnExceedsPayment(gross - returned);
      const row = await this.registrations.insertReturn(tx, r);
      if (row) return { row, replayed: false };
      // Another request took the id meanwhile (for another payment: one for this one waits for the lock).
      const raced = await this.registrations.findReturn(tx, r.returnId);
      if (!raced || !sameTerms(raced)) throw returnIdTaken();
      return { row: raced, replayed: true };
    });
    if (!out.replayed) {
      this.log.info(
        { providerTransferId: r.providerTransferId, returnId: r.returnId, amountCents: r.amountCents.toString() },
        'Bre-B inbound payment returned to the payer',
      );
    }
    return { returnedAt: out.row.returnedAt, replayed: out.replayed };
  }

  findIncoming(providerTransferId: string): Promise<IncomingRow | undefined> {
    return this.registrations.findIncoming(providerTransferId);
  }
}
