import { createHmac } from 'node:crypto';

/**
 * Deliveries are signed as the Standard Webhooks specification says
 * (https://www.standardwebhooks.com, "Signature scheme"), so a receiver verifies them with a
 * maintained library (`new Webhook(secret).verify(rawBody, headers)` from `standardwebhooks` on npm,
 * and its Python, Go, Java, Ruby, PHP, Rust … siblings) instead of code of ours:
 *
 * - `webhook-id`: the event id (stable across retries and replays);
 * - `webhook-timestamp`: Unix seconds of this attempt;
 * - `webhook-signature`: space-separated `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")>`,
 *   one entry per secret that currently signs (two during a rotation overlap);
 * - the secret is `whsec_` + standard base64 of the key bytes.
 *
 * The signing itself is node:crypto's HMAC (native, on the delivery hot path); the tests verify
 * every header with the `standardwebhooks` library, an implementation that is not ours.
 */
export const HEADER_ID = 'webhook-id';
export const HEADER_TIMESTAMP = 'webhook-timestamp';
export const HEADER_SIGNATURE = 'webhook-signature';
export const SECRET_PREFIX = 'whsec_';

/** The key bytes of a `whsec_…` secret. Node's decoder also reads the unpadded base64url of secrets issued before the standard format. */
export function signingKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook signing secret starts with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  if (key.length < 16) throw new Error('a webhook signing secret holds at least 16 key bytes');
  return key;
}

/** One `v1,<base64>` entry: HMAC-SHA256 over `<id>.<timestamp>.<body>`. */
export function signEntry(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` value: one entry per secret that currently signs, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => signEntry(signingKey(s), id, timestamp, body)).join(' ');
}
