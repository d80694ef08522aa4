import { AppError } from '@wallet/platform';
import QRCode from 'qrcode';
import { isQrId, newQrId, newQrReference, type QrRecord } from '../domain/collect-key.js';
import { encodeStaticQr } from '../domain/emvco.js';
import type { CollectKeyDeps } from './deps.js';
import { collectKeyEvent } from './events.js';
import { findKey } from './keys.js';

/** §4.10: the key's one live static QR (created → reused=false; existing → reused=true); KEY_NOT_ACTIVE unless ACTIVE. */
export class IssueQr {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyId: string | undefined, keyRef: string): Promise<{ qr: QrRecord; reused: boolean }> {
    if (!companyId) throw new AppError('AUTH_REQUIRED');
    const deps = this.deps;
    const key = await findKey(deps, companyId, keyRef);
    if (key.state !== 'ACTIVE') throw new AppError('KEY_NOT_ACTIVE');
    for (;;) {
      const live = await deps.store.liveQr(key.id);
      if (live) return { qr: live, reused: true };
      const reference = newQrReference();
      const qr: QrRecord = {
        id: newQrId(),
        companyId,
        keyId: key.id,
        type: 'STATIC',
        reference,
        isPaid: false,
        createdAt: deps.now(),
        payload: encodeStaticQr({
          keyValue: key.keyValue,
          merchantName: key.name || deps.settings.merchantName,
          merchantCity: deps.settings.merchantCity,
          reference,
        }),
      };
      const stored = await deps.store.insertQr(qr, (q) => collectKeyEvent(deps, 'qr_issued', key, q));
      if (stored) return { qr: stored, reused: false };
      // Another issue won the race: loop and return its QR.
    }
  }
}

/** The PNG of exactly the stored payload; QR_NOT_FOUND for unknown or another company's. */
export class GetQrPng {
  constructor(private readonly deps: CollectKeyDeps) {}

  async execute(companyId: string | undefined, qrId: string): Promise<Buffer> {
    if (!companyId) throw new AppError('AUTH_REQUIRED');
    const id = (qrId ?? '').replace(/\.png$/, '');
    const qr = isQrId(id) ? await this.deps.store.qr(id) : undefined;
    if (!qr || qr.companyId !== companyId) throw new AppError('QR_NOT_FOUND');
    return QRCode.toBuffer(qr.payload, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 512 });
  }
}
