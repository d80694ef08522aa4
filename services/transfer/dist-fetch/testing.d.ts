import { type Database } from '@wallet/platform';
export interface StartedTransfer {
    /** host:port for createAsyncClient. */
    address: string;
    port: number;
    db: Database;
    stop(): Promise<void>;
}
/**
 * The whole transfer service in this process, for integration and end-to-end tests: migrates the
 * database, connects the bus (namespaced streams), talks to the given ledger and provider, and
 * serves gRPC on 127.0.0.1 (port 0 = ephemeral). The same composition as main.ts, without the ops
 * HTTP port. `env` overrides any configuration variable (e.g. short time-outs).
 */
export declare function startTransfer(opts: {
    databaseUrl: string;
    natsUrl?: string;
    namespace: string;
    ledgerAddress: string;
    providerUrl: string;
    callbackBaseUrl?: string;
    port?: number;
    env?: Record<string, string>;
    logLevel?: string;
}): Promise<StartedTransfer>;
