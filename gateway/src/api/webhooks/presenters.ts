import { formatInstant } from '@wallet/platform';
import type { webhookV1 } from '@wallet/proto';

/** Webhook proto → HTTP edge mappings. */

const iso = (d: Date | undefined) => (d ? formatInstant(d) : null);

export function endpointToApi(e: webhookV1.Endpoint) {
  return {
    id: e.id,
    url: e.url,
    description: e.description ?? null,
    events: e.events,
    enabled: e.enabled,
    previousSecretExpiresAt: iso(e.previousSecretExpiresAt),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  };
}

/** Creation and rotation: the endpoint plus its signing secret, shown this once. */
export function endpointWithSecretToApi(r: webhookV1.EndpointWithSecret) {
  return { ...endpointToApi(r.endpoint!), secret: r.secret };
}

export function deliveryToApi(d: webhookV1.Delivery) {
  return {
    id: d.id,
    endpointId: d.endpointId,
    eventId: d.eventId,
    eventType: d.eventType,
    resourceId: d.resourceId ?? null,
    status: d.status,
    attempts: d.attempts,
    responseStatus: d.responseStatus ?? null,
    latencyMs: d.latencyMs ?? null,
    lastError: d.lastError ?? null,
    nextAttemptAt: iso(d.nextAttemptAt),
    lastAttemptAt: iso(d.lastAttemptAt),
    deliveredAt: iso(d.deliveredAt),
    replayOf: d.replayOf ?? null,
    createdAt: iso(d.createdAt),
  };
}

/** A create request as the webhook service takes it (a company's endpoint or an operators' one). */
export function createEndpointRequest(body: { url: string; events: string[]; enabled?: boolean | undefined; description?: string | undefined }) {
  return {
    url: body.url,
    events: body.events,
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
  };
}
