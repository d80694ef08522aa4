// @wallet/client: the official TypeScript client of the Payments Wallet API.
export { WalletClient, type WalletClientOptions, type ListQuery } from './client.js';
export { WalletError, WalletApiError, WalletConnectionError, WalletTimeoutError } from './errors.js';
export { Paginator, type Page } from './paging.js';
export type { CallOptions, RetryEvent, RetryOptions } from './transport.js';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent, type WebhookEventType } from './webhooks.js';
export { operations, errorCodes } from './generated/operations.js';
export type * from './types.js';
