import { z } from 'zod';
import { count } from '../../http/schemas.js';
import { WEBHOOK_EVENT_TYPES } from '@wallet/platform';
import { textSchema, queryInt } from '../../http/validation.js';

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
  "const wh = new Webhook(secret); // the endpoint's whsec_… secret, as returned at creation",
  '// throws when the signature does not match or the timestamp is more than 5 minutes off (replays)',
  'const event = wh.verify(rawBody, headers);',
  '```',
].join('\n');

const EventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);
const EventsSchema = z
  .array(EventTypeSchema)
  .min(1, { message: 'Suscriba al menos un tipo de evento.' })
  .max(WEBHOOK_EVENT_TYPES.length * 2)
  .meta({ description: 'Event types to receive.' });
/** A webhook endpoint's URL (companies' and operators' endpoints alike). */
export const WebhookUrlSchema = z
  .string()
  .min(1)
  .max(2048)
  .refine(
    (s) => {
      try {
        const u = new URL(s);
        return u.protocol === 'https:' || u.protocol === 'http:';
      } catch {
        return false;
      }
    },
    { message: 'Debe ser una URL https absoluta.' },
  )
  .meta({
    description:
      'Where deliveries are POSTed. In production: https only, and no loopback, private, link-local, CGNAT or metadata targets (checked when set and again at each delivery).',
    format: 'uri',
  });

export const CreateWebhookEndpointBody = z
  .strictObject({
    url: WebhookUrlSchema,
    events: EventsSchema,
    enabled: z.boolean().optional().meta({ description: 'Default true.' }),
    description: textSchema(1, 200).optional(),
  })
  .meta({ id: 'CreateWebhookEndpointRequest' });

export const UpdateWebhookEndpointBody = z
  .strictObject({
    url: WebhookUrlSchema.optional(),
    events: EventsSchema.optional(),
    enabled: z.boolean().optional(),
    description: textSchema(1, 200).nullable().optional().meta({ description: '`null` clears it.' }),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'Indique al menos un campo.' })
  .meta({ id: 'UpdateWebhookEndpointRequest', minProperties: 1 });

export const RotateSecretBody = z
  .strictObject({
    overlapSeconds: z
      .int()
      .min(0)
      .max(604_800)
      .optional()
      .meta({ description: 'How long the previous secret keeps signing beside the new one: default 86400 (24 h), max 604800 (7 days), 0 = stop at once.' }),
  })
  .meta({ id: 'RotateWebhookSecretRequest' })
  .optional(); // no body: the defaults

export const WebhookEndpointSchema = z
  .object({
    id: z.string().meta({ description: '`we_…`' }),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    previousSecretExpiresAt: isoDate().nullable().meta({ description: 'During a rotation overlap: when the previous secret stops signing.' }),
    createdAt: isoDate(),
    updatedAt: isoDate(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
    .meta({ description: 'The Standard Webhooks signing secret (`whsec_` + base64 of 32 key bytes), shown only in this answer: store it now.' }),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const WebhookEndpointListSchema = z.object({ items: z.array(WebhookEndpointSchema) }).meta({ id: 'WebhookEndpointList' });

export const WebhookDeliverySchema = z
  .object({
    id: z.string().meta({ description: '`whd_…`' }),
    endpointId: z.string(),
    eventId: z.string().meta({ description: 'The `Webhook-Id` header and the body `id`; the same on retries and replays.' }),
    eventType: z.string(),
    resourceId: z.string().nullable(),
    status: z.enum(['PENDING', 'SUCCEEDED', 'FAILED']),
    attempts: count(),
    responseStatus: z.int().min(100).max(599).nullable().meta({ description: "The last attempt's HTTP status (null: no answer)." }),
    latencyMs: count().nullable().meta({ description: "The last attempt's duration." }),
    lastError: z.string().nullable(),
    nextAttemptAt: isoDate().nullable(),
    lastAttemptAt: isoDate().nullable(),
    deliveredAt: isoDate().nullable(),
    replayOf: z.string().nullable(),
    createdAt: isoDate(),
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookDeliveryPageSchema = z
  .object({ items: z.array(WebhookDeliverySchema), nextCursor: z.string().nullable() })
  .meta({ id: 'WebhookDeliveryPage' });

export const ENDPOINT_ID = z.string().regex(/^we_[A-Za-z0-9]{4,64}$/);
export const DELIVERY_ID = z.string().regex(/^whd_[A-Za-z0-9]{4,64}$/);

export const WebhookDeliveriesQuery = z.strictObject({
  endpointId: ENDPOINT_ID.optional(),
  status: z.enum(['PENDING', 'SUCCEEDED', 'FAILED']).optional(),
  cursor: z.string().min(1).max(512).optional(),
  limit: queryInt(1, 200, 50),
});
