import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { RequestBody } from './types.js';

/** The event types an endpoint can subscribe to (from the document), plus `webhook.ping` (POST …/test). */
export type WebhookEventType = RequestBody<'createWebhookEndpoint'>['events'][number] | 'webhook.ping';

/** A delivery's body (docs/webhooks.md): `data` is the transfer, deposit, collect key, batch… the type names. */
export interface WebhookEvent<D = Record<string, unknown>> {
  /** `evt_…`: the same on every retry and replay (also the `webhook-id` header): deduplicate on it. */
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: D;
}

export { WebhookVerificationError };

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks a delivery with the Standard Webhooks reference library (`standardwebhooks`): the
 * `webhook-signature` HMAC over `webhook-id.webhook-timestamp.body` under the endpoint's `whsec_…`
 * secret (any of the signatures during a rotation overlap), and a timestamp within 5 minutes.
 * Pass the **raw** body, as received, before any JSON parsing. Returns the parsed event; throws
 * WebhookVerificationError when the delivery is not authentic.
 */
export function verifyWebhook<D = Record<string, unknown>>(payload: string | Uint8Array, headers: HeaderBag, secret: string): WebhookEvent<D> {
  const flat: Record<string, string> = {};
  if (typeof Headers !== 'undefined' && headers instanceof Headers) headers.forEach((v, k) => (flat[k.toLowerCase()] = v));
  else
    for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>))
      if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(' ') : v;
  // The library signs text (it turns a Buffer into a string itself): decode bytes as UTF-8, as it would.
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  return new Webhook(secret).verify(body, flat) as WebhookEvent<D>;
}
