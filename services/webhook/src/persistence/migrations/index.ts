import { Migration0001WebhookInitial } from './0001-webhook-initial.js';
import { Migration0002InboxHandledAt } from './0002-inbox-handled-at.js';
import { Migration0003DeliverySourcePosition } from './0003-delivery-source-position.js';

/** Every webhook migration, in order. Append only. */
export const webhookMigrations = [Migration0001WebhookInitial, Migration0002InboxHandledAt, Migration0003DeliverySourcePosition];
