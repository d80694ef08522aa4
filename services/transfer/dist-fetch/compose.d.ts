import { type Bus, type Database, type Logger, type OpsServer, type OutboxRelay } from '@wallet/platform';
import { type TransferSettings } from './app/deps.js';
import { Sweeper } from './app/sweeper.js';
import type { TransferConfig } from './config.js';
export declare const TRANSFER_SCHEMA = "transfer";
export interface TransferRuntimeOptions {
    config: TransferConfig;
    /** null: no ops HTTP server (in-process tests). */
    opsPort: number | null;
    opsHost?: string;
    logger: Logger;
}
export interface TransferRuntime {
    db: Database;
    bus: Bus;
    relay: OutboxRelay;
    sweeper: Sweeper;
    grpcPort: number;
    opsPort: number | null;
    ops: OpsServer;
    /** Stops taking calls, finishes in-flight ones, stops the sweeper, flushes the outbox, closes connections. */
    stop(): Promise<void>;
}
export declare function settingsFrom(c: TransferConfig): TransferSettings;
/**
 * The composition root shared by main.ts and testing.ts: database (migrated when asked) → bus and
 * TRANSFERS stream → outbox relay → ledger client and provider adapters → use cases → gRPC server
 * → sweeper → ops endpoints.
 */
export declare function composeTransfer(o: TransferRuntimeOptions): Promise<TransferRuntime>;
