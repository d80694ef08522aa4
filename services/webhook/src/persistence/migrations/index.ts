import { Migration0001WebhookInitial } from './0001-webhook-initial.js';

/** Every webhook migration, in order. Append only. */
export const webhookMigrations = [Migration0001WebhookInitial];
