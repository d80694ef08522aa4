import { collectKeyView, formatInstant } from '@wallet/platform';
import type { collectKeyV1 } from '@wallet/proto';

/** §2.8: a collect key as the API shows it. */
export function collectKeyToApi(k: collectKeyV1.CollectKey) {
  // The API never answers a null createdAt: now, when the service sent none.
  return { ...collectKeyView(k), createdAt: formatInstant(k.createdAt ?? new Date()) };
}

/** §2.9: the QR issue answer. */
export function qrToApi(q: collectKeyV1.Qr, reused: boolean) {
  return {
    qr: { id: q.id, type: q.type, reference: q.reference, isPaid: q.isPaid, createdAt: formatInstant(q.createdAt ?? new Date()) },
    reused,
  };
}
