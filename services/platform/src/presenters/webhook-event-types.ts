// The webhook event types, written once: the webhook service checks subscriptions and builds deliveries
// with them, the gateway documents and validates them (docs/webhooks.md).

/** The public webhook event types a company's endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'transfer.created',
  'transfer.completed',
  'transfer.failed',
  'transfer.awaiting_approval',
  'transfer.approved',
  'transfer.rejected',
  'transfer.expired',
  'deposit.created',
  'deposit.paid',
  'deposit.failed',
  'deposit.expired',
  'deposit.reversed',
  'deposit.unassigned',
  'deposit.returned',
  'deposit.return_failed',
  'collect_key.payment_received',
  'collect_key.created',
  'collect_key.deleted',
  'collect_key.state_changed',
  'cobro.created',
  'cobro.partially_paid',
  'cobro.paid',
  'cobro.expired',
  'cobro.cancelled',
  'cobro.payment_reversed',
  'batch.validated',
  'batch.completed',
  'counterparty.verified',
  'counterparty.verification_failed',
  'wallet.moved',
  'schedule.run_started',
  'schedule.run_failed',
  'schedule.run_skipped',
  'wallet.balance_low',
  'wallet.balance_recovered',
  'wallet.balance_high',
  'wallet.balance_normal',
  'company.security_changed',
  'company.policy_changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/**
 * The platform's event types: about the whole installation, not a company (docs/webhooks.md: the
 * reconciliation with the providers). Only platform endpoints (registered by an operator,
 * `POST /admin/webhooks/endpoints`) subscribe to them; a company's endpoint cannot.
 */
export const PLATFORM_EVENT_TYPES = ['reconciliation.completed', 'reconciliation.break'] as const;
export type PlatformEventType = (typeof PLATFORM_EVENT_TYPES)[number];
