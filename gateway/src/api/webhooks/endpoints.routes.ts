import { z } from 'zod';
import { createEndpointRequest, deliveryToApi, endpointToApi, endpointWithSecretToApi } from './presenters.js';
import type { WebhookClient } from '../../clients/webhook-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import {
  CreateWebhookEndpointBody,
  DELIVERY_ID,
  ENDPOINT_ID,
  RotateSecretBody,
  UpdateWebhookEndpointBody,
  VERIFICATION_DOC,
  WebhookDeliveriesQuery,
  WebhookDeliveryPageSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from './schemas.js';

const TAGS = ['Webhooks'];

export function webhookEndpointRoutes(webhooks: WebhookClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/webhooks/endpoints',
      operationId: 'createWebhookEndpoint',
      tags: TAGS,
      summary: 'Register a webhook endpoint (the signing secret is shown once)',
      description: VERIFICATION_DOC,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      idempotent: true,
      body: CreateWebhookEndpointBody,
      responses: { 201: { description: 'The endpoint with its signing secret.', schema: WebhookEndpointWithSecretSchema } },
      errors: ['SERVICE_UNAVAILABLE', 'WEBHOOK_ENDPOINT_LIMIT_REACHED'],
      handler: async ({ body, call }) => {
        const r = await webhooks.createEndpoint(createEndpointRequest(body), call);
        return { status: 201, body: endpointWithSecretToApi(r) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/webhooks/endpoints',
      operationId: 'listWebhookEndpoints',
      tags: TAGS,
      summary: 'Your webhook endpoints',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      responses: { 200: { description: 'Every live endpoint, oldest first.', schema: WebhookEndpointListSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: { items: (await webhooks.listEndpoints({}, call)).items.map(endpointToApi) } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/webhooks/endpoints/{id}',
      operationId: 'getWebhookEndpoint',
      tags: TAGS,
      summary: 'One webhook endpoint',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }),
      paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: endpointToApi(await webhooks.getEndpoint({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/webhooks/endpoints/{id}',
      operationId: 'updateWebhookEndpoint',
      tags: TAGS,
      summary: 'Change an endpoint: url, events, enabled, description',
      description:
        'A disabled endpoint receives nothing: no delivery is created for events while it is disabled, and its pending ones wait (and end `FAILED` past the 24 h horizon).',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }),
      paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      body: UpdateWebhookEndpointBody,
      responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({
        status: 200,
        body: endpointToApi(
          await webhooks.updateEndpoint(
            {
              id: params.id,
              ...(body.url !== undefined ? { url: body.url } : {}),
              setEvents: body.events !== undefined,
              events: body.events ?? [],
              ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
              ...(typeof body.description === 'string' ? { description: body.description } : {}),
              clearDescription: body.description === null,
            },
            call,
          ),
        ),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/webhooks/endpoints/{id}',
      operationId: 'deleteWebhookEndpoint',
      tags: TAGS,
      summary: 'Delete an endpoint; its pending deliveries end FAILED',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }),
      paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: { 200: { description: 'Deleted.', schema: z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'WebhookEndpointDeleted' }) } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        await webhooks.deleteEndpoint({ id: params.id }, call);
        return { status: 200, body: { id: params.id, deleted: true } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/webhooks/endpoints/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      tags: TAGS,
      summary: 'Rotate the signing secret (the new one is shown once)',
      description:
        'The new secret signs at once; during the overlap (`overlapSeconds`, default 24 h) the previous one also signs, so `webhook-signature` carries two space-separated `v1,…` entries and receivers can switch without losing a delivery. The body may be omitted (the defaults).',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }),
      paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      body: RotateSecretBody,
      responses: { 200: { description: 'The endpoint with its new signing secret.', schema: WebhookEndpointWithSecretSchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({
        status: 200,
        body: endpointWithSecretToApi(
          await webhooks.rotateSecret({ id: params.id, ...(body?.overlapSeconds !== undefined ? { overlapSeconds: body.overlapSeconds } : {}) }, call),
        ),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/webhooks/endpoints/{id}/test',
      operationId: 'testWebhookEndpoint',
      tags: TAGS,
      summary: 'Send a `webhook.ping` event to the endpoint',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }),
      paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: { 202: { description: 'The ping delivery, queued.', schema: WebhookDeliverySchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 202, body: deliveryToApi(await webhooks.testEndpoint({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/webhooks/deliveries',
      operationId: 'listWebhookDeliveries',
      tags: TAGS,
      summary: 'The delivery log, newest first (cursor pagination)',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: WebhookDeliveriesQuery,
      responses: { 200: { description: 'A page of deliveries.', schema: WebhookDeliveryPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await webhooks.listDeliveries(
          {
            ...(query.endpointId ? { endpointId: query.endpointId } : {}),
            ...(query.status ? { status: query.status } : {}),
            ...(query.cursor ? { cursor: query.cursor } : {}),
            limit: query.limit,
          },
          call,
        );
        return { status: 200, body: { items: r.items.map(deliveryToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/webhooks/deliveries/{id}',
      operationId: 'getWebhookDelivery',
      tags: TAGS,
      summary: 'One delivery: status, attempts, last response code and latency',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: DELIVERY_ID }),
      paramErrors: { id: 'WEBHOOK_DELIVERY_NOT_FOUND' },
      responses: { 200: { description: 'The delivery.', schema: WebhookDeliverySchema } },
      errors: ['WEBHOOK_DELIVERY_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: deliveryToApi(await webhooks.getDelivery({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/webhooks/deliveries/{id}/replay',
      operationId: 'replayWebhookDelivery',
      tags: TAGS,
      summary: "Send a delivery's event again (same event id and body), as a new delivery",
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      params: z.object({ id: DELIVERY_ID }),
      paramErrors: { id: 'WEBHOOK_DELIVERY_NOT_FOUND' },
      responses: { 202: { description: 'The new delivery, queued (`replayOf` = the original).', schema: WebhookDeliverySchema } },
      errors: ['WEBHOOK_DELIVERY_NOT_FOUND', 'WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 202, body: deliveryToApi(await webhooks.replayDelivery({ id: params.id }, call)) }),
    }),
  ];
}
