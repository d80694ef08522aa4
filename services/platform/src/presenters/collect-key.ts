import type { collectKeyV1 } from '@wallet/proto';
import { formatInstant } from '../time/instant.js';

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);

/**
 * A collect key as the API shows it (§2.8): the ONE builder of the gateway's collect-key answers
 * and of the `collect_key.*` webhooks' data (docs/webhooks.md). A key the service sent without
 * `createdAt` has `createdAt: null` here (the gateway writes its own time instead).
 */
export function collectKeyView(k: collectKeyV1.CollectKey) {
  return {
    id: k.id,
    externalId: k.externalId,
    name: k.name,
    key: { type: k.keyType, value: k.keyValue },
    state: k.state,
    createdAt: iso(k.createdAt),
    deletedAt: iso(k.deletedAt),
  };
}
