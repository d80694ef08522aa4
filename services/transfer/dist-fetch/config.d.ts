import { z } from 'zod';
/** The transfer service's environment, parsed once; every bad variable is named in one error (habit 9). */
export declare const transferEnvSchema: z.ZodObject<{
    NODE_ENV: z.ZodDefault<z.ZodEnum<{
        development: "development";
        test: "test";
        production: "production";
    }>>;
    LOG_LEVEL: z.ZodDefault<z.ZodEnum<{
        fatal: "fatal";
        error: "error";
        warn: "warn";
        info: "info";
        debug: "debug";
        trace: "trace";
        silent: "silent";
    }>>;
    DATABASE_URL: z.ZodString | z.ZodDefault<z.ZodString>;
    NATS_URL: z.ZodDefault<z.ZodString>;
    BUS_NAMESPACE: z.ZodDefault<z.ZodString>;
    NATS_STREAM_REPLICAS: z.ZodPipe<z.ZodDefault<z.ZodCoercedNumber<unknown>>, z.ZodNumber>;
    SERVICE_INSTANCE_ID: z.ZodOptional<z.ZodString>;
    TRANSFER_GRPC_HOST: z.ZodString | z.ZodDefault<z.ZodString>;
    TRANSFER_GRPC_PORT: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    TRANSFER_OPS_PORT: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    TRANSFER_MIGRATE_ON_START: z.ZodOptional<z.ZodEnum<{
        1: "1";
        0: "0";
        true: "true";
        false: "false";
        yes: "yes";
        no: "no";
    }>>;
    TRANSFER_DB_POOL_MAX: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    LEDGER_GRPC_ADDR: z.ZodString | z.ZodDefault<z.ZodString>;
    BREB_DIRECTORY_URL: z.ZodString | z.ZodDefault<z.ZodString>;
    BREB_RAIL_URL: z.ZodString | z.ZodDefault<z.ZodString>;
    ACH_RAIL_URL: z.ZodString | z.ZodDefault<z.ZodString>;
    RAIL_CALLBACK_BASE_URL: z.ZodString | z.ZodDefault<z.ZodString>;
    RAIL_CALLBACK_SECRET: z.ZodOptional<z.ZodString>;
    PROVIDER_HTTP_TIMEOUT_MS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    IDEMPOTENCY_WINDOW_SECONDS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    RAIL_DISPATCH_TIMEOUT_SECONDS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    RAIL_CONFIRM_TIMEOUT_SECONDS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    RAIL_DISPATCH_RETRY_BASE_MS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    RAIL_DISPATCH_RETRY_MAX_MS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    SWEEPER_INTERVAL_MS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    SWEEPER_GRACE_SECONDS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    SWEEPER_BATCH: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    APPROVAL_TTL_SECONDS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    COUNTERPARTY_DAILY_LIMIT_CENTS: z.ZodPipe<z.ZodDefault<z.ZodString>, z.ZodTransform<bigint, string>>;
    COUNTERPARTY_MONTHLY_LIMIT_CENTS: z.ZodPipe<z.ZodDefault<z.ZodString>, z.ZodTransform<bigint, string>>;
}, z.core.$strip>;
export type TransferConfig = Omit<z.infer<typeof transferEnvSchema>, 'TRANSFER_MIGRATE_ON_START' | 'RAIL_CALLBACK_SECRET'> & {
    TRANSFER_MIGRATE_ON_START: boolean;
    RAIL_CALLBACK_SECRET: string;
};
export declare function loadConfig(source: Record<string, string | undefined>): TransferConfig;
