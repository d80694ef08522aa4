import { Migration } from '@mikro-orm/migrations';
/**
 * Transfers (the saga's record), their append-only state history, `reference` idempotency claims,
 * remembered resolve-key results, the AML list, handled rail callbacks, and the outbox/inbox.
 * No foreign keys across services: the ledger's hold and movement are referenced by id only.
 */
export declare class Migration0001TransferInitial extends Migration {
    name: string;
    up(): void;
    down(): void;
}
