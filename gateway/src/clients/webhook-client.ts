import type { Client } from '@grpc/grpc-js';
import { createAsyncClient, type AsyncClient, type MeshTls } from '@wallet/platform';
import { webhookV1 } from '@wallet/proto';

export type WebhookClient = AsyncClient<webhookV1.WebhookServiceServer> & { close(): void; raw: Client };

/** The promise client for the webhook service; every call carries the request's CallContext. */
export function connectWebhook(address: string, deadlineMs: number, tls: MeshTls): WebhookClient {
  return createAsyncClient<webhookV1.WebhookServiceServer>(webhookV1.WebhookServiceClient, address, { deadlineMs, mesh: { tls, server: 'webhook' } });
}
