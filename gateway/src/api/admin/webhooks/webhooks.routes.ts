import { z } from 'zod';
import { PLATFORM_EVENT_TYPES } from '@wallet/platform';
import { createEndpointRequest, deliveryToApi, endpointToApi, endpointWithSecretToApi } from '../../webhooks/presenters.js';
import type { WebhookClient } from '../../../clients/webhook-client.js';
import { defineRoute, type AnyRoute } from '../../../http/route.js';
import { textSchema } from '../../../http/validation.js';
import {
  VERIFICATION_DOC,
  WebhookDeliveriesQuery,
  WebhookDeliveryPageSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointWithSecretSchema,
  ENDPOINT_ID,
  WebhookUrlSchema,
} from '../../webhooks/schemas.js';

const CreatePlatformEndpointBody = z
  .strictObject({
    url: WebhookUrlSchema,
    events: z.array(z.enum(PLATFORM_EVENT_TYPES)).min(1, { message: 'Suscriba al menos un tipo de evento.' }).max(4).meta({
      description:
        '`reconciliation.completed`: a run of (rail, date) finished (RECONCILED, REJECTED or FAILED); `data` is the run as `GET /admin/reconciliations/{id}` shows it. `reconciliation.break`: a break was opened (once per break key); `data` is the break as its listing shows it.',
    }),
    enabled: z.boolean().optional().meta({ description: 'Default true.' }),
    description: textSchema(1, 200).optional(),
  })
  .meta({ id: 'CreatePlatformWebhookEndpointRequest' });

const TAGS = ['Admin'];

/**
 * Operators' webhooks (docs/webhooks.md): platform endpoints, owned by no company, that receive the
 * reconciliation's events as Standard Webhooks deliveries from the same worker as companies'
 * webhooks. Managed here only; a company's `/webhooks/endpoints` can neither see nor subscribe to them.
 */
export function adminWebhookRoutes(webhooks: WebhookClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/admin/webhooks/endpoints',
      operationId: 'adminCreatePlatformWebhookEndpoint',
      tags: TAGS,
      summary: "Register an operators' webhook endpoint for the reconciliation's events (the signing secret is shown once)",
      description: VERIFICATION_DOC,
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      body: CreatePlatformEndpointBody,
      responses: { 201: { description: 'The endpoint with its signing secret.', schema: WebhookEndpointWithSecretSchema } },
      errors: ['SERVICE_UNAVAILABLE', 'WEBHOOK_ENDPOINT_LIMIT_REACHED'],
      handler: async ({ body, call }) => {
        const r = await webhooks.createPlatformEndpoint(createEndpointRequest(body), call);
        return { status: 201, body: endpointWithSecretToApi(r) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/webhooks/endpoints',
      operationId: 'adminListPlatformWebhookEndpoints',
      tags: TAGS,
      summary: "The operators' webhook endpoints",
      auth: { kind: 'admin' },
      responses: { 200: { description: 'Every live platform endpoint, oldest first.', schema: WebhookEndpointListSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: { items: (await webhooks.listPlatformEndpoints({}, call)).items.map(endpointToApi) } }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/admin/webhooks/endpoints/{id}',
      operationId: 'adminDeletePlatformWebhookEndpoint',
      tags: TAGS,
      summary: "Delete an operators' webhook endpoint; its pending deliveries end FAILED",
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: z.object({ id: ENDPOINT_ID }),
      paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: {
        200: { description: 'Deleted.', schema: z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'PlatformWebhookEndpointDeleted' }) },
      },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        await webhooks.deletePlatformEndpoint({ id: params.id }, call);
        return { status: 200, body: { id: params.id, deleted: true } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/admin/webhooks/endpoints/{id}/test',
      operationId: 'adminTestPlatformWebhookEndpoint',
      tags: TAGS,
      summary: "Send a `webhook.ping` event to an operators' endpoint",
      auth: { kind: 'admin' },
      audit: { change: 'service' },
      params: z.object({ id: ENDPOINT_ID }),
      paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: { 202: { description: 'The ping delivery, queued.', schema: WebhookDeliverySchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 202, body: deliveryToApi(await webhooks.testPlatformEndpoint({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/webhooks/deliveries',
      operationId: 'adminListPlatformWebhookDeliveries',
      tags: TAGS,
      summary: "Deliveries to the operators' endpoints, newest first",
      auth: { kind: 'admin' },
      query: WebhookDeliveriesQuery,
      responses: { 200: { description: 'Deliveries; `nextCursor` pages on.', schema: WebhookDeliveryPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await webhooks.listPlatformDeliveries(
          {
            limit: query.limit,
            ...(query.endpointId ? { endpointId: query.endpointId } : {}),
            ...(query.status ? { status: query.status } : {}),
            ...(query.cursor ? { cursor: query.cursor } : {}),
          },
          call,
        );
        return { status: 200, body: { items: r.items.map(deliveryToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
  ];
}
