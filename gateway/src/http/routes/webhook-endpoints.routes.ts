import { z } from 'zod';
import { deliveryToApi, endpointToApi, endpointWithSecretToApi } from '../../webhook/presenters.js';
import type { WebhookClient } from '../../webhook/webhook-client.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { textSchema } from '../validation.js';

/** The public event types (the webhook service checks them too: services/webhook/src/domain/event-types.ts). */
export const WEBHOOK_EVENT_TYPES = [
  'transfer.created', 'transfer.completed', 'transfer.failed', 'transfer.awaiting_approval', 'transfer.approved', 'transfer.rejected', 'transfer.expired',
  'deposit.created', 'deposit.paid', 'deposit.failed', 'deposit.expired', 'deposit.reversed', 'deposit.unassigned',
  'collect_key.payment_received', 'collect_key.created', 'collect_key.deleted', 'collect_key.state_changed',
  'batch.validated', 'batch.completed',
  'company.security_changed',
] as const;

const isoDate = () => z.string().meta({ format: 'date-time' });

/** How receivers verify a delivery; shown in the OpenAPI description of endpoint creation (and docs/webhooks.md). */
export const VERIFICATION_DOC = [
  'Each delivery is an HTTPS `POST` with a JSON body `{ id, type, createdAt, data }` (`data` has the same shape as the API resource), signed as the',
  '[Standard Webhooks](https://www.standardwebhooks.com) specification says: `webhook-id` (the event id, stable across retries and replays: de-duplicate on it),',
  '`webhook-timestamp` (Unix seconds) and `webhook-signature` (space-separated `v1,<base64 HMAC-SHA256>` over `"<id>.<timestamp>.<raw body>"`, the key being the',
  'base64-decoded part of the `whsec_…` secret; two entries during a secret rotation overlap, either may match).',
  'Answer 2xx within 5 s; anything else (or a time-out) is retried with exponential backoff and jitter for 24 h, then the delivery is marked `FAILED`.',
  'Deliveries about the same resource to one endpoint are sent in order. Verify on the raw body, before parsing it, with a Standard Webhooks library',
  '(npm `standardwebhooks`, PyPI `standardwebhooks`, Go `github.com/standard-webhooks/standard-webhooks/libraries/go`, and Java, Ruby, PHP, Rust …):',
  '',
  '```ts',
  "import { Webhook } from 'standardwebhooks';",
  '',
  'const wh = new Webhook(secret); // the endpoint\'s whsec_… secret, as returned at creation',
  '// throws when the signature does not match or the timestamp is more than 5 minutes off (replays)',
  'const event = wh.verify(rawBody, headers);',
  '```',
].join('\n');

const EventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);
const EventsSchema = z.array(EventTypeSchema).min(1, { message: 'Suscriba al menos un tipo de evento.' }).max(WEBHOOK_EVENT_TYPES.length * 2)
  .meta({ description: 'Event types to receive.' });
const UrlSchema = z.string().min(1).max(2048).refine((s) => { try { const u = new URL(s); return u.protocol === 'https:' || u.protocol === 'http:'; } catch { return false; } }, { message: 'Debe ser una URL https absoluta.' })
  .meta({ description: 'Where deliveries are POSTed. In production: https only, and no loopback, private, link-local, CGNAT or metadata targets (checked when set and again at each delivery).', format: 'uri' });

export const CreateWebhookEndpointBody = z.strictObject({
  url: UrlSchema,
  events: EventsSchema,
  enabled: z.boolean().optional().meta({ description: 'Default true.' }),
  description: textSchema(1, 200).optional(),
}).meta({ id: 'CreateWebhookEndpointRequest' });

export const UpdateWebhookEndpointBody = z.strictObject({
  url: UrlSchema.optional(),
  events: EventsSchema.optional(),
  enabled: z.boolean().optional(),
  description: textSchema(1, 200).nullable().optional().meta({ description: '`null` clears it.' }),
}).refine((b) => Object.keys(b).length > 0, { message: 'Indique al menos un campo.' }).meta({ id: 'UpdateWebhookEndpointRequest' });

export const RotateSecretBody = z.strictObject({
  overlapSeconds: z.int().min(0).max(604_800).optional()
    .meta({ description: 'How long the previous secret keeps signing beside the new one: default 86400 (24 h), max 604800 (7 days), 0 = stop at once.' }),
}).meta({ id: 'RotateWebhookSecretRequest' }).optional(); // no body: the defaults

export const WebhookEndpointSchema = z.object({
  id: z.string().meta({ description: '`we_…`' }),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  previousSecretExpiresAt: isoDate().nullable().meta({ description: 'During a rotation overlap: when the previous secret stops signing.' }),
  createdAt: isoDate(),
  updatedAt: isoDate(),
}).meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/).meta({ description: 'The Standard Webhooks signing secret (`whsec_` + base64 of 32 key bytes), shown only in this answer: store it now.' }),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const WebhookEndpointListSchema = z.object({ items: z.array(WebhookEndpointSchema) }).meta({ id: 'WebhookEndpointList' });

export const WebhookDeliverySchema = z.object({
  id: z.string().meta({ description: '`whd_…`' }),
  endpointId: z.string(),
  eventId: z.string().meta({ description: 'The `Webhook-Id` header and the body `id`; the same on retries and replays.' }),
  eventType: z.string(),
  resourceId: z.string().nullable(),
  status: z.enum(['PENDING', 'SUCCEEDED', 'FAILED']),
  attempts: z.int(),
  responseStatus: z.int().nullable().meta({ description: "The last attempt's HTTP status (null: no answer)." }),
  latencyMs: z.int().nullable().meta({ description: "The last attempt's duration." }),
  lastError: z.string().nullable(),
  nextAttemptAt: isoDate().nullable(),
  lastAttemptAt: isoDate().nullable(),
  deliveredAt: isoDate().nullable(),
  replayOf: z.string().nullable(),
  createdAt: isoDate(),
}).meta({ id: 'WebhookDelivery' });

export const WebhookDeliveryPageSchema = z.object({ items: z.array(WebhookDeliverySchema), nextCursor: z.string().nullable() }).meta({ id: 'WebhookDeliveryPage' });

const ENDPOINT_ID = z.string().regex(/^we_[A-Za-z0-9]{4,64}$/);
const DELIVERY_ID = z.string().regex(/^whd_[A-Za-z0-9]{4,64}$/);

export const WebhookDeliveriesQuery = z.strictObject({
  endpointId: ENDPOINT_ID.optional(),
  status: z.enum(['PENDING', 'SUCCEEDED', 'FAILED']).optional(),
  cursor: z.string().min(1).max(512).optional(),
  limit: z.string().regex(/^\d{1,4}$/, { message: 'Debe ser un número entero.' }).transform(Number).pipe(z.int().min(1).max(200)).optional()
    .transform((v) => v ?? 50).meta({ description: '1-200, default 50.' }),
});

const TAGS = ['Webhooks'];

export function webhookEndpointRoutes(webhooks: WebhookClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/webhooks/endpoints', operationId: 'createWebhookEndpoint', tags: TAGS,
      summary: 'Register a webhook endpoint (the signing secret is shown once)',
      description: VERIFICATION_DOC,
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'READS', idempotent: true,
      body: CreateWebhookEndpointBody,
      responses: { 201: { description: 'The endpoint with its signing secret.', schema: WebhookEndpointWithSecretSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const r = await webhooks.createEndpoint({
          url: body.url, events: body.events, ...(body.enabled !== undefined ? { enabled: body.enabled } : {}), ...(body.description !== undefined ? { description: body.description } : {}),
        }, call);
        return { status: 201, body: endpointWithSecretToApi(r) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/webhooks/endpoints', operationId: 'listWebhookEndpoints', tags: TAGS,
      summary: 'Your webhook endpoints',
      auth: { kind: 'apiKey', scope: 'READ' }, rateClass: 'READS',
      responses: { 200: { description: 'Every live endpoint, oldest first.', schema: WebhookEndpointListSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: { items: (await webhooks.listEndpoints({}, call)).items.map(endpointToApi) } }),
    }),
    defineRoute({
      method: 'GET', path: '/webhooks/endpoints/{id}', operationId: 'getWebhookEndpoint', tags: TAGS,
      summary: 'One webhook endpoint',
      auth: { kind: 'apiKey', scope: 'READ' }, rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }), paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: endpointToApi(await webhooks.getEndpoint({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'PATCH', path: '/webhooks/endpoints/{id}', operationId: 'updateWebhookEndpoint', tags: TAGS,
      summary: 'Change an endpoint: url, events, enabled, description',
      description: 'A disabled endpoint receives nothing: no delivery is created for events while it is disabled, and its pending ones wait (and end `FAILED` past the 24 h horizon).',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }), paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      body: UpdateWebhookEndpointBody,
      responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({
        status: 200,
        body: endpointToApi(await webhooks.updateEndpoint({
          id: params.id,
          ...(body.url !== undefined ? { url: body.url } : {}),
          setEvents: body.events !== undefined, events: body.events ?? [],
          ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          ...(typeof body.description === 'string' ? { description: body.description } : {}),
          clearDescription: body.description === null,
        }, call)),
      }),
    }),
    defineRoute({
      method: 'DELETE', path: '/webhooks/endpoints/{id}', operationId: 'deleteWebhookEndpoint', tags: TAGS,
      summary: 'Delete an endpoint; its pending deliveries end FAILED',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }), paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: { 200: { description: 'Deleted.', schema: z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'WebhookEndpointDeleted' }) } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => {
        await webhooks.deleteEndpoint({ id: params.id }, call);
        return { status: 200, body: { id: params.id, deleted: true } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/webhooks/endpoints/{id}/rotate-secret', operationId: 'rotateWebhookSecret', tags: TAGS,
      summary: 'Rotate the signing secret (the new one is shown once)',
      description: 'The new secret signs at once; during the overlap (`overlapSeconds`, default 24 h) the previous one also signs, so `webhook-signature` carries two space-separated `v1,…` entries and receivers can switch without losing a delivery. The body may be omitted (the defaults).',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }), paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      body: RotateSecretBody,
      responses: { 200: { description: 'The endpoint with its new signing secret.', schema: WebhookEndpointWithSecretSchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({
        status: 200,
        body: endpointWithSecretToApi(await webhooks.rotateSecret({ id: params.id, ...(body?.overlapSeconds !== undefined ? { overlapSeconds: body.overlapSeconds } : {}) }, call)),
      }),
    }),
    defineRoute({
      method: 'POST', path: '/webhooks/endpoints/{id}/test', operationId: 'testWebhookEndpoint', tags: TAGS,
      summary: 'Send a `webhook.ping` event to the endpoint',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'READS',
      params: z.object({ id: ENDPOINT_ID }), paramErrors: { id: 'WEBHOOK_ENDPOINT_NOT_FOUND' },
      responses: { 202: { description: 'The ping delivery, queued.', schema: WebhookDeliverySchema } },
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND', 'INVALID_STATE_TRANSITION', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 202, body: deliveryToApi(await webhooks.testEndpoint({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'GET', path: '/webhooks/deliveries', operationId: 'listWebhookDeliveries', tags: TAGS,
      summary: 'The delivery log, newest first (cursor pagination)',
      auth: { kind: 'apiKey', scope: 'READ' }, rateClass: 'READS',
      query: WebhookDeliveriesQuery,
      responses: { 200: { description: 'A page of deliveries.', schema: WebhookDeliveryPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await webhooks.listDeliveries({
          ...(query.endpointId ? { endpointId: query.endpointId } : {}), ...(query.status ? { status: query.status } : {}),
          ...(query.cursor ? { cursor: query.cursor } : {}), limit: query.limit,
        }, call);
        return { status: 200, body: { items: r.items.map(deliveryToApi), nextCursor: r.nextCursor ?? null } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/webhooks/deliveries/{id}', operationId: 'getWebhookDelivery', tags: TAGS,
      summary: 'One delivery: status, attempts, last response code and latency',
      auth: { kind: 'apiKey', scope: 'READ' }, rateClass: 'READS',
      params: z.object({ id: DELIVERY_ID }), paramErrors: { id: 'WEBHOOK_DELIVERY_NOT_FOUND' },
      responses: { 200: { description: 'The delivery.', schema: WebhookDeliverySchema } },
      errors: ['WEBHOOK_DELIVERY_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: deliveryToApi(await webhooks.getDelivery({ id: params.id }, call)) }),
    }),
    defineRoute({
      method: 'POST', path: '/webhooks/deliveries/{id}/replay', operationId: 'replayWebhookDelivery', tags: TAGS,
      summary: 'Send a delivery\'s event again (same event id and body), as a new delivery',
      auth: { kind: 'apiKey', scope: 'WRITE' }, rateClass: 'READS',
      params: z.object({ id: DELIVERY_ID }), paramErrors: { id: 'WEBHOOK_DELIVERY_NOT_FOUND' },
      responses: { 202: { description: 'The new delivery, queued (`replayOf` = the original).', schema: WebhookDeliverySchema } },
      errors: ['WEBHOOK_DELIVERY_NOT_FOUND', 'WEBHOOK_ENDPOINT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 202, body: deliveryToApi(await webhooks.replayDelivery({ id: params.id }, call)) }),
    }),
  ];
}
