import { formatInstant } from '@wallet/platform';
import type { collectKeyV1 } from '@wallet/proto';

/** §2.8: a collect key as the API shows it. */
export function collectKeyToApi(k: collectKeyV1.CollectKey) {
  return {
    id: k.id,
    externalId: k.externalId,
    name: k.name,
    key: { type: k.keyType, value: k.keyValue },
    state: k.state,
    createdAt: formatInstant(k.createdAt ?? new Date()),
    deletedAt: k.deletedAt ? formatInstant(k.deletedAt) : null,
  };
}

/** §2.9: the QR issue answer. */
export function qrToApi(q: collectKeyV1.Qr, reused: boolean) {
  return {
    qr: { id: q.id, type: q.type, reference: q.reference, isPaid: q.isPaid, createdAt: formatInstant(q.createdAt ?? new Date()) },
    reused,
  };
}
