import type { AccessPolicy, AsyncService } from '@wallet/platform';
import type { webhookV1 } from '@wallet/proto';
import type { WebhookUseCases } from '../app/use-cases.js';
import type { DeliveryRow, EndpointRow } from '../app/ports.js';

export function endpointToProto(e: EndpointRow): webhookV1.Endpoint {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
    ...(e.description !== null ? { description: e.description } : {}),
    ...(e.previousSecretExpiresAt && e.previousSecretExpiresAt.getTime() > Date.now() ? { previousSecretExpiresAt: e.previousSecretExpiresAt } : {}),
  };
}

export function deliveryToProto(dl: DeliveryRow): webhookV1.Delivery {
  const resourceId = dl.resourceKey ? dl.resourceKey.slice(dl.resourceKey.indexOf(':') + 1) : undefined;
  return {
    id: dl.id,
    endpointId: dl.endpointId,
    eventId: dl.eventId,
    eventType: dl.eventType,
    status: dl.status,
    attempts: dl.attempts,
    createdAt: dl.createdAt,
    ...(resourceId ? { resourceId } : {}),
    ...(dl.lastResponseStatus !== null ? { responseStatus: dl.lastResponseStatus } : {}),
    ...(dl.lastLatencyMs !== null ? { latencyMs: dl.lastLatencyMs } : {}),
    ...(dl.lastError !== null ? { lastError: dl.lastError } : {}),
    ...(dl.status === 'PENDING' ? { nextAttemptAt: dl.nextAttemptAt } : {}),
    ...(dl.lastAttemptAt ? { lastAttemptAt: dl.lastAttemptAt } : {}),
    ...(dl.deliveredAt ? { deliveredAt: dl.deliveredAt } : {}),
    ...(dl.replayOf ? { replayOf: dl.replayOf } : {}),
  };
}

/** The WebhookService RPCs: decode, call one use case, encode. The company comes from `x-company-id` metadata. */
export function webhookHandlers(uc: WebhookUseCases): AsyncService<webhookV1.WebhookServiceServer> {
  return {
    async createEndpoint(req, ctx) {
      const r = await uc.createEndpoint.execute(ctx.companyId, {
        url: req.url,
        events: req.events,
        ...(req.enabled !== undefined ? { enabled: req.enabled } : {}),
        ...(req.description !== undefined ? { description: req.description } : {}),
      });
      return { endpoint: endpointToProto(r.endpoint), secret: r.secret };
    },
    async listEndpoints(_req, ctx) {
      return { items: (await uc.listEndpoints.execute(ctx.companyId)).map(endpointToProto) };
    },
    async getEndpoint(req, ctx) {
      return endpointToProto(await uc.getEndpoint.execute(ctx.companyId, req.id));
    },
    async updateEndpoint(req, ctx) {
      return endpointToProto(
        await uc.updateEndpoint.execute(ctx.companyId, req.id, {
          ...(req.url !== undefined ? { url: req.url } : {}),
          ...(req.setEvents ? { events: req.events } : {}),
          ...(req.enabled !== undefined ? { enabled: req.enabled } : {}),
          ...(req.clearDescription ? { description: null } : req.description !== undefined ? { description: req.description } : {}),
        }),
      );
    },
    async deleteEndpoint(req, ctx) {
      await uc.deleteEndpoint.execute(ctx.companyId, req.id);
      return { id: req.id, deleted: true };
    },
    async rotateSecret(req, ctx) {
      const r = await uc.rotateSecret.execute(ctx.companyId, req.id, req.overlapSeconds);
      return { endpoint: endpointToProto(r.endpoint), secret: r.secret };
    },
    async testEndpoint(req, ctx) {
      return deliveryToProto(await uc.testEndpoint.execute(ctx.companyId, req.id));
    },
    async listDeliveries(req, ctx) {
      const r = await uc.listDeliveries.execute(ctx.companyId, {
        ...(req.endpointId !== undefined ? { endpointId: req.endpointId } : {}),
        ...(req.status !== undefined ? { status: req.status } : {}),
        ...(req.cursor !== undefined ? { cursor: req.cursor } : {}),
        limit: req.limit,
      });
      return { items: r.items.map(deliveryToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
    async getDelivery(req, ctx) {
      return deliveryToProto(await uc.getDelivery.execute(ctx.companyId, req.id));
    },
    async replayDelivery(req, ctx) {
      return deliveryToProto(await uc.replayDelivery.execute(ctx.companyId, req.id));
    },

    // Platform endpoints (operators): no company; ctx.companyId is not used.
    async createPlatformEndpoint(req) {
      const r = await uc.createEndpoint.forPlatform({
        url: req.url,
        events: req.events,
        ...(req.enabled !== undefined ? { enabled: req.enabled } : {}),
        ...(req.description !== undefined ? { description: req.description } : {}),
      });
      return { endpoint: endpointToProto(r.endpoint), secret: r.secret };
    },
    async listPlatformEndpoints() {
      return { items: (await uc.listEndpoints.forPlatform()).map(endpointToProto) };
    },
    async deletePlatformEndpoint(req) {
      await uc.deleteEndpoint.forPlatform(req.id);
      return { id: req.id, deleted: true };
    },
    async testPlatformEndpoint(req) {
      return deliveryToProto(await uc.testEndpoint.forPlatform(req.id));
    },
    async listPlatformDeliveries(req) {
      const r = await uc.listDeliveries.forPlatform({
        ...(req.endpointId !== undefined ? { endpointId: req.endpointId } : {}),
        ...(req.status !== undefined ? { status: req.status } : {}),
        ...(req.cursor !== undefined ? { cursor: req.cursor } : {}),
        limit: req.limit,
      });
      return { items: r.items.map(deliveryToProto), ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
    },
  };
}

/** Who may call each RPC: the gateway only, for a company (an API client or a dashboard user), or for an operator (the platform endpoints). */
export const webhookAccess: AccessPolicy<AsyncService<webhookV1.WebhookServiceServer>> = {
  createEndpoint: ['gateway'],
  listEndpoints: ['gateway'],
  getEndpoint: ['gateway'],
  updateEndpoint: ['gateway'],
  deleteEndpoint: ['gateway'],
  rotateSecret: ['gateway'],
  testEndpoint: ['gateway'],
  listDeliveries: ['gateway'],
  getDelivery: ['gateway'],
  replayDelivery: ['gateway'],
  // Platform endpoints: operators only (docs/webhooks.md "Operators' webhooks").
  createPlatformEndpoint: ['gateway:admin'],
  listPlatformEndpoints: ['gateway:admin'],
  deletePlatformEndpoint: ['gateway:admin'],
  testPlatformEndpoint: ['gateway:admin'],
  listPlatformDeliveries: ['gateway:admin'],
};
